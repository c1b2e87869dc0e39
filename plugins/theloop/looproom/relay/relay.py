"""The relay: each decision is stored before it is acknowledged, then carried out once.

A decision is stored in the durable relay queue before it is acknowledged (👀), then the
relay's worker — the same delivery loop as the inbox's, with backoff and parking —
hands it to its sink (``looproom.relay.sinks``) until it lands. Landed: ✅ and a
threaded reply. Refused for good: ⚠️ with the reason, the item parked and listed by
``!theloop queue``, and the question reopened so the member can answer again (not when
it may have landed: a second answer could then stand beside the first).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from looproom.durable.contract import Item, WorkQueue
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.worker import Worker
from looproom.loop_log.book import RoomRecords
from looproom.loop_log.channel import ChannelLog
from looproom.relay import forms, texts
from looproom.relay import records as ticket_records
from looproom.relay.decision import Decision
from looproom.relay.reply_lookup import LogUnread, Unsure, unsure_reason
from looproom.relay.sinks import Sinks, Undeliverable
from looproom.slack import reactions
from looproom.slack.queued_speaker import Speaker, quietly

log = logging.getLogger(__name__)

RELAY = "relay"
#: After this many failed attempts the room hears once that the relay is still trying.
STILL_TRYING_AFTER = 3
#: A reply that may have landed, while the-loop's event log cannot be read: the thread hears
#: after this long that it is still waiting, and it is parked for an admin after that long.
NOTICE_AFTER = 10 * 60.0
GIVE_UP_AFTER = 24 * 3600.0
#: Carried in the stored reason once the thread was told it is waiting: told once.
_TOLD = " (the thread was told)"


class Parked(Protocol):
    """Who hears that a decision was given up for good — never one that may have landed,
    since a second answer could then stand beside the first: the desk's side, which
    reopens the question it answered and takes back what it granted."""

    def given_up(self, decision: Decision) -> None:
        """``decision`` will not be relayed: parked for an admin."""
        ...


class Relay:
    """Stores decisions (before any acknowledgement) and relays them with a worker."""

    def __init__(
        self,
        queue: WorkQueue,
        sinks: Sinks,
        acks: Speaker,
        *,
        parked: Parked | None = None,
        stamp: Callable[[Decision], Decision] = lambda decision: decision,
        observe: Callable[[Item, Outcome], None] = lambda _i, _o: None,
        clock: Callable[[], float] = time.time,
        slots: int = 1,
        notice_after: float = NOTICE_AFTER,
        give_up_after: float = GIVE_UP_AFTER,
        records: RoomRecords | None = None,
    ) -> None:
        """``parked`` hears of each decision given up for good. ``stamp`` gives a decision
        read back without the words the room is told of it (stored before decisions carried
        them) those words, from the desk's table of kinds. ``observe`` is told every
        outcome too (the metrics count them). ``slots``:
        decisions relayed side by side, each work item's one at a time, in order.
        ``notice_after``/``give_up_after``: seconds since the first attempt before a reply
        waiting on the-loop's unreadable event log is said to wait, then parked. ``records``
        keeps each context and decision record that landed, for the-loop's event log."""
        self.queue, self.sinks, self.acks = queue, sinks, acks
        self._parked, self._observe, self._stamp = parked, observe, stamp
        self._clock, self._notice_after, self._give_up_after = clock, notice_after, give_up_after
        self._records = ChannelLog(records, clock)
        self._worker = Worker(
            queue, self._send, settled=self._settled, clock=clock, name="theloop-relay", slots=slots
        )

    def record(self, decision: Decision, target: Mapping[str, Any]) -> bool:
        """Store ``decision`` durably with its ``target`` (the sink and the request it is
        carried in, as the desk chose it), then 👀; False when it was stored before (a
        duplicate)."""
        stored = self.queue.put(
            decision.key, forms.payload(decision, target), group=_group(decision)
        )
        if stored:
            quietly(self.acks.react, decision.channel, decision.ts, reactions.RECEIVED)
            log.info(
                "relay: recorded %s %s by %s", decision.kind, decision.work_item, decision.member
            )
        return stored

    def start(self) -> None:
        self._worker.start()

    def stop(self, timeout: float = 10.0) -> bool:
        return self._worker.stop(timeout)

    @property
    def alive(self) -> bool:
        return self._worker.alive

    def step(self) -> bool:
        """Relay one due decision now (tests, and a synchronous drain)."""
        return self._worker.step()

    def _send(self, item: Item) -> Outcome:
        """The relay worker's delivery: the stored decision handed to its sink."""
        try:
            stored = json.loads(item.payload)
        except ValueError as exc:
            return Failed(f"stored relay item is not JSON: {exc}")
        # Any attempt after the first may have landed (a timeout after GitHub wrote it).
        unsure = item.maybe_delivered or item.attempts > 1
        try:
            outcome = self.sinks.send(
                stored, unsure, ambiguous=item.maybe_delivered, first_try=item.first_try
            )
        except Exception as exc:  # a sink bug must not lose the decision
            log.exception("relay sink raised on %s", item.key)
            return RetryLater(f"{type(exc).__name__}")
        return self._waiting(item, outcome) if isinstance(outcome, LogUnread) else outcome

    def _waiting(self, item: Item, outcome: LogUnread) -> Outcome:
        """the-loop's log unreadable: wait — past the notice horizon say so once, past the
        give-up horizon park it for an admin."""
        waited = self._clock() - (item.first_try or self._clock())
        if waited >= self._give_up_after:
            hours = f"{waited / 3600:.0f} h" if waited >= 3600 else f"{waited:.0f} s"
            why = f"its event log could not be read for {hours}: {outcome.reason}"
            return Unsure(unsure_reason(why, item.key))
        if waited >= self._notice_after and _TOLD not in item.last_error:
            return replace(outcome, reason=outcome.reason + _TOLD, told=True)
        if _TOLD in item.last_error:
            return replace(outcome, reason=outcome.reason + _TOLD)
        return outcome

    def _settled(self, item: Item, outcome: Outcome) -> None:
        """Told by the worker once the queue has recorded ``outcome``: say it in the room."""
        self._observe(item, outcome)
        if isinstance(outcome, Delivered):
            self.delivered(item, outcome)
        elif isinstance(outcome, RetryLater):
            self.retrying(item, outcome)
        else:
            self.given_up(item, outcome)

    def delivered(self, item: Item, outcome: Delivered) -> None:
        decision = self._decision(item)
        log.info("relay: %s landed (%s)", item.key, outcome.detail or "ok")
        if decision is None:
            return
        thread = decision.thread or decision.ts
        self._landed(item, decision, thread)
        quietly(self.acks.react, decision.channel, decision.ts, reactions.COMPLETED)
        text = texts.landed_text(decision, outcome.detail)
        quietly(self.acks.reply, decision.channel, thread, text)

    def _landed(self, item: Item, decision: Decision, thread: str) -> None:
        """A context or decision record on the ticket, kept for the-loop's event log."""
        try:
            record = json.loads(item.payload)["target"].get("record")
        except (ValueError, KeyError, AttributeError):
            return
        ref, who, room = decision.work_item, decision.member, decision.channel
        if record == ticket_records.CONTEXT:
            self._records.context_recorded(item.key, ref, who, thread, decision.count, room)
        elif record == ticket_records.DECISION:
            self._records.decision_recorded(item.key, ref, who, thread, decision.topic, room)

    def retrying(self, item: Item, outcome: RetryLater) -> None:
        decision = self._decision(item)
        if decision is None:
            return
        if isinstance(outcome, LogUnread):  # told once, by the clock, not by attempts
            if outcome.told:
                text = texts.waiting_text(decision, outcome.why)
                quietly(self.acks.reply, decision.channel, decision.thread or decision.ts, text)
        elif item.attempts == STILL_TRYING_AFTER:
            text = texts.still_trying_text(decision, outcome.reason)
            quietly(self.acks.reply, decision.channel, decision.thread or decision.ts, text)

    def given_up(self, item: Item, outcome: Failed) -> None:
        decision = self._decision(item)
        if decision is None:
            return
        quietly(self.acks.react, decision.channel, decision.ts, reactions.ERROR)
        unsure = isinstance(outcome, Unsure)
        if isinstance(outcome, Undeliverable):
            text = texts.undeliverable_text(decision, outcome.reason, outcome.record)
        elif unsure:
            text = texts.unsure_text(decision, item.key)
        else:
            text = texts.failed_text(decision, outcome.reason, item.key)
        quietly(self.acks.reply, decision.channel, decision.thread or decision.ts, text)
        # Reopening would invite a second answer while the first may stand.
        if not unsure and self._parked is not None:
            self._parked.given_up(decision)

    def _decision(self, item: Item) -> Decision | None:
        """The decision ``item`` holds, with what the room is told of it."""
        decision = forms.decision_of(item.payload)
        if decision is None or decision.label:
            return decision
        return self._stamp(decision)


def _group(decision: Decision) -> str:
    """One work item's decisions are relayed one at a time, in the order said: a later one
    never overtakes one waiting for a retry, and the look-up of a reply to its session that
    may have landed meets no other reply of ours. Other work items' go side by side."""
    return f"decisions:{decision.work_item}" if decision.work_item else ""
