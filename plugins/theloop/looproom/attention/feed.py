"""The asks kept in step with the room: opened when a work item starts waiting on people,
closed when it stops — answered by a member (by whom, how) or moved on without one.

Fed from the two places the room already learns it: an event the room was shown (its
memory then knows what is open: ``looproom.control.item_status.open_questions``) and a
decision the desk recorded (the memory marked its question answered). Each time the
work item's open questions are compared with its open asks; what changed is written,
once (the store's statements are idempotent), and whoever is told of it (``Told``) hears.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from looproom.attention.record import (
    ANSWERED,
    BUTTON,
    DM,
    MOVED_ON,
    TYPED,
    Ask,
    ask_id,
)
from looproom.attention.store import AskStore
from looproom.attention.whom import Whom
from looproom.control.item_status import open_questions
from looproom.durable.sqlite import StorageError
from looproom.events import Event
from looproom.relay.decision import Decision
from looproom.room.memory import Asked, ItemState

log = logging.getLogger(__name__)
#: Presses on their way from a direct message, remembered at most (a press refused never
#: comes back for its entry).
VIA_CAP = 1000


class Told(Protocol):
    """Whoever hears of an ask opened or closed (the thread, the direct messages)."""

    def opened(self, ask: Ask) -> None: ...

    def closed(self, ask: Ask) -> None: ...


class Quiet:
    """Nobody told: the record alone."""

    def opened(self, ask: Ask) -> None:
        return None

    def closed(self, ask: Ask) -> None:
        return None


def how_of(decision: Decision) -> str:
    """How an answer came: from a direct message, pressed, or typed in the room."""
    if decision.channel.startswith("D"):
        return DM
    return BUTTON if decision.origin.count(":") >= 2 else TYPED


class Feed:
    """Opens and closes the asks on record from the room's memory."""

    def __init__(
        self,
        asks: AskStore,
        whom: Whom,
        *,
        told: Told | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.asks, self.whom, self._clock = asks, whom, clock
        self.told: Told = told if told is not None else Quiet()
        # (channel, ts, member) → how a press about to reach the desk came (a DM's).
        self._via: dict[tuple[str, str, str], str] = {}
        self._via_lock = threading.Lock()

    def via(self, channel: str, ts: str, member: str, how: str) -> None:
        """``member``'s press on the ask at ``channel``/``ts`` came ``how`` (from a direct
        message): the answer it records says so."""
        with self._via_lock:
            if len(self._via) > VIA_CAP:
                self._via.clear()
            self._via[(channel, ts, member)] = how

    def observed_event(self, event: Event, state: ItemState) -> None:
        """The room was shown ``event``: its owner learnt where it names one, then
        :meth:`observed`."""
        try:
            self.whom.owners.learn_from(event)
        except StorageError as exc:
            log.warning("attention: owner of %s not learnt now: %s", event.work_item, exc)
        self.observed(event.work_item, state)

    def observed(self, work_item: str, state: ItemState) -> None:
        """The room was shown an event of ``work_item``; ``state`` is what it now knows."""
        self._guarded(work_item, state, "", "")

    def decided(self, decision: Decision, state: ItemState) -> None:
        """The desk recorded ``decision``; ``state`` has its question marked answered."""
        with self._via_lock:
            came = self._via.pop((decision.channel, decision.ts, decision.member), "")
        how = came or how_of(decision)
        self._guarded(decision.work_item, state, decision.member, how)

    def _guarded(self, work_item: str, state: ItemState, member: str, how: str) -> None:
        # The record is a view of the room, never in the way of an event or a decision.
        try:
            self.sync(work_item, state, member, how)
        except StorageError as exc:
            log.warning("attention: asks of %s not recorded now: %s", work_item, exc)

    def sync(self, work_item: str, state: ItemState, member: str = "", how: str = "") -> None:
        now = self._clock()
        open_now = self.asks.open_asks_of(work_item)

        def key(question: Asked) -> str:
            return _key(work_item, question, open_now, now)

        waiting = {key(q): (q, act) for q, _waits, act in open_questions(state)}
        answered = {key(q): q for q in _asked(state) if q.answered_by}
        for ask in open_now:
            if ask.id in answered:
                by = answered[ask.id].answered_by
                self._close(ask, ANSWERED, by, how if by == member else "", now)
            elif ask.id not in waiting:
                self._close(ask, MOVED_ON, "", "", now)
        for key, (question, act) in waiting.items():
            self._open(work_item, key, question, act, now)

    def _open(self, work_item: str, key: str, question: Asked, act: str, now: float) -> None:
        asked, basis = self.whom(work_item, question.channel, act)
        ask = Ask(
            key,
            work_item,
            question.kind,
            question.channel,
            question.ts,
            question.thread,
            asked,
            now,
            basis=basis,
        )
        if self.asks.open(ask):
            self.told.opened(ask)
        elif self.asks.reopen(key):  # an answer the relay gave up on: it waits again
            log.info("attention: %s waits again", key)

    def _close(self, ask: Ask, outcome: str, by: str, how: str, now: float) -> None:
        if self.asks.close(ask.id, outcome, by, how, now):
            closed = self.asks.get(ask.id)
            if closed is not None:
                self.told.closed(closed)


def _key(work_item: str, question: Asked, open_now: list[Ask], now: float) -> str:
    """The ask's id: one per message that asked. A plain chat's question has no message:
    it is the open ask of its kind there (told again), else a new one from now on."""
    if question.ts:
        return ask_id(work_item, question.kind, question.channel, question.ts)
    same = [ask for ask in open_now if ask.kind == question.kind and not ask.ts]
    return same[-1].id if same else ask_id(work_item, question.kind, "", f"plain-{now:.6f}")


def _asked(state: ItemState) -> list[Asked]:
    return [q for q in (state.ask, state.gate, state.selection) if q is not None]
