"""``/the-loop status | restart | upgrade | standing list|start|stop|restart <name>``:
the-loop instance itself and its standing sessions, from Slack.

These reach past any one work item, so each family asks its own act — ``instance.command``
and ``standing.command`` — which the room holds only where ``slack.publish`` names it
(``looproom.decide.authorization``); anyone else is told which act is not theirs and why.
Each is one call to the-loop's control plane (``THELOOP_LOOP_API``, or with ``instances:``
the one the command names or the room belongs to — ``looproom.control.plane_choice``), the
routes its own CLI and room use: ``GET /api/v1/instance`` (with ``/health``, ``/daemons``
and ``/standing-sessions``: ``looproom.control.instance_report``), ``POST /api/v1/restart
{withUpgrade}``, ``GET /api/v1/standing-sessions``, ``POST
/api/v1/standing-sessions/control {name, verb}``. A command that changes something is
claimed by its trigger in the plugin's storage before the call, so a command Slack
delivers twice restarts nothing twice; an answer that never came is said as such, never as
a success.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from looproom.clients.the_loop import LoopApi
from looproom.control import instance_report
from looproom.control.plane_choice import Plane, Planes
from looproom.decide.authorization import AccessPolicy, may, refusal_text
from looproom.durable.bounded import claimed_once
from looproom.durable.state import lock_for
from looproom.http.client import HttpResult
from looproom.loop_log.channel import ChannelLog
from looproom.settings.grants import INSTANCE, STANDING

STATUS, RESTART, UPGRADE, STANDING_WORD = "status", "restart", "upgrade", "standing"
STANDING_VERBS = ("list", "start", "stop", "restart")
#: The command families as the-loop's own slash command names them in its records.
INSTANCE_FAMILY, STANDING_FAMILY = "instance", "standing"
#: Slack shows "failed" after 3 s: the-loop gets at most this long to answer.
TIMEOUT = 2.0
CLAIMS, CLAIM_CAP = "loop-control:claims", 1000
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")

#: ``thread_of(ref)`` → a link to the room's thread for ``standing:<name>``, ``""`` if none.
ThreadOf = Callable[[str], str]


class LoopControl:
    """The instance and standing families of ``/the-loop``; one per activation."""

    def __init__(
        self,
        api: str | Planes,
        policy: Callable[[], AccessPolicy],
        store: MutableMapping[str, Any],
        thread_of: ThreadOf,
        *,
        split: Callable[[], str] = lambda: "",
        records: ChannelLog | None = None,
    ) -> None:
        """``api``: ``THELOOP_LOOP_API``, or the planes of ``instances:``; ``split``: this
        bot's own listener's split check, in words (``""`` before it ran); ``records``
        keeps each command sent and what came of it, for the-loop's event log."""
        self._planes = api if isinstance(api, Planes) else Planes.single(api)
        self._policy, self._store = policy, store
        self._thread_of, self._split = thread_of, split
        self._lock = lock_for(store)
        self._records = records if records is not None else ChannelLog(None)

    @property
    def planes(self) -> Planes:
        return self._planes

    def instance_status(self, member: str, name: str = "", context: Sequence[str] = ()) -> str:
        """The-loop instance: its name, mode and what it manages — or why not shown.
        With ``instances:`` and none named, each instance's line (asked at once: Slack
        waits 3 s for the whole answer)."""
        refused = self._refusal(member, INSTANCE)
        if refused:
            return refused
        split = self._split()
        said = f"\n• slack (this bot's listener): {split}" if split else ""
        if name or not self._planes.named:
            plane = self._planes.pick(name, context)
            return self._instance_line(plane) + said if isinstance(plane, Plane) else plane
        with ThreadPoolExecutor(len(self._planes.all)) as pool:
            return "\n".join(pool.map(self._instance_line, self._planes.all)) + said

    def _instance_line(self, plane: Plane) -> str:
        """The instance as ``the-loop status`` reports it: its four routes, asked at once."""
        api = _api(plane)
        asks = (api.instance, api.health, api.daemons, api.standing_sessions)
        with ThreadPoolExecutor(len(asks)) as pool:
            instance, health, daemons, standing = list(pool.map(lambda ask: ask(), asks))
        data = instance.value
        if data is None:
            return f"{_on(plane)}the-loop instance: {self._trouble(instance.answer)}"
        health, daemons, standing = health.value, daemons.value, standing.value
        return instance_report.report(_on(plane), data, health, daemons, standing)

    def restart(
        self,
        member: str,
        trigger: str,
        *,
        upgrade: bool,
        name: str = "",
        context: Sequence[str] = (),
    ) -> str:
        """``restart`` / ``upgrade``: the-loop schedules its own restart (and upgrade) —
        the instance ``name`` names, or the one ``context`` belongs to."""
        refused = self._refusal(
            member, INSTANCE, f"{'upgrade' if upgrade else 'restart'}:{trigger}"
        )
        if refused:
            return refused
        plane = self._planes.pick(name, context)
        if not isinstance(plane, Plane):
            return plane
        what = "upgrade" if upgrade else "restart"
        cause = f"{what}:{trigger}" + (f"@{plane.name}" if plane.name else "")
        if not self._claim(cause):
            return f"That `{what}` was asked already; nothing more was sent."
        target = {"instance": plane.name} if plane.name else {}
        self._records.command_received(cause, member, INSTANCE_FAMILY, what, target)
        read = _api(plane).restart(upgrade=upgrade)
        answer = read.answer
        done = 200 <= answer.status < 300
        self._records.command_completed(cause, member, INSTANCE_FAMILY, what, target, done)
        if done:
            data = read.value or {}
            pid = f" (pid {data['pid']})" if data.get("pid") else ""
            return (
                f"🔁 {_on(plane)}the-loop scheduled its {what}{pid}: its services stop and "
                "start again in a moment — `/the-loop status` shows when it is back."
            )
        return f"{_on(plane)}the-loop's {what} was not confirmed: {self._trouble(answer)}"

    def standing(self, member: str, words: str, trigger: str, context: Sequence[str] = ()) -> str:
        """``standing list`` · ``standing start|stop|restart <name>``, each with the
        instance as an optional last word. ``list`` with ``instances:`` and none named or
        implied lists every instance's."""
        refused = self._refusal(member, STANDING, f"standing:{trigger}")
        if refused:
            return refused
        parts, instance = self._planes.split(words.split())
        verb = parts[0].lower() if parts else ""
        if verb not in STANDING_VERBS:
            return "`standing` takes a verb: `list`, or `start|stop|restart <name>`."
        if verb == "list":
            if len(parts) != 1:
                return "`standing list` takes nothing more" + (
                    f" than the instance ({', '.join(self._planes.names())})."
                    if self._planes.named
                    else "."
                )
            plane = self._planes.pick(instance, context)
            planes = [plane] if isinstance(plane, Plane) else list(self._planes.all)
            with ThreadPoolExecutor(len(planes)) as pool:
                return "\n".join(pool.map(self._standing_list, planes))
        if len(parts) != 2 or not _NAME.match(parts[1]):
            return (
                f"`standing {verb}` takes one session name (lowercase letters, digits and "
                "hyphens, up to 40)."
            )
        plane = self._planes.pick(instance, context)
        if not isinstance(plane, Plane):
            return plane
        return self._standing_control(plane, verb, parts[1], trigger, member)

    def _standing_list(self, plane: Plane) -> str:
        read = _api(plane).standing_sessions()
        rows = read.value
        if rows is None:
            return f"{_on(plane)}the-loop's standing sessions: {self._trouble(read.answer)}"
        return _on(plane) + self._rows(rows)

    def _standing_control(
        self, plane: Plane, verb: str, name: str, trigger: str, member: str
    ) -> str:
        at = f"@{plane.name}" if plane.name else ""
        cause = f"standing-{verb}:{name}:{trigger}{at}"
        if not self._claim(cause):
            return f"That `standing {verb} {name}` was asked already; nothing more was sent."
        target = {"standing": name, **({"instance": plane.name} if plane.name else {})}
        self._records.command_received(cause, member, STANDING_FAMILY, verb, target)
        read = _api(plane).standing_control(name, verb)
        answer, data = read.answer, read.value
        done = data is not None
        self._records.command_completed(cause, member, STANDING_FAMILY, verb, target, done)
        if data is not None:
            sessions = data.get("sessions") if isinstance(data.get("sessions"), list) else []
            said = self._rows(sessions) if sessions else f"`standing {verb} {name}`: done."
            return _on(plane) + said
        return f"{_on(plane)}`standing {verb} {name}` was not confirmed: {self._trouble(answer)}"

    # -- the steps -----------------------------------------------------------------------

    def _refusal(self, member: str, act: str, cause: str = "") -> str:
        """Why ``member`` may not, or ``""``; a refused command (``cause``) is kept too."""
        policy = self._policy()
        if not may(member, act, policy):
            if cause:
                self._records.dropped(cause, "unauthorized", member, "", "", "")
            return refusal_text(member, act, policy)
        if not self._planes.all:
            return (
                "the-loop's control plane is not configured here: set `THELOOP_LOOP_API` "
                "to the-loop's API address (or each instance's `api` under `instances:`)."
            )
        return ""

    def _claim(self, key: str) -> bool:
        """Claim ``key`` durably; False when it was claimed before (a redelivery)."""
        with self._lock:
            return claimed_once(self._store, CLAIMS, key, True, CLAIM_CAP)

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
        if answer.moved_to:  # another origin, or a method it would change: not followed
            return f"the-loop answered {answer.status}, {answer.error}; nothing was sent there."
        if answer.over_cap:
            return f"the-loop's {answer.error} — it may have acted; look before asking again."
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


def _api(plane: Plane) -> LoopApi:
    """The control plane of ``plane``, with the time a slash command can wait."""
    return LoopApi(plane.api, plane.token, timeout=TIMEOUT)


def _on(plane: Plane) -> str:
    """Which instance a line is about, when there are named ones."""
    return f"*{plane.name}* · " if plane.name else ""
