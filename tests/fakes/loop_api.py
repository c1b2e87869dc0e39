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

The instance and its standing sessions, as the-loop's ``api/routes.py`` and ``core``
answer them: ``GET /api/v1/instance`` (``{name, scope, managed}``), ``POST
/api/v1/restart`` (``{withUpgrade}``; it schedules, answering ``{scheduled, pid,
withUpgrade}``, and ``restarts`` records each), ``GET /api/v1/standing-sessions`` (a row
per session), ``POST /api/v1/standing-sessions/control`` (``{name, verb}``: an unknown
verb is 400, an unknown name 404; ``{sessions: [{name, outcome}], ok}``) and ``POST
/api/v1/standing-sessions/say`` (``{name, text, actor}``: a session not running is 404;
``said`` records each delivery).
"""

from __future__ import annotations

import importlib.metadata
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from tests.fakes.loopback import LoopbackServer, Request

REPLY, SKIP, EVENTS = "/api/v1/sessions/reply", "/api/v1/graph/skip", "/api/v1/events"
WORK_ITEMS = "/api/v1/work-items"
INSTANCE, RESTART = "/api/v1/instance", "/api/v1/restart"
HEALTH, DAEMONS = "/api/v1/health", "/api/v1/daemons"
STANDING, STANDING_CONTROL = "/api/v1/standing-sessions", "/api/v1/standing-sessions/control"
STANDING_SAY = "/api/v1/standing-sessions/say"
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
        self.name = "loop-one"
        self.restarts: list[dict[str, Any]] = []
        #: Standing sessions by name → running?; what was said to them.
        self.standing: dict[str, bool] = {}
        self.said: list[dict[str, Any]] = []
        #: the-loop's own CLI config (its ``state.root``, which services it enables): with
        #: one, ``/health`` and ``/daemons`` are answered by the-loop's own lifecycle code
        #: over that state root, as its control plane answers them.
        self.loop_config: dict[str, Any] | None = None

    def route(self, request: Request) -> tuple[int, dict[str, str], Any]:
        if request.method == "GET" and request.path in (HEALTH, DAEMONS):
            return self._lifecycle(request.path)
        if request.method == "GET" and request.path == EVENTS:
            return 200, {}, self._events(request.query)
        if request.method == "GET" and request.path == WORK_ITEMS:
            return 200, {}, [self.work_items[ref] for ref in sorted(self.work_items)]
        own = self._instance_and_standing(request)
        if own is not None:
            return own
        required = _REQUIRED.get(request.path)
        if required is None or request.method != "POST":
            return 404, {}, {"detail": "Not Found"}
        body = request.body if isinstance(request.body, dict) else {}
        missing = [name for name in required if name not in body]
        if missing:
            detail = [{"loc": ["body", name], "msg": "Field required"} for name in missing]
            return 422, {}, {"detail": detail}
        return self._reply(body) if request.path == REPLY else self._skip(body)

    def _lifecycle(self, path: str) -> tuple[int, dict[str, str], Any]:
        """``/health`` and ``/daemons`` as the-loop's facade builds them (its ``ingresses``,
        state root, each daemon's pid); without a config, a bare health and no daemons
        route, as a the-loop older than them answers."""
        if self.loop_config is None:
            return (
                (200, {}, {"status": "ok"})
                if path == HEALTH
                else (404, {}, {"detail": "Not Found"})
            )
        from the_loop.core import daemons, lifecycle
        from the_loop.state import layout_from_config

        config = self.loop_config
        if path == DAEMONS:
            return 200, {}, [daemons.daemon_status(name, config) for name in daemons.DAEMONS]
        ingresses = lifecycle.ingress_health(config)
        degraded = any(row["enabled"] and not row["running"] for row in ingresses)
        version = importlib.metadata.version("the-loopy-one")
        health = {"status": "degraded" if degraded else "ok", "version": version}
        root = str(layout_from_config(config).root)
        return 200, {}, {**health, "configPath": "", "stateRoot": root, "ingresses": ingresses}

    def _instance_and_standing(self, request: Request) -> tuple[int, dict[str, str], Any] | None:
        """The instance's and the standing sessions' routes; ``None`` for any other."""
        body = request.body if isinstance(request.body, dict) else {}
        route = (request.method, request.path)
        if route == ("GET", INSTANCE):
            managed = [{"ref": ref, "sources": ["session"]} for ref in sorted(self.sessions)]
            return 200, {}, {"name": self.name, "scope": {"mode": "open"}, "managed": managed}
        if route == ("POST", RESTART):
            upgrade = body.get("withUpgrade", False)
            if not isinstance(upgrade, bool):
                return 422, {}, {"detail": [{"loc": ["body", "withUpgrade"], "msg": "bool"}]}
            self.restarts.append(body)
            return 200, {}, {"scheduled": True, "pid": 4242, "withUpgrade": upgrade}
        if route == ("GET", STANDING):
            rows = [
                {"name": name, "declared": True, "running": running, "ref": f"standing:{name}"}
                for name, running in sorted(self.standing.items())
            ]
            return 200, {}, rows
        if route == ("POST", STANDING_CONTROL):
            return self._standing_control(body)
        if route == ("POST", STANDING_SAY):
            missing = [name for name in ("name", "text") if name not in body]
            if missing:
                detail = [{"loc": ["body", name], "msg": "Field required"} for name in missing]
                return 422, {}, {"detail": detail}
            if not self.standing.get(str(body["name"])):
                return 404, {}, {"detail": f"standing session {body['name']!r} is not running"}
            self.said.append(body)
            return 200, {}, {"name": body["name"], "delivered": True, "exitCode": 0}
        return None

    def _standing_control(self, body: dict[str, Any]) -> tuple[int, dict[str, str], Any]:
        name, verb = str(body.get("name") or ""), str(body.get("verb") or "")
        if verb not in ("start", "stop", "restart"):
            return 400, {}, {"detail": f"unknown verb {verb!r}: start, stop or restart"}
        if name not in self.standing:
            return 404, {}, {"detail": f"no standing session {name!r} is declared"}
        outcome = {"start": "started", "stop": "stopped", "restart": "restarted"}[verb]
        if verb == "start" and self.standing[name]:
            outcome = "already-running"
        self.standing[name] = verb != "stop"
        return 200, {}, {"sessions": [{"name": name, "outcome": outcome}], "ok": True}

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
