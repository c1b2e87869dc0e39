"""Each member's App Home tab: published when they open it, refreshed when an ask that
concerns them opens, is claimed or closes, and answered from with one tap.

A refresh is an item of the durable attention queue, like every other step an ask takes:
it survives a restart, and on the shared database one replica publishes it, once. Its key
names the change (an ask opened, closed, claimed; the tab opened), so the same change
told twice — a redelivery, a second replica — is put once; its group is the member, so
one member's views are published one at a time, in order, each drawn from the store as
it is then (the latest change is never overdrawn by an older view). Nothing needs to be
configured: the list is there for every member an ask asks.

A press on the Home's answer is read as the same press on the ask's own message (its
channel, its ts, its blocks read back from Slack), so it goes through the desk's judging,
authorization and idempotency key like a press in the thread or the direct message:
relayed once, whichever of the three is pressed.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from looproom.attention import home_view, steps
from looproom.attention.feed import Feed, Told
from looproom.attention.record import HOME, Ask
from looproom.attention.store import AskStore
from looproom.durable.contract import Item, WorkQueue
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.sqlite import StorageError
from looproom.room.memory import ItemState
from looproom.slack.direct import Direct
from looproom.slack.responses import AUTH, RATE_LIMITED, UNAVAILABLE, Response

log = logging.getLogger(__name__)
#: The attention queue's step that publishes one member's Home.
STEP = "home"
OPENED, CLOSED, CLAIMED, REOPENED, TAB = "opened", "closed", "claimed", "reopened", "tab"
NOT_ENABLED = (
    "the app's Home tab is off: turn it on (App Home → Show Tabs → Home Tab, or create the "
    "app again from `make manifest`)"
)


def key(member: str, why: str, what: str) -> str:
    return f"{STEP}:{member}:{why}:{what}"


class Homes:
    """Puts each member's refresh in the queue; publishes it; reads a press on it."""

    def __init__(
        self,
        asks: AskStore,
        direct: Direct,
        queue: WorkQueue,
        state_of: Callable[[str], ItemState],
        feed: Feed,
        clock: Callable[[], float] = time.time,
        *,
        taps: bool = True,
    ) -> None:
        """``taps``: whether a press on the Home reaches the bot (not when it polls): the
        one-tap answers are drawn only then."""
        self.asks, self.direct, self.queue = asks, direct, queue
        self._state_of, self._feed, self._clock, self._taps = state_of, feed, clock, taps
        #: Whether the app's Home tab is on, as Slack last answered a publish (None: none
        #: yet): the doctor says it.
        self.tab_on: bool | None = None

    # -- what changed: a refresh put in the queue --------------------------------------

    def changed(self, ask: Ask, why: str) -> None:
        """``ask`` opened, closed or was claimed: the Home of each member it concerns."""
        stamp = {OPENED: ask.opened, CLOSED: ask.closed, CLAIMED: ask.claimed_at}.get(why, 0.0)
        concerned: Iterable[str] = ask.asked
        if why == CLOSED and ask.answered_by:
            concerned = dict.fromkeys([*ask.asked, ask.answered_by])  # what they answered
        for member in concerned:
            self._put(member, key(member, why, f"{ask.id}@{stamp:.6f}"))

    def reopened(self, work_item: str, answerer: str) -> None:
        """An answer the relay gave up on: the work item's asks wait again — on the Homes
        of those they ask, and off the *answered lately* of whoever answered."""
        stamp = f"{self._clock():.6f}"
        try:
            for ask in self.asks.open_asks_of(work_item):
                for member in dict.fromkeys([*ask.asked, answerer]):
                    if member:
                        self._put(member, key(member, REOPENED, f"{ask.id}@{stamp}"))
        except StorageError as exc:
            log.warning("attention: the Homes of %s not queued now: %s", work_item, exc)

    def opened_tab(self, event: Mapping[str, Any]) -> None:
        """Slack's ``app_home_opened``: the member's Home, drawn now (the Messages tab
        opened asks for nothing)."""
        member = str(event.get("user") or "")
        if event.get("tab") not in (None, "home") or not member.startswith(("U", "W")):
            return
        stamp = str(event.get("event_ts") or f"{self._clock():.6f}")
        try:
            self._put(member, key(member, TAB, stamp))
        except StorageError as exc:
            log.warning("attention: the Home of %s not queued now: %s", member, exc)

    def _put(self, member: str, item_key: str) -> None:
        payload = json.dumps({"step": STEP, "member": member})
        self.queue.put(item_key, payload, group=f"{STEP}:{member}")

    # -- publishing --------------------------------------------------------------------

    def deliver_or(self, other: Callable[[Item], Outcome]) -> Callable[[Item], Outcome]:
        """The attention queue's delivery: a Home's here, every other step ``other``'s."""

        def deliver(item: Item) -> Outcome:
            if item.key.startswith(f"{STEP}:"):
                return self.publish(str(json.loads(item.payload).get("member") or ""))
            return other(item)

        return deliver

    def publish(self, member: str) -> Outcome:
        """``views.publish``: the member's Home as the store has it now."""
        if not member:
            return Failed("a Home for nobody")
        now = self._clock()
        waiting = self.asks.waiting_on(member)
        answered = self.asks.answered_by(member, home_view.ANSWERED_SHOWN)
        drawn = home_view.view(waiting, answered, now, self._answer_of)
        response = self.direct.publish_home(member, drawn)
        if response.error == "not_enabled":
            # Every change would park one more: logged, and the doctor says it.
            if self.tab_on is not False:
                log.warning("attention: %s", NOT_ENABLED)
            self.tab_on = False
            return Delivered(NOT_ENABLED)
        if response.ok:
            self.tab_on = True
        return _outcome(response)

    def _answer_of(self, ask: Ask) -> home_view.Answer | None:
        return home_view.one_tap(ask, self._state_of(ask.work_item)) if self._taps else None

    # -- a press on the Home -----------------------------------------------------------

    def pressed(self, payload: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """A press as the desk should read it: one on a Home's answer becomes the same press
        on the ask's own message; None when there is nothing to read (the ask closed, or
        Slack cannot give its message now: the Home is drawn again, to be pressed anew)."""
        if payload.get("type") != "block_actions" or _obj(payload.get("view")).get("type") != (
            "home"
        ):
            return payload
        actions = payload.get("actions")
        action = _obj(actions[0]) if isinstance(actions, list) and actions else {}
        found = home_view.where(str(action.get("block_id") or ""))
        member = str(_obj(payload.get("user")).get("id") or "")
        if found is None or not member:
            return payload
        try:
            ask = self.asks.open_at(*found)
        except StorageError as exc:
            log.warning("attention: a press on the Home not read now: %s", exc)
            return None
        if ask is None:
            self._refresh(member, "stale")
            return None
        original, unread = steps.original(self.direct.slack, ask)
        if unread is not None:
            log.warning("attention: a press on the Home of %s not read: %s", member, unread)
            self._refresh(member, "unread")
            return None
        self._feed.via(ask.channel, ask.ts, member, HOME)
        thread = ask.thread if ask.thread != ask.ts else ""
        return {
            **payload,
            "channel": {"id": ask.channel},
            "message": {"ts": ask.ts, "thread_ts": thread, "blocks": original, "text": ""},
            "container": {"type": "message", "channel_id": ask.channel, "message_ts": ask.ts},
        }

    def _refresh(self, member: str, why: str) -> None:
        try:
            self._put(member, key(member, why, f"{self._clock():.6f}"))
        except StorageError as exc:
            log.warning("attention: the Home of %s not queued now: %s", member, exc)


class Refreshing:
    """Told of each ask opened or closed: ``inner`` told, then the Homes it concerns."""

    def __init__(self, inner: Told, homes: Homes) -> None:
        self._inner, self._homes = inner, homes

    def opened(self, ask: Ask) -> None:
        self._inner.opened(ask)
        self._homes.changed(ask, OPENED)

    def closed(self, ask: Ask) -> None:
        self._inner.closed(ask)
        self._homes.changed(ask, CLOSED)


def _outcome(response: Response) -> Outcome:
    if response.ok:
        return Delivered()
    if response.kind == RATE_LIMITED:
        return RetryLater(response.error, after=response.retry_after)
    if response.kind == UNAVAILABLE:
        return RetryLater(f"slack views.publish: {response.error}")
    if response.kind == AUTH:
        return RetryLater(f"slack views.publish: {response.error} (the operator must act)")
    return Failed(f"slack views.publish: {response.error}")


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
