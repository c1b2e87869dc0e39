"""The decision desk: a typed message or a press is judged, recorded, then acknowledged.

The adapter hands in what it received; this desk asks :mod:`looproom.decide.judging` for
a verdict, stores an admitted decision in the relay queue *before* any acknowledgement,
marks the question it answers as answered, and says the outcome in the room: 👀 when
stored, an ephemeral refusal (and ⚠️ plus a log line for an unauthorized attempt), the
pressed message updated in place. One lock makes "still open? → record → mark answered"
atomic, so two presses cannot both win.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from looproom import times, verb_names, workitem
from looproom.catchup.cursors import Cursors
from looproom.decide import grammar, judging, kinds, presses, room_names, talk
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.judging import Received, Where
from looproom.decide.verdict import ADMITTED, REFUSED, Verdict, refuse
from looproom.loop_log.book import RoomRecords
from looproom.loop_log.channel import ChannelLog
from looproom.relay.decision import Decision
from looproom.room import checklist as checklists
from looproom.room.memory import Memory
from looproom.slack import reactions
from looproom.slack.queued_speaker import Speaker, quietly

log = logging.getLogger(__name__)

#: ``(channel, thread_ts)`` → the thread's messages by people, oldest first; ``None`` when
#: it cannot be read now (Slack is down) or this backend has no threads.
ThreadLines = Callable[[str, str], "list[talk.ThreadMessage] | None"]


def room_facts(
    channel: str,
    bindings: Mapping[str, str],
    rooms: Sequence[tuple[str, str]],
    id_of: Callable[[str], str],
) -> tuple[str, str]:
    """(the one work item bound to this room, the room's one repository) — ``""`` where
    the room has none or several, because then a command must say which."""
    items = [item for item, room in bindings.items() if id_of(room) == channel]
    repos = [
        repo for repo, room in rooms if id_of(room) == channel and workitem.is_repository(repo)
    ]
    return (items[0] if len(items) == 1 else ""), (repos[0] if len(repos) == 1 else "")


class Recorder(Protocol):
    """What the desk asks of the relay (``looproom.relay.relay.Relay``): store a decision
    with its target before anything is acknowledged; False when it was stored before."""

    def record(self, decision: Decision, target: Mapping[str, Any]) -> bool: ...


#: A change request pressed without its reason: may a form ask for it? (True when one
#: was opened: ``looproom.from_slack.menu_desk.WhyForm`` on Slack.)
AskWhy = Callable[[presses.Press, Mapping[str, Any]], bool]
#: Told that a press is stored: Slack may now hear that it was received.
Taken = Callable[[], None]
#: ``later(said, where)``: a ``record-context`` stored, its thread to be read after (True).
Later = Callable[[Received, Where], bool]


class Reopening:
    """Told by the relay when it gives a decision up for good (its ``Parked``): the
    question it answered reopens, so the member can answer again, and ``taken_back``
    undoes what it granted here (``looproom.decide.effects``)."""

    def __init__(self, memory: Memory, taken_back: Callable[[Decision], None]) -> None:
        self._memory, self._taken_back = memory, taken_back

    def given_up(self, decision: Decision) -> None:
        settles = kinds.settles(decision.kind)
        if settles:
            self._memory.reopen(decision.work_item, settles)
        self._taken_back(decision)


class Desk:
    """The decision desk: one per plugin activation."""

    def __init__(
        self,
        memory: Memory,
        relay: Recorder,
        room: Speaker,
        policy: Callable[[], AccessPolicy],
        *,
        cursors: Cursors | None = None,
        thread_lines: ThreadLines = lambda _c, _t: None,
        clock: Callable[[], float] = time.time,
        recorded: Callable[[Decision], None] = lambda _d: None,
        vet: Callable[[Decision], str] = lambda _d: "",
        ask_why: AskWhy = lambda _p, _q: False,
        find_room: room_names.Find = lambda name: (name, ""),
        bound: Bound | None = None,
        records: RoomRecords | None = None,
        later: Later = lambda _said, _where: False,
    ) -> None:
        """``cursors`` remembers what each thread gave as context; ``thread_lines`` reads a
        thread for ``record-context``; ``recorded`` applies what a stored decision changes
        in the room itself (a roster, a room: ``looproom.decide.effects``); ``vet`` says
        why a decision must not be recorded as the room stands (``""``: it may);
        ``find_room`` finds the id of a room a channel command names (on a plain chat,
        where rooms have no ids, the name is the room); ``bound`` which work items may be
        named (none but those the room was shown when not given: fail closed); ``records``
        keeps each decision taken or refused for the-loop's event log; ``later`` stores a
        ``record-context`` to read its thread once the caller has answered Slack (False:
        read it now)."""
        self.memory, self.relay, self.room = memory, relay, room
        self._policy, self._clock = policy, clock
        self.cursors = cursors if cursors is not None else Cursors({})
        self._thread_lines = thread_lines
        self._recorded, self._vet = recorded, vet
        # The memory's own lock: on the shared database one transaction every replica's
        # desk takes, so two replicas cannot both answer one question.
        self._lock = memory.lock
        self._ask_why, self._find_room = ask_why, find_room
        #: The one bound every path asks (``/the-loop``, the kickoff and the read commands too).
        self.bound = bound if bound is not None else Bound(memory.knows)
        self.records = ChannelLog(records, clock)
        self._later = later

    def where(
        self, channel: str, thread_ts: str, room_item: str = "", repository: str = ""
    ) -> Where:
        """Where a message was said: its thread's work item, else the room's one."""
        threaded = self.memory.locate(channel, thread_ts) if thread_ts else ""
        return Where(threaded or room_item, repository, thread_bound=bool(threaded))

    def said(
        self, said: Received, where: Where, *, answer: bool = True, read_now: bool = False
    ) -> Verdict:
        """A typed message (a thread reply, a plain message, a ``!`` command or a slash
        command); ``answer=False`` when the caller answers the member itself. A
        ``record-context`` is handed to ``later`` (its thread read after the caller has
        returned) unless ``read_now`` or the caller answers itself."""
        policy, now = self._policy(), self._clock()
        with self._lock:
            verdict = judging.judge_typed(
                said,
                where,
                self.memory.get,
                policy,
                times.iso(now),
                bound=self.bound.refusal,
                spelling=self.memory.spelling,
            )
            if not _wants_thread(verdict) and not _names_a_room(verdict):
                verdict = self._record(verdict, policy, now)
            if verdict.reason in checklists.REFUSALS and where.work_item:
                self._on_ticket_too(said, where.work_item, verdict, policy, now)
        if _wants_thread(verdict) and answer and not read_now and self._later(said, where):
            return verdict  # stored: read, recorded and answered off the caller's thread
        if _wants_thread(verdict):
            verdict = self._context(verdict, policy, now)
        elif _names_a_room(verdict):
            verdict = self._room_by_id(verdict, policy, now)
        origin = said.origin or f"{said.channel}:{said.ts}"
        self._report(verdict, said.channel, said.member, origin, where.work_item, said.thread_ts)
        if answer:
            self._answer(verdict, said.channel, said.member, said.ts, said.thread_ts or said.ts)
        return verdict

    def _context(self, verdict: Verdict, policy: AccessPolicy, now: float) -> Verdict:
        """``record-context``: the thread since its last recorded context, read off the
        lock (a Slack call), then recorded — and the cursor moved — under it."""
        decision = verdict.decision
        assert decision is not None
        channel, thread = decision.channel, decision.thread or decision.ts
        if not thread:  # a slash command has no message, hence no thread
            return refuse(
                "no-thread",
                "`record-context` records the thread it is said in — type it in the work "
                "item's thread, or use the message shortcut there. Nothing was recorded.",
            )
        lines = self._thread_lines(channel, thread)
        if lines is None:
            return refuse(
                "thread-unreadable",
                "This thread cannot be read now, so nothing was recorded — try again shortly.",
            )
        since = self.cursors.context(channel, thread)
        fresh = [
            line
            for line in lines
            if line.ts != decision.ts
            and (not since or float(line.ts) > float(since))
            and not _a_record_command(line.text)
        ]
        if not fresh:
            return refuse(
                "no-new-context",
                "Nothing was said in this thread since its last recorded context, so nothing "
                "was recorded.",
            )
        taken = talk.snapshot(fresh, policy.on(decision.work_item).role, channel, thread)
        link = talk.thread_link(channel, thread)
        full = replace(decision, words=taken.text, count=taken.count, link=link, thread=thread)
        with self._lock:
            # Only as far as the record holds: what did not fit is the next record's.
            if not self.cursors.contextualized(channel, thread, taken.newest):
                return refuse("duplicate", "This thread was just recorded; nothing more went.")
            return self._record(replace(verdict, decision=full), policy, now)

    def _on_ticket_too(
        self, said: Received, work_item: str, verdict: Verdict, policy: AccessPolicy, now: float
    ) -> None:
        """A refused phase selection written on the ticket as well, as the-loop writes it:
        through the relay, once per message (a redelivery records nothing more)."""
        note = Decision(
            kind=kinds.REFUSED_SELECTION,
            work_item=self.memory.spelling(work_item),
            member=said.member,
            origin=f"{said.origin or f'{said.channel}:{said.ts}'}:refused",
            at=times.iso(now),
            words=verdict.text,
            channel=said.channel,
            thread=said.thread_ts or said.ts,
            login=policy.people.get(said.member, ""),
        )
        note = kinds.stamped(note)
        self.relay.record(note, kinds.target(note, policy.destinations))

    def _room_by_id(self, verdict: Verdict, policy: AccessPolicy, now: float) -> Verdict:
        """A channel command naming its room: the name looked up off the lock (a Slack
        call), then recorded with the id under it — or refused, nothing recorded."""
        assert verdict.decision is not None
        found = room_names.resolved(verdict.decision, self._find_room)
        if isinstance(found, str):
            return refuse("room-not-found", found)
        with self._lock:
            return self._record(replace(verdict, decision=found), policy, now)

    def pressed(self, payload: Mapping[str, Any], taken: Taken = lambda: None) -> Verdict | None:
        """A ``block_actions`` payload from Socket Mode or the HTTP endpoint; ``taken`` is
        told once the press is stored (or refused), before the room is answered."""
        press = presses.read(payload)
        if press is None:
            return None
        policy, now = self._policy(), self._clock()
        with self._lock:
            verdict = judging.judge_press(
                press,
                self.memory.locate,
                self.memory.get,
                policy,
                times.iso(now),
                bound=self.bound.refusal,
            )
            verdict = self._record(verdict, policy, now)
        taken()
        origin = f"{press.channel}:{press.ts}:{press.action_id}:{press.member}"
        item = self.memory.locate(press.channel, press.ts)
        self._report(verdict, press.channel, press.member, origin, item, press.thread_ts)
        if verdict.status == ADMITTED and verdict.decision is not None:
            line = presses.pressed_line(press, verdict.decision, now)
            blocks = presses.after_press(press, line)
            quietly(self.room.update, press.channel, press.ts, f"{press.text}\n{line}", blocks)
        if verdict.reason == "changes-without-reason" and self._ask_why(press, payload):
            return verdict  # the form asks the reason; its submission is the decision
        self._answer(verdict, press.channel, press.member, press.ts, press.thread_ts or press.ts)
        return verdict

    def _record(self, verdict: Verdict, policy: AccessPolicy, now: float) -> Verdict:
        """Store an admitted decision; a duplicate (same key) becomes a refusal."""
        decision = verdict.decision
        if verdict.status != ADMITTED or decision is None:
            return verdict
        decision = _discussed_at(decision)
        verdict = replace(verdict, decision=decision)
        why = self._vet(decision)
        if why:
            return refuse("not-now", why)
        if not self.relay.record(decision, kinds.target(decision, policy.destinations)):
            return Verdict(
                REFUSED,
                "duplicate",
                "That decision was already recorded; nothing more was relayed.",
            )
        if verdict.settles:
            self.memory.settle(
                decision.work_item, verdict.settles, decision.member, times.clock(now)
            )
        self._recorded(decision)
        return verdict

    def _report(
        self, verdict: Verdict, channel: str, member: str, origin: str, item: str, thread: str
    ) -> None:
        """A decision taken or refused, kept for the-loop's event log (ids, never words)."""
        decision = verdict.decision
        if verdict.status == ADMITTED and decision is not None:
            gate = "open" if verdict.settles else "none"
            self.records.reply_received(
                decision.key, decision.work_item, member, decision.kind, gate, channel
            )
        elif verdict.status == REFUSED:
            self.records.dropped(origin, verdict.reason, member, item, channel, thread)

    def _answer(self, verdict: Verdict, channel: str, member: str, ts: str, thread: str) -> None:
        """Say a refusal to the member alone; ⚠️ and a log line when unauthorized."""
        level = logging.WARNING if verdict.reason == "unauthorized" else logging.INFO
        log.log(
            level, "decision %s (%s) from %s in %s", verdict.status, verdict.reason, member, channel
        )
        if verdict.status != REFUSED:
            return
        if verdict.reason == "unauthorized":
            quietly(self.room.react, channel, ts, reactions.ERROR)
        quietly(self.room.tell, channel, member, verdict.text, thread)


def _wants_thread(verdict: Verdict) -> bool:
    """An admitted context record, whose words are the thread: read before recording."""
    decision = verdict.decision
    return verdict.status == ADMITTED and decision is not None and decision.kind == kinds.CONTEXT


def _names_a_room(verdict: Verdict) -> bool:
    """An admitted channel command naming its room by name: resolved before it is recorded."""
    return verdict.status == ADMITTED and room_names.names_a_room(verdict.decision)


def _a_record_command(text: str) -> bool:
    """A ``record-context`` or ``record-decision`` typed in the thread: an act, not context."""
    parsed = kinds.read(text)
    verb = getattr(parsed, "verb", "")
    return verb in (verb_names.RECORD_CONTEXT, verb_names.RECORD_DECISION) or (
        isinstance(parsed, grammar.Refusal) and parsed.reason in ("context-words", "decision-words")
    )


#: A Slack message's timestamp; on another backend a message has none to link to.
_SLACK_TS = re.compile(r"^[0-9]+\.[0-9]+$")


def _discussed_at(decision: Decision) -> Decision:
    """A decision recorded from a thread names it (the record's "discussed at"), as
    the-loop's room does, so the records read back say where it was said."""
    thread = decision.thread or decision.ts
    if decision.kind != kinds.DECISION or decision.link or not decision.ts:
        return decision
    if not (decision.channel and _SLACK_TS.match(thread)):
        return decision
    return replace(decision, link=talk.thread_link(decision.channel, thread))
