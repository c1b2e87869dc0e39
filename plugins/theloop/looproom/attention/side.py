"""The attention side of one activation: the asks on record, and — on Slack — the people
asked named in the thread and, where a room turns ``attention.direct`` on, told directly,
reminded and escalated to.

Built once by the decision side. The feed opens and closes the asks; an opened ask puts
its steps in the durable attention queue (the thread's mention; with ``direct``, each
member's direct message and reminder, the escalation), delivered by a worker of its
own (``looproom.attention.steps``); a closed one wakes its waiting steps, which then end,
and redraws its direct messages. A press in a direct message is read as the same press on
the ask itself (same judging, same idempotency key: relayed once, whichever is pressed);
"I'm on it" there, or 👀 on the ask, claims it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from looproom.attention import listing, notes, steps
from looproom.attention.feed import Feed, Told
from looproom.attention.home import CLAIMED, Homes, Refreshing
from looproom.attention.owners import Owners
from looproom.attention.record import DM, SNOOZED, Ask
from looproom.attention.store import AskStore, sqlite_asks
from looproom.attention.whom import Whom
from looproom.decide.authorization import AccessPolicy
from looproom.durable.contract import WorkQueue
from looproom.durable.sqlite import StorageError
from looproom.durable.worker import Worker
from looproom.metrics import Metrics
from looproom.relay.decision import Decision
from looproom.room.memory import ItemState
from looproom.settings import Settings
from looproom.settings.attention import RoomAttention
from looproom.slack.direct import Direct
from looproom.slack.transport import SlackTransport

log = logging.getLogger(__name__)
#: The attention queue's name beside the inbox and the relay.
ATTENTION = "attention"
SLOTS = 2


class Queued:
    """Told of an ask opened or closed: its steps put in the attention queue."""

    def __init__(self, queue: WorkQueue, room: Callable[[str], RoomAttention]) -> None:
        self.queue, self._room = queue, room

    def opened(self, ask: Ask) -> None:
        if not ask.asked:
            return
        # The members asked are named in the thread whatever the room says; the direct
        # messages, reminders and escalation are what ``attention.direct`` turns on.
        self._put(steps.MENTION, ask)
        room = self._room(ask.channel)
        if not room.direct:
            return
        for member in ask.asked:
            self._put(steps.DM, ask, member)
            self._put(steps.REMIND, ask, member)
        if room.escalate_to:
            self._put(steps.ESCALATE, ask)

    def closed(self, ask: Ask) -> None:
        if not self._room(ask.channel).direct:
            return
        self._put(steps.CLOSED, ask)
        # What still waits (a reminder due in hours) ends now: it finds the ask closed.
        for member in ask.asked:
            self.queue.retry_now(steps.key(steps.REMIND, ask.id, member))
            self.queue.retry_now(steps.key(steps.LATER, ask.id, member))
        self.queue.retry_now(steps.key(steps.ESCALATE, ask.id))

    def claimed(self, ask: Ask) -> None:
        self._put(steps.CLAIMED, ask)

    def snoozed(self, ask: Ask, member: str) -> None:
        """The member's reminder waits for the snooze (it reads it when due); one already
        sent is brought back up once more when the snooze ends."""
        self._put(steps.LATER, ask, member)

    def _put(self, step: str, ask: Ask, member: str = "") -> None:
        self.queue.put(steps.key(step, ask.id, member), steps.payload(step, ask.id, member))


class Measured:
    """Told of each ask closed: its wait counted, then ``inner`` told."""

    def __init__(self, inner: Told, metrics: Metrics, clock: Callable[[], float]) -> None:
        self._inner, self._metrics, self._clock = inner, metrics, clock

    def opened(self, ask: Ask) -> None:
        self._inner.opened(ask)

    def closed(self, ask: Ask) -> None:
        self._metrics.ask_closed(ask.kind, ask.outcome, ask.waited(self._clock()))
        self._inner.closed(ask)


class AttentionSide:
    """The feed always; the queue's worker, direct presses and claims on Slack."""

    def __init__(
        self,
        settings: Settings,
        kept: MutableMapping[str, Any],
        policy: Callable[[], AccessPolicy],
        id_of: Callable[[str], str],
        asks: AskStore | None,
        state_of: Callable[[str], ItemState],
        *,
        queue: WorkQueue | None = None,
        slack: SlackTransport | None = None,
        metrics: Metrics | None = None,
        clock: Callable[[], float] = time.time,
        taps: bool = True,
    ) -> None:
        """``taps``: whether a press on the Home or in a direct message reaches the bot
        (not when it polls): its buttons are drawn only then."""
        whom = Whom(settings.attention, policy, Owners(kept, settings.people), id_of)
        asks = asks if asks is not None else sqlite_asks(":memory:")  # a test's, unstored
        self.feed = Feed(asks, whom, clock=clock)
        self.asks, self._clock, self._state_of = asks, clock, state_of
        self.worker: Worker | None = None
        self._queued: Queued | None = None
        #: Each member's App Home tab (``looproom.attention.home``), on Slack.
        self.homes: Homes | None = None
        if slack is not None and queue is not None:
            direct = Direct(slack)
            self._queued = Queued(queue, whom.room)
            self.homes = Homes(asks, direct, queue, state_of, self.feed, clock, taps=taps)
            self.feed.told = Refreshing(self._queued, self.homes)
            told = steps.Steps(asks, direct, whom.room, clock, taps=taps)
            delivery = self.homes.deliver_or(told.deliver)
            self.worker = Worker(queue, delivery, name="theloop-attention", slots=SLOTS)
        if metrics is not None:
            self.feed.told = Measured(self.feed.told, metrics, clock)
            metrics.watch_asks(self._oldest_waited)

    def recorded(self, then: Callable[[Decision], None]) -> Callable[[Decision], None]:
        """The desk's ``recorded``: ``then``, and the ask the decision answers closed."""

        def both(decision: Decision) -> None:
            then(decision)
            self.feed.decided(decision, self._state_of(decision.work_item))

        return both

    def given_up(self, then: Callable[[Decision], None]) -> Callable[[Decision], None]:
        """The relay's give-up: ``then``, and the ask the question reopened waits again."""

        def both(decision: Decision) -> None:
            then(decision)
            self.feed.observed(decision.work_item, self._state_of(decision.work_item))
            if self.homes is not None:
                self.homes.reopened(decision.work_item, decision.member)

        return both

    def start(self) -> None:
        if self.worker is not None:
            self.worker.start()

    def stop(self) -> bool:
        return self.worker.stop() if self.worker is not None else True

    def _oldest_waited(self) -> float:
        try:
            oldest = self.asks.oldest_open()
        except StorageError:
            return 0.0
        return oldest.waited(self._clock()) if oldest is not None else 0.0

    def answer(self, args: str) -> str:
        """``!theloop asks [<work item> | --since <when>]``."""
        now = self._clock()
        try:
            item, since = listing.read_args(args, now)
        except listing.UsageError as exc:
            return str(exc)
        if item:
            return listing.asks_text(self.asks.of_item(item), now, f"Asks of `{item}`")
        if since is not None:
            return listing.asks_text(self.asks.since(since), now, "Asks since then")
        return listing.asks_text(self.asks.open_asks(), now, "Asks waiting now")

    def mine(self, member: str) -> str:
        """``/the-loop mine``: what waits on ``member``, and what they answered lately."""
        waiting = self.asks.waiting_on(member, listing.SHOWN)
        total = self.asks.waiting_count(member)
        answered = self.asks.answered_by(member)
        return listing.mine_text(member, waiting, total, answered, self._clock())

    def oldest_line(self) -> str:
        """``!theloop status``'s line."""
        try:
            return listing.oldest_line(self.asks.oldest_open(), self._clock())
        except StorageError as exc:
            return f"asks: not readable now ({exc})"

    def home_opened(self, event: Mapping[str, Any]) -> None:
        """Slack's ``app_home_opened``: the member's Home tab drawn (on Slack only)."""
        if self.homes is not None:
            self.homes.opened_tab(event)

    def pressed(self, payload: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """A press as the desk should read it: one in an ask's direct message becomes the
        same press on the ask; "I'm on it" is a claim (None: nothing more to read)."""
        if payload.get("type") != "block_actions":
            return payload
        if self.homes is not None:
            from_home = self.homes.pressed(payload)
            if from_home is not payload:
                return from_home
        container = _obj(payload.get("container"))
        message = _obj(payload.get("message"))
        channel = str(_obj(payload.get("channel")).get("id") or container.get("channel_id") or "")
        ts = str(message.get("ts") or container.get("message_ts") or "")
        if not channel.startswith("D") or not ts:
            return payload
        try:
            ask = self.asks.by_dm(channel, ts)
        except StorageError as exc:
            log.warning("attention: a direct press not read now: %s", exc)
            return payload
        if ask is None:
            return payload
        member = str(_obj(payload.get("user")).get("id") or "")
        actions = payload.get("actions")
        action = _obj(actions[0]) if isinstance(actions, list) and actions else {}
        if action.get("action_id") == notes.CLAIM_ACTION:
            self.claim(ask, member)
            return None
        if action.get("action_id") == notes.SNOOZE_ACTION:
            self.snooze(ask, member)
            return None
        self.feed.via(ask.channel, ask.ts, member, DM)
        blocks = message.get("blocks")
        own = notes.without_ours(blocks) if isinstance(blocks, list) else []
        thread = ask.thread if ask.thread != ask.ts else ""
        return {
            **payload,
            "channel": {"id": ask.channel},
            # The direct message's own words are not the ask's: the redrawn ask keeps its
            # blocks, and its fallback text becomes the pressed line alone.
            "message": {**message, "ts": ask.ts, "thread_ts": thread, "blocks": own, "text": ""},
            "container": {**container, "channel_id": ask.channel, "message_ts": ask.ts},
        }

    def reacted(self, member: str, channel: str, ts: str, reaction: str) -> None:
        """A reaction on a message: 👀 on an open ask claims it for a member it asks."""
        if reaction not in notes.CLAIM_REACTIONS:
            return
        try:
            ask = self.asks.open_at(channel, ts)
        except StorageError as exc:
            log.warning("attention: a reaction not read now: %s", exc)
            return
        if ask is not None:
            self.claim(ask, member)

    def claim(self, ask: Ask, member: str) -> bool:
        """``member`` is on it — only a member the ask asks, and only the first."""
        if member not in ask.asked or not self.asks.claim(ask.id, member, self._clock()):
            return False
        if self._queued is not None and self.homes is not None:
            claimed = self.asks.get(ask.id) or ask
            self._queued.claimed(claimed)
            self.homes.changed(claimed, CLAIMED)
        return True

    def snooze(self, ask: Ask, member: str) -> bool:
        """ "Remind me later": ``member``'s reminder put back ``snoozeFor`` — once per
        member per ask, only while it is open; nobody else's changes."""
        if member not in ask.asked or self._queued is None:
            return False
        until = self._clock() + self.feed.whom.room(ask.channel).snooze_for
        if not self.asks.take_for(ask.id, member, SNOOZED, until):
            return False
        self._queued.snoozed(ask, member)
        return True


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
