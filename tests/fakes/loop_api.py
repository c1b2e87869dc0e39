"""A loopback fake of the-loop's control plane: the two routes the relay calls.

Like the-loop 20.10.2 (``the_loop/api/routes.py`` and ``core``): ``POST
/api/v1/sessions/reply`` needs ``ref`` and ``text`` (422 otherwise, FastAPI's shape), a
ref with no registered session is 404 and a paused one 400 (``detail`` says why), and
each accepted reply is delivered — the-loop does **not** deduplicate, so a retried POST
delivers twice — except while its tmux session is busy: then it answers 200 with
``"delivered": false`` and delivers nothing ("the caller may retry"; ``busy`` counts
them). ``POST /api/v1/graph/skip`` needs ``repo``, ``workItem``, ``nodes`` and
``reason``; nodes outside the graph's skip vocabulary come back in ``rejected`` as
``{"token", "why"}`` objects, as the-loop's graph command prints them. ``GET
/api/v1/health`` answers ``{"status": "ok"}``.

Each reply typed into a session is logged as the-loop logs it — a ``session.reply_sent``
record with its time (milliseconds, ``Z``), ``work_item`` and ``actor`` — and ``GET
/api/v1/events`` answers the last ``limit`` records matching ``type``, ``workItem`` and
``since`` (compared as strings, as the-loop does), oldest first. ``GET /api/v1/work-items``
lists the portable records in ``work_items`` ordered by ref, as the-loop's core does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from tests.fakes.loopback import LoopbackServer, Request

REPLY, SKIP, EVENTS = "/api/v1/sessions/reply", "/api/v1/graph/skip", "/api/v1/events"
WORK_ITEMS = "/api/v1/work-items"
_REQUIRED = {REPLY: ("ref", "text"), SKIP: ("repo", "workItem", "nodes", "reason")}
#: The default work-item loop's selectable nodes — what a skip may name.
SKIPPABLE = frozenset(
    {"design", "test-planning", "evidence", "capability-docs", "security-review", "critic-review"}
)


class FakeLoop(LoopbackServer):
    """Sessions that exist (``ref`` → paused?), and what the-loop was told."""

    def __init__(self, sessions: dict[str, bool] | None = None) -> None:
        super().__init__()
        self.sessions = sessions if sessions is not None else {"github:acme/api#7": False}
        self.replies: list[dict[str, Any]] = []
        self.skips: list[dict[str, Any]] = []
        self.busy = 0  # replies answered "delivered": false before one is delivered
        self.events: list[dict[str, Any]] = []  # the event log: one record per reply typed
        self.clock: Callable[[], float] = time.time  # the-loop's clock, for the log's times
        #: ``GET /api/v1/work-items``: each work item's portable record, by ref.
        self.work_items: dict[str, dict[str, Any]] = {}

    def route(self, request: Request) -> tuple[int, dict[str, str], Any]:
        if request.method == "GET" and request.path == "/api/v1/health":
            return 200, {}, {"status": "ok"}
        if request.method == "GET" and request.path == EVENTS:
            return 200, {}, self._events(request.query)
        if request.method == "GET" and request.path == WORK_ITEMS:
            return 200, {}, [self.work_items[ref] for ref in sorted(self.work_items)]
        required = _REQUIRED.get(request.path)
        if required is None or request.method != "POST":
            return 404, {}, {"detail": "Not Found"}
        body = request.body if isinstance(request.body, dict) else {}
        missing = [name for name in required if name not in body]
        if missing:
            detail = [{"loc": ["body", name], "msg": "Field required"} for name in missing]
            return 422, {}, {"detail": detail}
        return self._reply(body) if request.path == REPLY else self._skip(body)

    def _reply(self, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        ref = str(body["ref"])
        if ref not in self.sessions:
            return 404, {}, {"detail": f"no session registered for {ref}"}
        if self.sessions[ref]:
            return 400, {}, {"detail": f"the session for {ref} is paused"}
        if self.busy:
            self.busy -= 1
            return 200, {}, {"workItem": ref, "delivered": False, "exitCode": 1}
        self.replies.append(body)
        record = {
            "ts": _stamp(self.clock()),
            "source": "api",
            "event": "session.reply_sent",
            "level": "info",
        }
        record.update({"work_item": ref, "actor": body.get("actor") or None})
        self.events.append({k: v for k, v in record.items() if v is not None})
        return 200, {}, {"workItem": ref, "delivered": True, "exitCode": 0}

    def _events(self, query: dict[str, str]) -> list[dict[str, Any]]:
        wanted = [
            record
            for record in self.events
            if record["event"] == query.get("type", record["event"])
            and record.get("work_item") == query.get("workItem", record.get("work_item"))
            and record["ts"] >= query.get("since", "")
        ]
        limit = int(query.get("limit") or 50)
        return wanted[-limit:] if limit else wanted

    def _skip(self, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        nodes = [str(n) for n in body["nodes"]]
        declared = [n for n in nodes if n in SKIPPABLE]
        self.skips.append(body)
        answer = {
            "workItem": body["workItem"],
            "declared": declared,
            "rejected": [
                {"token": n, "why": "not a selectable node of this loop"}
                for n in nodes
                if n not in SKIPPABLE
            ],
            "reason": body["reason"],
            "warnings": [],
        }
        return 200, {}, answer


def _stamp(at: float) -> str:
    """A time as the-loop's event log writes it: milliseconds, ``Z``."""
    now = datetime.fromtimestamp(at, tz=timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
