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
"""

from __future__ import annotations

from typing import Any

from tests.fakes.loopback import LoopbackServer, Request

REPLY, SKIP = "/api/v1/sessions/reply", "/api/v1/graph/skip"
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

    def route(self, request: Request) -> tuple[int, dict[str, str], Any]:
        if request.method == "GET" and request.path == "/api/v1/health":
            return 200, {}, {"status": "ok"}
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
        return 200, {}, {"workItem": ref, "delivered": True, "exitCode": 0}

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
