"""``/the-loop status | restart | upgrade | standing list|start|stop|restart <name>``:
the-loop instance itself and its standing sessions, from Slack.

These reach past any one work item, so each family asks its own act — ``instance.command``
and ``standing.command`` — which the room holds only where ``slack.publish`` names it
(``looproom.decide.authorization``); anyone else is told which act is not theirs and why.
Each is one call to the-loop's control plane (``THELOOP_LOOP_API``), the routes its own
CLI and room use: ``GET /api/v1/instance``, ``POST /api/v1/restart {withUpgrade}``,
``GET /api/v1/standing-sessions``, ``POST /api/v1/standing-sessions/control {name,
verb}``. A command that changes something is claimed by its trigger in the plugin's
storage before the call, so a command Slack delivers twice restarts nothing twice; an
answer that never came is said as such, never as a success.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from looproom.decide.authorization import INSTANCE, STANDING, Policy, may, refusal_text
from looproom.durable.bounded import touched
from looproom.durable.state import lock_for
from looproom.http.client import USER_AGENT, HttpResult, http

STATUS, RESTART, UPGRADE, STANDING_WORD = "status", "restart", "upgrade", "standing"
STANDING_VERBS = ("list", "start", "stop", "restart")
INSTANCE_PATH, RESTART_PATH = "/api/v1/instance", "/api/v1/restart"
STANDING_PATH, STANDING_CONTROL_PATH = (
    "/api/v1/standing-sessions",
    "/api/v1/standing-sessions/control",
)
#: Slack shows "failed" after 3 s: the-loop gets at most this long to answer.
TIMEOUT = 2.0
CLAIMS, CLAIM_CAP = "loop-control:claims", 1000
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")

#: ``http(method, url, headers, body, timeout)`` — the stdlib client, or a test's.
Http = Callable[[str, str, Mapping[str, str], Any, float], HttpResult]
#: ``thread_of(ref)`` → a link to the room's thread for ``standing:<name>``, ``""`` if none.
ThreadOf = Callable[[str], str]


class LoopControl:
    """The instance and standing families of ``/the-loop``; one per activation."""

    def __init__(
        self,
        api: str,
        policy: Callable[[], Policy],
        store: MutableMapping[str, Any],
        thread_of: ThreadOf,
        *,
        client: Http = http,
    ) -> None:
        self._api, self._policy, self._store = api.rstrip("/"), policy, store
        self._thread_of, self._http = thread_of, client
        self._lock = lock_for(store)

    def instance_status(self, member: str) -> str:
        """The-loop instance: its name, mode and what it manages — or why not shown."""
        refused = self._refusal(member, INSTANCE)
        if refused:
            return refused
        answer = self._call("GET", INSTANCE_PATH)
        data = answer.json() if answer.status == 200 else None
        if not isinstance(data, Mapping):
            return f"the-loop instance: {self._trouble(answer)}"
        scope = data.get("scope") if isinstance(data.get("scope"), Mapping) else {}
        managed = data.get("managed") if isinstance(data.get("managed"), list) else []
        refs = [str(row.get("ref")) for row in managed if isinstance(row, Mapping)]
        shown = ", ".join(f"`{ref}`" for ref in refs[:10]) + (" …" if len(refs) > 10 else "")
        name = str(data.get("name") or "unnamed")
        mode = str(scope.get("mode") or "open")
        return f"*the-loop instance* `{name}` (mode: {mode}) manages {len(refs)} work item(s)" + (
            f": {shown}" if refs else ""
        )

    def restart(self, member: str, trigger: str, *, upgrade: bool) -> str:
        """``restart`` / ``upgrade``: the-loop schedules its own restart (and upgrade)."""
        refused = self._refusal(member, INSTANCE)
        if refused:
            return refused
        what = "upgrade" if upgrade else "restart"
        if not self._claim(f"{what}:{trigger}"):
            return f"That `{what}` was asked already; nothing more was sent."
        answer = self._call("POST", RESTART_PATH, {"withUpgrade": upgrade})
        if 200 <= answer.status < 300:
            data = answer.json() if isinstance(answer.json(), Mapping) else {}
            pid = f" (pid {data['pid']})" if data.get("pid") else ""
            return (
                f"🔁 the-loop scheduled its {what}{pid}: its services stop and start again "
                "in a moment — `/the-loop status` shows when it is back."
            )
        return f"the-loop's {what} was not confirmed: {self._trouble(answer)}"

    def standing(self, member: str, words: str, trigger: str) -> str:
        """``standing list`` · ``standing start|stop|restart <name>``."""
        refused = self._refusal(member, STANDING)
        if refused:
            return refused
        parts = words.split()
        verb = parts[0].lower() if parts else ""
        if verb not in STANDING_VERBS:
            return "`standing` takes a verb: `list`, or `start|stop|restart <name>`."
        if verb == "list":
            if len(parts) != 1:
                return "`standing list` takes nothing more."
            answer = self._call("GET", STANDING_PATH)
            rows = answer.json() if answer.status == 200 else None
            if not isinstance(rows, list):
                return f"the-loop's standing sessions: {self._trouble(answer)}"
            return self._rows(rows)
        if len(parts) != 2 or not _NAME.match(parts[1]):
            return (
                f"`standing {verb}` takes one session name (lowercase letters, digits and "
                "hyphens, up to 40)."
            )
        name = parts[1]
        if not self._claim(f"standing-{verb}:{name}:{trigger}"):
            return f"That `standing {verb} {name}` was asked already; nothing more was sent."
        answer = self._call("POST", STANDING_CONTROL_PATH, {"name": name, "verb": verb})
        data = answer.json()
        if 200 <= answer.status < 300 and isinstance(data, Mapping):
            sessions = data.get("sessions") if isinstance(data.get("sessions"), list) else []
            return self._rows(sessions) if sessions else f"`standing {verb} {name}`: done."
        return f"`standing {verb} {name}` was not confirmed: {self._trouble(answer)}"

    # -- the steps -----------------------------------------------------------------------

    def _refusal(self, member: str, act: str) -> str:
        policy = self._policy()
        if not may(member, act, policy):
            return refusal_text(member, act, policy)
        if not self._api:
            return (
                "the-loop's control plane is not configured here: set `THELOOP_LOOP_API` "
                "to the-loop's API address."
            )
        return ""

    def _claim(self, key: str) -> bool:
        """Claim ``key`` durably; False when it was claimed before (a redelivery)."""
        with self._lock:
            claims = dict(self._store.get(CLAIMS) or {})
            if key in claims:
                return False
            self._store[CLAIMS] = touched(claims, key, True, CLAIM_CAP)
            return True

    def _call(self, method: str, path: str, body: Any = None) -> HttpResult:
        return self._http(method, self._api + path, {"User-Agent": USER_AGENT}, body, TIMEOUT)

    def _rows(self, rows: Sequence[Any]) -> str:
        if not rows:
            return "No standing sessions: none declared, none recorded."
        lines = []
        for row in rows:
            if not isinstance(row, Mapping):
                continue
            name = str(row.get("name") or "?")
            if "outcome" in row:
                detail = f" — {row['detail']}" if row.get("detail") else ""
                state = f"{row['outcome']}{detail}"
            else:
                kind = "declared" if row.get("declared") else "created"
                state = f"{'running' if row.get('running') else 'stopped'} ({kind})"
            thread = self._thread_of(f"standing:{name}")
            lines.append(f"• `{name}`: {state}" + (f" — <{thread}|its thread>" if thread else ""))
        return "*Standing sessions*\n" + "\n".join(lines)

    @staticmethod
    def _trouble(answer: HttpResult) -> str:
        """What went wrong, in the-loop's own short words where it gave some."""
        if answer.status == 0:
            if answer.sent:
                return (
                    f"the-loop did not answer in time ({answer.error}) — it may have acted; "
                    "look with `/the-loop status` before asking again."
                )
            return f"the-loop cannot be reached ({answer.error})."
        data = answer.json()
        detail = data.get("detail") if isinstance(data, Mapping) else ""
        said = f": {' '.join(str(detail).split())[:200]}" if detail else ""
        return f"the-loop answered {answer.status}{said}."
