"""The answers to ``/the-loop``: help, status, a verb on a work item, a new work item.

Each is answered ephemerally within Slack's 3 s. A verb goes through the decision desk as
an addressed typed command — the same judging, grants and relay as one typed in a thread
— keyed by the command's trigger so a redelivery records it once; its 👀 is the answer,
and its ✅ lands in the work item's thread in that room when the room has one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Protocol

from looproom import workitem
from looproom.control import item_status
from looproom.control.loop_control import LoopControl
from looproom.control.plane_choice import Plane
from looproom.decide import grammar, kinds
from looproom.decide.authorization import AccessPolicy
from looproom.decide.desk import Desk
from looproom.decide.judging import Received
from looproom.decide.verdict import ADMITTED, REFUSED
from looproom.from_slack import slash
from looproom.from_slack.in_time import within
from looproom.room.readers import Asker, Readers
from looproom.room.routing import BindingBook

#: Said when the-loop is too slow for Slack's 3 s (``looproom.from_slack.in_time``).
_STATUS_LATE = "the-loop did not answer in time for Slack: ask `/the-loop status` again."
_LOOP_LATE = (
    "Asked the-loop, which did not answer in time for Slack: whether it took the command, "
    "`/the-loop status` says in a moment."
)
#: ``room_facts(channel)`` → (the one work item bound to it, its one repository).
RoomFacts = Callable[[str], tuple[str, str]]


class KickoffOpener(Protocol):
    """What opens a new work item from ``/the-loop new <title>`` (``looproom.kickoff``)."""

    def from_slash(self, command: slash.Slash) -> dict[str, Any]: ...


class SlashDesk:
    """``/the-loop``'s answers, over the desk and the room's memory."""

    def __init__(
        self,
        desk: Desk,
        book: BindingBook,
        policy: Callable[[], AccessPolicy],
        room_facts: RoomFacts,
        *,
        loop_api: str = "",
        kickoff: KickoffOpener | None = None,
        control: LoopControl | None = None,
        mine: Callable[[str], str] | None = None,
        readers: Readers | None = None,
    ) -> None:
        """``control`` answers the instance and standing families (``restart``, ``upgrade``,
        ``standing …``, and the instance's part of ``status``)."""
        self._desk, self._book, self._policy = desk, book, policy
        self._room_facts, self._loop_api, self.kickoff = room_facts, loop_api, kickoff
        self._control = control
        #: ``mine``: what waits on a member (``looproom.attention``).
        self._mine = mine
        #: Who may read about a work item (``looproom.room.readers``); None: no Slack rooms.
        self._readers = readers

    def answer(self, payload: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ephemeral answer to a slash-command payload; ``None`` when it is not ours."""
        command = slash.read(payload)
        if command is None:
            return None
        own = tuple(self._policy().destinations.keywords.custom)
        if command.action == slash.HELP:
            return slash.ephemeral(slash.help_text(own, self._policy().granted))
        if command.action == slash.STATUS:
            return slash.ephemeral(within(lambda: self._status(command), _STATUS_LATE))
        if command.action == slash.MINE and self._mine is not None:
            return slash.ephemeral(self._mine(command.member))
        if command.action in (slash.RESTART, slash.UPGRADE, slash.STANDING):
            return slash.ephemeral(within(lambda: self._loop(command), _LOOP_LATE))
        if command.action == slash.NEW:
            if self.kickoff is None:
                return slash.ephemeral(
                    "New work items are not opened from this room: no `slack.kickoff` is "
                    "configured (and a GitHub token is needed). See docs/decisions.md."
                )
            return self.kickoff.from_slash(command)
        keywords = self._policy().destinations.keywords
        renamed = keywords.by_last_word(command.action)
        if renamed and not slash.is_verb(command.action):
            # ``go`` where start is ``loop go``: the-loop's slash command reads it so.
            command = replace(command, action=renamed)
        own_word = bool(keywords.own(command.action))
        if slash.is_verb(command.action) or own_word:
            return slash.ephemeral(self.verb(slash.numbered(command, own_word)))
        return slash.ephemeral(slash.unknown_text(command.action, own))

    def _status(self, command: slash.Slash) -> str:
        """``status``: the-loop instance (for who holds ``instance.command``) — each one
        with ``instances:`` — then the work items the room follows; ``status <work item>``
        for one of them, ``status <instance>`` for that instance."""
        only = command.rest.split(" ", 1)[0]
        control = self._control
        if control is not None and only and only in control.planes.names():
            return control.instance_status(command.member, only)
        only = slash.work_item_word(only)
        if only or control is None:
            return self.status(only, command.member, self._room_facts(command.channel)[1])
        # Both asked at once: Slack waits 3 s for the whole answer, and each has its timeout.
        with ThreadPoolExecutor(2) as pool:
            instances = pool.submit(control.instance_status, command.member)
            items = pool.submit(self.status, "", command.member)
            return f"{instances.result()}\n\n{items.result()}"

    def _loop(self, command: slash.Slash) -> str:
        """``restart``, ``upgrade``, ``standing …``: the-loop itself, when configured —
        with ``instances:``, the one named last, or the one this room belongs to."""
        if self._control is None:
            return "the-loop's control plane is not configured here (`THELOOP_LOOP_API`)."
        trigger = command.trigger or str(time.time_ns())
        context = self._context(command.channel)
        if command.action == slash.STANDING:
            return self._control.standing(command.member, command.rest, trigger, context)
        rest, name = self._control.planes.split(command.rest.split())
        if rest:
            return f"`{command.action}` takes nothing more{self._but_instance()}; nothing was sent."
        upgrade = command.action == slash.UPGRADE
        return self._control.restart(
            command.member, trigger, upgrade=upgrade, name=name, context=context
        )

    def _context(self, channel: str) -> tuple[str, ...]:
        """What the room is bound to, for the instance that owns it: its one work item,
        then its one repository."""
        room_item, repository = self._room_facts(channel)
        whole_repository = f"github:{repository}" if repository else ""
        return tuple(ref for ref in (room_item, whole_repository) if ref)

    def _but_instance(self) -> str:
        names = self._control.planes.names() if self._control is not None else []
        return f" than the instance ({', '.join(names)})" if names else ""

    def status(self, only: str, member: str, repository: str = "") -> str:
        """``status [<work item>]``: the room's memory, and the-loop's when configured;
        ``#7`` in ``repository`` — only of the work items ``member`` could read in Slack
        (its answer is theirs alone)."""
        ref = ""
        asker = Asker(member)
        if only:
            named = workitem.resolve_typed(only, repository) or workitem.parse(only)
            if named is None:
                return f"`{only}` is not a work item ref like `github:owner/repo#7`."
            ref = str(named)
            refused = self._readers.refusal(ref, asker) if self._readers is not None else ""
            if refused:
                return refused
        threads = [(thread.work_item, thread.channel) for thread in self._book.threads()]
        items = item_status.gather(self._desk.memory.items(), threads)
        if self._readers is not None:
            readable = self._readers.readable(asker)
            items = [item for item in items if readable(item.ref)]
        records, problem = self._loop_records()
        return item_status.status_text(items, self._policy(), records, problem, only=ref)

    def _loop_records(self) -> tuple[dict[str, Mapping[str, Any]], str]:
        """the-loop's work items: from every instance's control plane, asked at once."""
        planes = self._control.planes.all if self._control is not None else ()
        if not planes:
            return item_status.loop_records(self._loop_api)
        with ThreadPoolExecutor(len(planes)) as pool:
            found = list(pool.map(_records_of, planes))
        records = {ref: row for rows, _problem in found for ref, row in rows.items()}
        return records, "; ".join(problem for _rows, problem in found if problem)

    def verb(self, command: slash.Slash) -> str:
        """``<verb> <work item> [words]``: judged and recorded as a typed command."""
        other = _other_tracker(command.rest)
        if other:
            return self._other(command, other)
        text = f"{command.action} {command.rest}".strip()
        room_item, repository = self._room_facts(command.channel)
        # What it names is bounded by the desk's judging, as on every path
        # (``looproom.decide.bounds``): who may not use the verb is told that first.
        named = _named(text, repository, self._policy())
        return self._judged(command, text, named or room_item, room_item, repository)

    def _other(self, command: slash.Slash, ref: str) -> str:
        """Another tracker's work item named first (``jira:OPS-12``): the verb is judged
        as if typed in that work item's thread — the same grants, and the same relay (to
        its Jira ticket where the Jira ledger is configured; else refused, saying why)."""
        jira = self._policy().destinations.jira
        named = workitem.parse(ref)
        short = named is not None and named.tracker == "jira" and "/" not in named.path
        if jira is not None and named is not None and short:
            ref = f"jira:{jira.site}/{named.path}"  # the form people type: the site's ticket
        words = command.rest.split(None, 1)[1:]
        text = " ".join([command.action, *words])
        return self._judged(command, text, ref, ref, "")

    def _judged(
        self, command: slash.Slash, text: str, work_item: str, room_item: str, repository: str
    ) -> str:
        thread = self._book.thread(work_item, command.channel) if work_item else None
        said = Received(
            command.member,
            text,
            command.channel,
            "",  # no message of its own: nothing to react to
            thread.ts if thread is not None else "",
            addressed=True,
            origin=f"slash:{command.channel}:{command.trigger or time.time_ns()}",
        )
        where = self._desk.where(command.channel, said.thread_ts, room_item, repository)
        verdict = self._desk.said(said, where, answer=False)
        if verdict.status == ADMITTED and verdict.decision is not None:
            decision = verdict.decision
            after = "in its thread here" if thread is not None else "here"
            return (
                f"👀 Recorded the {kinds.label(decision.kind)} for `{decision.work_item}`; "
                f"it goes to the work item now, and ✅ follows {after} once it is there."
            )
        if verdict.status == REFUSED:
            return verdict.text
        return "Nothing was recorded."


def _other_tracker(rest: str) -> str:
    """Another tracker's work item named first (``jira:OPS-12``), else ``""``."""
    first = rest.split(None, 1)[0] if rest.strip() else ""
    ref = workitem.parse(first) if ":" in first else None
    return str(ref) if ref is not None and not ref.is_github else ""


def _named(text: str, repository: str, policy: AccessPolicy) -> str:
    """The work item a command names right after its verb, resolved; ``""`` for none."""
    parsed = kinds.read(text, policy.own_id, policy.destinations.keywords)
    ref = parsed.ref if isinstance(parsed, grammar.Command | grammar.Refusal) else ""
    named = workitem.resolve_typed(ref, repository) if ref else None
    return str(named) if named is not None else ""


def _records_of(plane: Plane) -> tuple[dict[str, Mapping[str, Any]], str]:
    records, problem = item_status.loop_records(plane.api, plane.token)
    return records, f"{plane.name}: {problem}" if problem and plane.name else problem
