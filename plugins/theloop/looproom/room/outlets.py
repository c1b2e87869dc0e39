"""The outlets: what posts an event to its room, and the plain one.

An :class:`Outlet` posts one event and says what happened, as the durable inbox worker's
outcome (:func:`event_delivery`). The Slack rooms' outlet is :mod:`looproom.room.slack_outlet`;
:class:`PlainOutlet` sends the same events as plain text through Errbot's ``send`` on a
non-Slack backend (Text, Test), threaded by work item where the backend can.

Both outlets tell an optional :class:`Observer` (the room's memory) every event
they consumed, and for a Slack post where its message is — the moment it lands, or where
reconciliation found it — so a decision is checked against what the room was shown.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Protocol

from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.queue import Item
from looproom.durable.worker import Delivery
from looproom.events import Event, SchemaError
from looproom.loop_log.channel import ChannelLog
from looproom.room.pulls import PullRequest
from looproom.room.render import RenderSettings, render_plain
from looproom.room.routing import BindingBook


class Outlet(Protocol):
    """Posts one event; ``maybe_delivered`` = it was in flight when the bot last stopped."""

    def deliver(self, event: Event, *, maybe_delivered: bool) -> Outcome: ...


def event_delivery(
    outlet: Outlet, records: ChannelLog | None = None, clock: Callable[[], float] = time.time
) -> Delivery:
    """The inbox worker's delivery: the stored event, read back and handed to ``outlet``;
    ``records`` keeps what came of it for the-loop's event log."""
    kept = records if records is not None else ChannelLog(None)

    def deliver(item: Item) -> Outcome:
        try:
            event = Event.from_wire(json.loads(item.payload))
        except (ValueError, SchemaError) as exc:
            return Failed(f"stored payload is not an event: {exc}")
        outcome = outlet.deliver(event, maybe_delivered=item.maybe_delivered)
        _keep(kept, item, event, outcome, clock())
        return outcome

    return deliver


def _keep(records: ChannelLog, item: Item, event: Event, outcome: Outcome, now: float) -> None:
    """What came of one attempt, as the-loop's own channel records it."""
    key, ref, kind = event.delivery_key, event.work_item, event.event_type
    if isinstance(outcome, Failed):
        records.post_failed(key, ref, kind, outcome.reason)
    elif isinstance(outcome, RetryLater) and not outcome.routine:
        records.undelivered(key, ref, kind, outcome.reason)
    elif isinstance(outcome, Delivered) and item.attempts > 1 and records.waited(key):
        records.delivered_late(key, ref, kind, item.attempts, now - item.created)


class Observer(Protocol):
    """Told of each event an outlet consumed (``looproom.room.memory.Memory`` is one): posted as
    ``ts`` in ``channel`` under the parent ``thread_ts``, or — not posted (a plain backend,
    an unsubscribed type) — without them."""

    def observe(
        self, event: Event, channel: str = "", ts: str = "", thread_ts: str = ""
    ) -> object: ...


class NoObserver:
    """The observer when there is none (delivery without decisions)."""

    def observe(self, event: Event, channel: str = "", ts: str = "", thread_ts: str = "") -> None:
        del event, channel, ts, thread_ts


class OutletSettings(RenderSettings, Protocol):
    """What the outlets read from ``looproom.settings.Settings``."""

    channel: str
    subscribe: tuple[str, ...]
    rooms: tuple[tuple[str, str], ...]
    room_style: str


class PullSource(Protocol):
    """What GitHub says of a PR gate's pull request (``looproom.room.pulls.PullReader``)."""

    def read(self, event: Event) -> PullRequest | None: ...


def parent_key(work_item: str) -> str:
    return f"parent:{work_item}"


# -- non-Slack backends ------------------------------------------------------------------------

#: ``send(room or None, text, thread key or None)``: the plugin's bridge to Errbot's send.
Send = Callable[[str | None, str, str | None], None]


class PlainOutlet:
    """The same events as plain text through Errbot's own ``send`` (Text, Test backends)."""

    def __init__(
        self,
        send: Send,
        rooms: BindingBook,
        settings: OutletSettings,
        *,
        observer: Observer | None = None,
    ) -> None:
        self._send, self._book, self._settings = send, rooms, settings
        self._observer = observer if observer is not None else NoObserver()

    def deliver(self, event: Event, *, maybe_delivered: bool) -> Outcome:
        """Send ``event``; a plain backend cannot be searched, so a crash may repeat one."""
        del maybe_delivered
        if event.event_type not in self._settings.subscribe:
            self._observer.observe(event)  # the bot saw it, though the room did not
            return Delivered("not subscribed")
        return self._deliver(event)

    def _deliver(self, event: Event) -> Outcome:
        room = self._book.room_for(event.work_item, self._settings.channel, self._settings.rooms)
        try:
            self._send(room or None, render_plain(event, self._settings), event.work_item)
        except Exception as exc:  # the backend's failure is a retry, never a lost event
            return RetryLater(f"{type(exc).__name__}: {exc}")
        self._observer.observe(event)  # sent: a plain message has no ts to remember
        return Delivered()
