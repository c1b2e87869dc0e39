"""The Slack rooms' outlet: post one event to its room and thread, and say what happened.

:class:`SlackOutlet` — subscribe filter → room → the work item's parent (reused, or posted
and bound) → the event in the parent's thread → the parent owed the latest state, which
:class:`looproom.room.cards.Cards` draws on a stage of its own (never in the delivery's slot).
A failed edit never makes later events new parents (the-loop's own Slack channel does):
only a parent Slack says is gone is replaced. Every post carries its delivery key in Slack
message metadata, so a post that may have landed (in flight at a crash, or answered by a
5xx) is looked for before it is posted again. Slack refusing a payload (``ok:false``) is
logged and retried once as plain text; what still fails is :class:`Failed` (parked, shown
to admins). A 429, an outage or pacing is :class:`RetryLater` — the queue waits, no sleep.
The event message carries the decision controls when the room can receive presses.

Before any of that, the delivery policy (:mod:`looproom.room.policy`, over its memory in
:mod:`looproom.room.delivery_log`) decides whether the event is posted, edited over a message
already in the thread, or not posted at all; the outlet carries the decision out and
records it before the delivery is settled. ``slack.room.style: classic``, or a memory that
cannot be read, posts every event.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any

from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.events import Event
from looproom.loop_log.channel import ChannelLog
from looproom.room import event_types, policy
from looproom.room.cards import Cards, fingerprint
from looproom.room.delivery_log import DeliveryLog, Why
from looproom.room.delivery_log import now as told_now
from looproom.room.outlets import (
    NoObserver,
    Observer,
    OutletSettings,
    PullSource,
    parent_key,
)
from looproom.room.render import Rendering, render, render_parent, state_after
from looproom.room.routing import BindingBook, ThreadBinding
from looproom.slack.channels import ChannelIds
from looproom.slack.marks import metadata, metadata_key
from looproom.slack.responses import (
    AUTH,
    GONE,
    OK,
    RATE_LIMITED,
    REJECTED,
    ROOM,
    Response,
    is_channel_id,
    next_cursor,
)
from looproom.slack.transport import SlackTransport

log = logging.getLogger(__name__)

#: An operator must fix a token or scope; check again this often meanwhile.
AUTH_RETRY_SECONDS = 60.0
#: How far reconciliation reads (pages of 200): a crash's in-flight post is recent.
PAGES = 10
#: How far the-loop's clock and Slack's may disagree: a thread is read for a lost post
#: from this long before its event's time (no post of it can be older).
CLOCK_SKEW = 600.0


class SlackOutlet:
    """Posts events into Slack rooms, one thread per work item per room."""

    def __init__(
        self,
        transport: SlackTransport,
        rooms: BindingBook,
        settings: OutletSettings,
        *,
        observer: Observer | None = None,
        interactive: bool = False,
        told: DeliveryLog | None = None,
        pulls: PullSource | None = None,
        cards: Cards | None = None,
        records: ChannelLog | None = None,
    ) -> None:
        """``interactive``: the room's presses reach the bot, so messages get buttons.
        ``told``: the delivery policy's memory (without it, every event is posted).
        ``pulls``: reads a PR gate's title and size from GitHub. ``cards``: the stage that
        redraws the parents (by default one of its own, drawn only when asked).
        ``records``: each event posted, kept for the-loop's event log."""
        self._slack, self._book, self._settings = transport, rooms, settings
        self._ids = ChannelIds(rooms, transport)
        self._observer = observer if observer is not None else NoObserver()
        self._interactive = interactive
        self._told, self._pulls = told, pulls
        self.cards = cards if cards is not None else Cards(transport, rooms)
        self._records = records if records is not None else ChannelLog(None)

    def deliver(self, event: Event, *, maybe_delivered: bool) -> Outcome:
        """Post ``event``; ``maybe_delivered``: look for it in Slack before posting again."""
        if event.event_type not in self._settings.subscribe:
            self._observer.observe(event)  # the bot saw it, though the room did not
            return Delivered("not subscribed")
        told, decision = self._decide(event)
        if isinstance(decision, policy.Drop):
            log.debug(
                "room policy: %s dropped %s (%s)", decision.rule, event.event_type, event.work_item
            )
            if decision.rule != "dedupe":  # a repeat must not move the memory off the original
                self._observer.observe(event)
            self._record(event, told, decision, "")
            return Delivered(f"not posted: {decision.rule}")
        return self._deliver(event, maybe_delivered, told, decision)

    def _decide(self, event: Event) -> tuple[policy.Told | None, policy.Decision]:
        """The policy's decision; classic style, or a memory that cannot be read, posts."""
        if self._settings.room_style == "classic" or self._told is None:
            return None, policy.Post("classic")
        told = self._told.get(event.work_item)
        if told is None:
            return None, policy.Post("no-memory")
        return told, policy.decide(event, told)

    def _record(
        self, event: Event, told: policy.Told | None, decision: policy.Decision, ts: str
    ) -> None:
        """Remember what was done (durably, before the delivery is settled) and why."""
        if self._told is None:
            return
        if told is not None:
            self._told.put(event.work_item, policy.remember(told, event, decision, ts))
        action = decision.action
        why = Why(told_now(), event.event_type, policy.node_of(event), action, decision.rule)
        self._told.note(event.work_item, why)

    def _deliver(
        self,
        event: Event,
        maybe_delivered: bool,
        told: policy.Told | None = None,
        decision: policy.Decision | None = None,
    ) -> Outcome:
        decision = decision or policy.Post("classic")
        room = self._book.room_for(event.work_item, self._settings.channel, self._settings.rooms)
        if not room:
            return Failed(f"no room for {event.work_item}: set slack.channel or a rooms entry")
        channel = self._ids.of(room)
        wait = self._slack.post_wait(channel or room)
        if wait > 0:
            return RetryLater(f"pacing posts to {room}", after=wait, routine=True)
        try:
            thread = self._book.thread(event.work_item, channel) if channel else None
            if maybe_delivered or self._book.is_uncertain(event.delivery_key):
                found = functools.partial(self._record, event, told, decision)
                thread = self._reconcile(event, channel, thread, found) if channel else thread
            if thread is None:
                thread = self._open(event, room, channel)
            if isinstance(decision, policy.Edit):
                ts = self._edit(event, thread, decision.ts)
                log.debug(
                    "room policy: %s edited %s for %s", decision.rule, decision.ts, event.event_type
                )
            else:
                ts = self._post(event, thread)
        except _StopDelivery as stop:
            return stop.outcome
        self._record(event, told, decision, ts)
        self._records.posted(
            event.delivery_key, event.work_item, event.event_type, thread.channel, thread.ts
        )
        self._redraw(event, thread)
        return Delivered(f"{decision.action} in {thread.channel} under {thread.ts}")

    # -- reconciliation -------------------------------------------------------------------

    def _reconcile(
        self,
        event: Event,
        channel: str,
        thread: ThreadBinding | None,
        found_at: Callable[[str], None],
    ) -> ThreadBinding | None:
        """Find what a lost attempt may have posted: the parent, and this event under it
        (``found_at`` is told where, so the policy remembers it as if just posted)."""
        key = event.delivery_key
        if thread is None:
            thread = self._find_parent(event.work_item, channel)
        found = self._find_in_thread(thread, key, _since(event)) if thread is not None else None
        if thread is not None and found is not None:
            self._book.settle(key)
            # The memory learns where it is, so a press on it is taken after a restart.
            self._observer.observe(event, thread.channel, str(found.get("ts") or ""), thread.ts)
            found_at(str(found.get("ts") or ""))
            self._records.posted(key, event.work_item, event.event_type, thread.channel, thread.ts)
            self._redraw(event, thread)
            raise _StopDelivery(Delivered(f"already in {thread.channel} under {thread.ts}"))
        self._book.settle(key)  # looked: not there, so posting it now posts it once
        return self._book.thread(event.work_item, channel)

    def _find_parent(self, work_item: str, channel: str) -> ThreadBinding | None:
        wanted = parent_key(work_item)
        pages = self._messages(lambda cursor: self._slack.history(channel, cursor=cursor))
        for message in pages:
            if metadata_key(message) == wanted:
                thread = ThreadBinding(work_item, channel, str(message["ts"]), origin="event")
                self._book.remember(thread)
                self._records.thread_opened(work_item, channel, thread.ts, "event")
                log.info(
                    "found the parent of %s in %s: a lost attempt had posted it", work_item, channel
                )
                return thread
        return None

    def _find_in_thread(
        self, thread: ThreadBinding, key: str, since: str = ""
    ) -> Mapping[str, Any] | None:
        """The message in ``thread`` that carries ``key``, if a lost attempt posted it —
        read from ``since`` (the event's time, so a long thread's older replies, which
        come first, do not use up the pages read)."""

        def page(cursor: str) -> Response:
            return self._slack.replies(thread.channel, thread.ts, cursor=cursor, oldest=since)

        try:
            return next((m for m in self._messages(page) if metadata_key(m) == key), None)
        except _ThreadGone:
            self._book.forget(thread.work_item, thread.channel)
            return None

    def _messages(self, fetch: Callable[[str], Response]) -> Iterator[Mapping[str, Any]]:
        """Messages page by page (bounded); a failed read stops the delivery: never guess."""
        cursor = ""
        for _ in range(PAGES):
            response = fetch(cursor)
            if response.kind == GONE:
                raise _ThreadGone(response.error)
            if not response.ok:
                raise _StopDelivery(self._not_now(response, "looking for an earlier post"))
            yield from response.data.get("messages") or []
            cursor = next_cursor(response)
            if not cursor:
                return

    # -- posting --------------------------------------------------------------------------

    def _open(self, event: Event, room: str, channel: str) -> ThreadBinding:
        """Post the work item's parent (title, link, state) and bind it."""
        state = state_after(event, "")
        drawing = render_parent(event.work_item, state, event.url)
        meta = metadata("parent", parent_key(event.work_item), event.work_item)
        response = self._send(event, channel or room, drawing, None, meta, what="parent")
        channel = response.channel or channel
        if not is_channel_id(room):
            self._book.learn_channel_id(room, channel)
        drawn = fingerprint(drawing)
        thread = ThreadBinding(
            event.work_item,
            channel,
            response.ts,
            state,
            drawn,
            event.url,
            origin=f"event {event.event_type}",
        )
        self._book.remember(thread)
        self._records.thread_opened(event.work_item, channel, response.ts, "event")
        return thread

    def _post(self, event: Event, thread: ThreadBinding) -> str:
        """Post ``event`` in the work item's thread; its ts. (A policy's reply "under" a
        message in the thread is this too: Slack has no thread within a thread.)"""
        meta = metadata("event", event.delivery_key, event.work_item)
        response = self._send(
            event, thread.channel, self._drawing(event), thread.ts, meta, what="event"
        )
        # Told at once, not when the delivery returns: a press on it may come first.
        self._observer.observe(event, response.channel or thread.channel, response.ts, thread.ts)
        return response.ts

    def _edit(self, event: Event, thread: ThreadBinding, ts: str) -> str:
        """Draw ``event`` over the message at ``ts``; a message gone is posted afresh."""
        meta = metadata("event", event.delivery_key, event.work_item)
        drawing = self._drawing(event)
        response = self._slack.update_message(
            thread.channel, ts, text=drawing.text, blocks=drawing.blocks, metadata=meta
        )
        if response.kind == GONE or response.kind == REJECTED:
            log.info(
                "could not edit %s (%s): posting %s afresh", ts, response.error, event.event_type
            )
            return self._post(event, thread)
        if not response.ok:
            raise _StopDelivery(self._not_now(response, "editing a message"))
        self._observer.observe(event, thread.channel, ts, thread.ts)
        return ts

    def _drawing(self, event: Event) -> Rendering:
        pull = self._pulls.read(event) if self._pulls and event_types.of(event).reads_pull else None
        return render(event, self._settings, interactive=self._interactive, pull=pull)

    def _send(
        self,
        event: Event,
        channel: str,
        drawing: Rendering,
        thread_ts: str | None,
        meta: dict[str, Any],
        *,
        what: str,
    ) -> Response:
        """Post as Block Kit; on a refused payload once more as plain text; else stop."""
        post = self._slack.post_message
        response = post(
            channel, text=drawing.text, blocks=drawing.blocks, thread_ts=thread_ts, metadata=meta
        )
        if response.kind == REJECTED:
            log.warning(
                "Slack refused the %s for %s (%s %s); posting it as plain text",
                what,
                event.delivery_key,
                response.error,
                _slack_says(response),
            )
            first = response
            response = post(channel, text=drawing.text, thread_ts=thread_ts, metadata=meta)
            if response.kind == REJECTED:
                raise _StopDelivery(
                    Failed(
                        f"Slack refused the {what}: {first.error}; as plain text: {response.error}"
                    )
                )
        if response.kind != OK:
            if response.kind not in (RATE_LIMITED, AUTH, ROOM):
                self._book.mark_uncertain(event.delivery_key)  # a 5xx post may have landed
            raise _StopDelivery(self._not_now(response, f"posting the {what}"))
        self._book.settle(event.delivery_key)
        return response

    def _not_now(self, response: Response, doing: str) -> Outcome:
        """A failed call as the worker's outcome: wait, back off, or park."""
        reason = f"{doing}: {response.method} {response.error}"
        if response.kind == RATE_LIMITED:
            return RetryLater(reason, after=response.retry_after)
        if response.kind == AUTH:
            log.error(
                "Slack refuses the bot's token (%s): fix the token or its scopes", response.error
            )
            return RetryLater(reason, after=AUTH_RETRY_SECONDS)
        if response.kind == ROOM:
            return Failed(f"{reason} — invite the bot to the room or fix the room's name")
        return RetryLater(reason)

    # -- the parent's state ---------------------------------------------------------------

    def _redraw(self, event: Event, thread: ThreadBinding) -> None:
        """Owe the parent the state after ``event``: recorded now, drawn by the cards' stage."""
        self.cards.want(thread, state_after(event, thread.state), event.url)


class _ThreadGone(Exception):
    """Slack says the parent message is no longer there."""


class _StopDelivery(Exception):
    """Carries an outcome out of the middle of a delivery."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(getattr(outcome, "reason", ""))
        self.outcome = outcome


def _slack_says(response: Response) -> str:
    """Slack's own details of a refusal (its validation messages), for the log."""
    errors = response.data.get("errors") or (response.data.get("response_metadata") or {}).get(
        "messages"
    )
    return "; ".join(str(e) for e in errors)[:500] if errors else ""


def _since(event: Event) -> str:
    """Slack's ``oldest`` for a post of ``event``: its time less :data:`CLOCK_SKEW`;
    ``""`` (the whole thread) when the event carries no time with its zone."""
    try:
        moment = datetime.fromisoformat(event.ts.replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        return ""
    return f"{moment.timestamp() - CLOCK_SKEW:.6f}"
