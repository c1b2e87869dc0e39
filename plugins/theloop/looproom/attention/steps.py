"""The attention queue's delivery: each step an open ask takes, sent once.

Every step is one durable item (``looproom.durable``), so it survives a restart and, on
the shared database, is delivered by one replica at a time: the thread's mention, each
member's direct message, each member's reminder, the escalation, a claim shown on the
ask's own message and in its thread, and the direct messages redrawn once the ask closes.
A step not due yet, or outside the member's working hours, waits in the queue
(``RetryLater``, routine). A reminder or an escalation is taken in the store first
(``take_for``/``take``: once, only while the ask is open); a post that may have landed
(a restart, a 5xx) is looked for by its mark before it is posted again, so a ``kill -9``
between the two gives exactly one. Nothing here answers for anyone.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from looproom.attention import notes
from looproom.attention.hours import wait_for_hours
from looproom.attention.record import ESCALATED, REMINDED, REMINDED_LATER, SNOOZED, Ask
from looproom.attention.store import AskStore
from looproom.decide.members import Directory, UnknownHandle
from looproom.durable.contract import Item
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.settings.attention import RoomAttention
from looproom.slack import marks
from looproom.slack.direct import Direct
from looproom.slack.responses import AUTH, GONE, RATE_LIMITED, UNAVAILABLE, Response
from looproom.slack.transport import SlackTransport

log = logging.getLogger(__name__)

MENTION, DM, REMIND, ESCALATE = "mention", "dm", "remind", "escalate"
CLOSED, CLAIMED = "closed", "claimed"
#: The reminder a snooze brings back once the member was reminded before it.
LATER = "later"
#: The mark's kind on every post a step makes (Slack message metadata).
MARK = "attention"


def key(step: str, ask_id: str, member: str = "") -> str:
    return f"{step}:{ask_id}:{member}" if member else f"{step}:{ask_id}"


def payload(step: str, ask_id: str, member: str = "") -> str:
    return json.dumps({"step": step, "ask": ask_id, "member": member})


class Steps:
    """Delivers one attention item; the worker records what came of it."""

    def __init__(
        self,
        asks: AskStore,
        direct: Direct,
        room: Callable[[str], RoomAttention],
        clock: Callable[[], float] = time.time,
        *,
        taps: bool = True,
    ) -> None:
        """``taps``: whether a press in a direct message reaches the bot (not when it
        polls): "I'm on it" and "Remind me later" are drawn only then."""
        self.asks, self.direct, self._room, self._clock = asks, direct, room, clock
        self._taps = taps
        self.slack = direct.slack
        # ``attention.escalateTo``'s @handles as member ids, so they are mentioned.
        self._directory = Directory(self.slack.users_page, {})

    def deliver(self, item: Item) -> Outcome:
        raw = json.loads(item.payload)
        ask = self.asks.get(str(raw.get("ask") or ""))
        step, member = str(raw.get("step") or ""), str(raw.get("member") or "")
        if ask is None:
            return Delivered("no such ask")
        if step == CLOSED:
            return self._closed(ask)
        if not ask.is_open:
            return Delivered("closed before this step")
        if step == MENTION:
            return self._mention(ask, item)
        if step == DM:
            return self._dm(ask, member, item)
        if step == REMIND:
            return self._remind(ask, member, item)
        if step == LATER:
            return self._later(ask, member, item)
        if step == ESCALATE:
            return self._escalate(ask, item)
        if step == CLAIMED:
            return self._claimed(ask, item)
        return Failed(f"unknown attention step {step!r}")

    # -- the steps ---------------------------------------------------------------------

    def _mention(self, ask: Ask, item: Item) -> Outcome:
        thread = ask.thread or ask.ts
        return self._post_once(ask.channel, thread, item, notes.mention_text(ask), None)

    def _dm(self, ask: Ask, member: str, item: Item) -> Outcome:
        if ask.dm_of(member):
            return Delivered("sent before")
        channel, why = self.direct.dm(member)
        if not channel:
            return _failed(why, f"no direct message with {member}")
        original, unread = self._original(ask)
        if unread is not None:
            return unread
        blocks = notes.dm_blocks(ask, original, taps=self._taps)
        return self._dm_once(ask, member, channel, item, notes.dm_text(ask), blocks)

    def _remind(self, ask: Ask, member: str, item: Item) -> Outcome:
        due = ask.opened + self._room(ask.channel).remind_after
        # A snooze puts the member's own reminder back; nobody else's.
        due = max(due, self.asks.step_at(ask.id, member, SNOOZED))
        return self._bring_back(ask, member, item, due, REMINDED)

    def _later(self, ask: Ask, member: str, item: Item) -> Outcome:
        """After a snooze: the reminder again, only if it had been sent before the snooze
        (else the reminder itself, put back, is what comes)."""
        until = self.asks.step_at(ask.id, member, SNOOZED)
        reminded = self.asks.step_at(ask.id, member, REMINDED)
        if not until or not reminded or reminded >= until:
            return Delivered("the reminder itself waits for the snooze")
        return self._bring_back(ask, member, item, until, REMINDED_LATER)

    def _bring_back(self, ask: Ask, member: str, item: Item, due: float, step: str) -> Outcome:
        room, now = self._room(ask.channel), self._clock()
        if now < due:
            return RetryLater("not due", after=due - now, routine=True)
        if ask.claimed_by and ask.claimed_by != member:
            return Delivered(f"claimed by {ask.claimed_by}")
        offset = self.direct.offset(member)
        wait = wait_for_hours(now, offset or 0, room.hours)
        if wait > 0:
            return RetryLater("outside working hours", after=wait, routine=True)
        took = self.asks.take_for(ask.id, member, step, now)
        if not took and not (item.maybe_delivered and _open(self.asks.get(ask.id))):
            return Delivered("reminded before, or answered")
        channel, why = self.direct.dm(member)
        if not channel:
            return _failed(why, f"no direct message with {member}")
        original, unread = self._original(ask)
        if unread is not None:
            return unread
        blocks = notes.dm_blocks(ask, original, waited=now - ask.opened, taps=self._taps)
        old = ask.dm_of(member)
        outcome = self._dm_once(ask, member, channel, item, notes.dm_text(ask), blocks)
        if isinstance(outcome, Delivered) and old and old != self._current(ask.id, member):
            # The same message brought back up, not a pile: the older copy goes.
            old_channel, _, old_ts = old.partition(":")
            self.slack.delete_message(old_channel, old_ts)
        return outcome

    def _escalate(self, ask: Ask, item: Item) -> Outcome:
        room, now = self._room(ask.channel), self._clock()
        if not room.escalate_to:
            return Delivered("nobody to escalate to")
        due = ask.opened + room.escalate_after
        if now < due:
            return RetryLater("not due", after=due - now, routine=True)
        whom = self._whom(room.escalate_to)
        wait = self._wait_for_someones_hours(whom, now, room.hours)
        if wait > 0:
            return RetryLater("outside the named members' working hours", after=wait, routine=True)
        took = self.asks.take(ask.id, ESCALATED, now)
        if not took and not (item.maybe_delivered and _open(self.asks.get(ask.id))):
            return Delivered("escalated before, or answered")
        text = notes.escalation_text(ask, whom, now - ask.opened)
        return self._post_once(ask.channel, ask.thread or ask.ts, item, text, None)

    def _claimed(self, ask: Ask, item: Item) -> Outcome:
        """The ask's own message shows who is on it (edited in place, again harmlessly on
        a retry), then one line in its thread says so."""
        shown = self._show_claim(ask)
        if shown is not None:
            return shown
        text = notes.claimed_text(ask.claimed_by)
        return self._post_once(ask.channel, ask.thread or ask.ts, item, text, None)

    def _show_claim(self, ask: Ask) -> Outcome | None:
        message, unread = own_message(self.slack, ask)
        if unread is not None or message is None:
            return unread  # a message gone has nothing to show it on
        listed = message.get("blocks")
        blocks = [dict(b) for b in listed or [] if isinstance(b, Mapping)]
        if not blocks and message.get("text"):  # a plain message: its words kept as a block
            said = {"type": "mrkdwn", "text": str(message["text"])[:3000]}
            blocks = [{"type": "section", "text": said}]
        meta = message.get("metadata")
        response = self.slack.update_message(
            ask.channel,
            ask.ts,
            text=str(message.get("text") or notes.claimed_text(ask.claimed_by)),
            blocks=notes.with_claim(blocks, ask.claimed_by),
            metadata=meta if isinstance(meta, Mapping) and meta.get("event_type") else None,
        )
        if response.ok or response.kind == GONE:
            return None
        return _retry(response)

    def _wait_for_someones_hours(
        self, whom: tuple[str, ...], now: float, hours: tuple[int, int]
    ) -> float:
        """0 when a user group is named (a group is mentioned at once) or one of the named
        members is within their own working hours; else until the first of them is."""
        members = [w for w in whom if w[:1] in ("U", "W")]
        if not members or any(w.startswith("S") for w in whom):
            return 0.0
        return min(wait_for_hours(now, self.direct.offset(m) or 0, hours) for m in members)

    def _whom(self, named: tuple[str, ...]) -> tuple[str, ...]:
        """``named`` with each @handle as its member's id; as written where Slack cannot
        say now or no member holds it (then it is shown, not mentioned)."""
        handles = tuple(whom for whom in named if whom.startswith("@"))
        if not handles:
            return named
        try:
            resolved = self._directory.resolve(handles, "attention.escalateTo")
        except UnknownHandle:
            return named
        if len(resolved.ids) < len(handles):
            return named
        return (*(whom for whom in named if not whom.startswith("@")), *sorted(resolved.ids))

    def _closed(self, ask: Ask) -> Outcome:
        """Every direct message of the ask says who answered, when and how."""
        if ask.is_open:
            return Delivered("open again")
        for _member, where in ask.dms:
            channel, _, ts = where.partition(":")
            response = self.slack.update_message(
                channel, ts, text=notes.closed_text(ask), blocks=notes.closed_blocks(ask)
            )
            if not response.ok and response.kind != GONE:
                return _retry(response)
        return Delivered()

    # -- posting once ------------------------------------------------------------------

    def _post_once(
        self, channel: str, thread: str, item: Item, text: str, blocks: list[dict] | None
    ) -> Outcome:
        if item.maybe_delivered or item.attempts > 1:
            found = marks.find_marked(self.slack, channel, thread, item.key, "")
            if found is None:
                return RetryLater("cannot read the thread to look for the post")
            if found:
                return Delivered("found posted")
        response = self.slack.post_message(
            channel,
            text=text,
            blocks=blocks,
            thread_ts=thread or None,
            metadata=marks.metadata(MARK, item.key, ""),
        )
        return Delivered() if response.ok else _retry(response, uncertain=True)

    def _dm_once(
        self, ask: Ask, member: str, channel: str, item: Item, text: str, blocks: list[dict]
    ) -> Outcome:
        if item.maybe_delivered or item.attempts > 1:
            found = marks.find_marked(self.slack, channel, "", item.key, _before(ask.ts))
            if found is None:
                return RetryLater("cannot read the direct message to look for the post")
            if found:
                self.asks.sent_dm(ask.id, member, f"{channel}:{found}")
                return Delivered("found posted")
        response = self.slack.post_message(
            channel, text=text, blocks=blocks, metadata=marks.metadata(MARK, item.key, "")
        )
        if not response.ok:
            return _retry(response, uncertain=True)
        self.asks.sent_dm(ask.id, member, f"{response.channel or channel}:{response.ts}")
        return Delivered()

    def _current(self, ask_id: str, member: str) -> str:
        now = self.asks.get(ask_id)
        return now.dm_of(member) if now is not None else ""

    def _original(self, ask: Ask) -> tuple[list[Mapping[str, Any]], Outcome | None]:
        return original(self.slack, ask)


def original(slack: SlackTransport, ask: Ask) -> tuple[list[Mapping[str, Any]], Outcome | None]:
    """The ask's own message's blocks (its digest and answers), to carry into the direct
    message or under a press from the Home; none when it is gone; a retry when Slack
    cannot say now."""
    message, unread = own_message(slack, ask)
    blocks = message.get("blocks") if message is not None else None
    listed = blocks if isinstance(blocks, list) else []
    return [b for b in listed if isinstance(b, Mapping)], unread


def own_message(slack: SlackTransport, ask: Ask) -> tuple[Mapping[str, Any] | None, Outcome | None]:
    """The ask's own message as Slack has it now; None when it is gone; a retry when
    Slack cannot say now."""
    response = slack.replies(ask.channel, ask.ts, limit=1)
    messages = response.data.get("messages") if response.ok else None
    if messages is None and response.kind != GONE and response.error != "thread_not_found":
        return None, _retry(response)
    found = [m for m in messages or [] if isinstance(m, Mapping) and m.get("ts") == ask.ts]
    if not found and ask.thread and ask.thread != ask.ts:
        replies = slack.thread(ask.channel, ask.thread)
        if replies is None:
            return None, RetryLater("cannot read the ask's thread")
        found = [m for m in replies if m.get("ts") == ask.ts]
    return (found[0] if found else None), None


def _before(ts: str) -> str:
    """Where a look for a direct message starts: a minute before the ask was posted, in
    Slack's own clock (the ask's ts), whatever this machine's clock says."""
    try:
        return f"{max(0.0, float(ts) - 60):.6f}"
    except ValueError:
        return ""


def _open(ask: Ask | None) -> bool:
    return ask is not None and ask.is_open


def _retry(response: Response, *, uncertain: bool = False) -> Outcome:
    if response.kind == RATE_LIMITED:
        return RetryLater(response.error, after=response.retry_after)
    if response.kind in (UNAVAILABLE,):
        return RetryLater(f"slack {response.method}: {response.error}", uncertain=uncertain)
    if response.kind == AUTH:
        return RetryLater(f"slack {response.method}: {response.error} (the operator must act)")
    return Failed(f"slack {response.method}: {response.error}")


def _failed(response: Response | None, what: str) -> Outcome:
    if response is None:
        return Failed(what)
    if response.error == "missing_scope":
        return Failed(f"{what}: the app lacks im:write (add it: docs/attention.md)")
    return _retry(response)
