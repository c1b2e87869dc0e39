"""The soak's driver: the-loop's events over the signed webhook, people's decisions in Slack.

One loop, every few hundredths of a second: arm the faults that are due, keep ``items``
work items in flight (a new one as one finishes, spread over the rooms), and move each one
on by a step when its time comes (see :mod:`soak.items`). An event is sent until the
webhook accepts it — a refused connection (the bot was killed) or a 503 is sent again with
the same id, as the-loop's sender does. Nothing here sleeps for the bot: every wait is a
step tried again later, bounded by the run's time and the drain's.

With several replicas each request goes to one that runs, drawn, as a load balancer with a
health check sends it (:meth:`soak.rig.Rig.pick`); Socket Mode envelopes go to the open
connections in turn, as Slack spreads them.
"""

from __future__ import annotations

import http.client
import json
import random
import time
import urllib.parse
from collections import Counter
from typing import Any

from soak.items import ANSWER, ANSWERS, APPROVE, STORY, Decision, Item
from soak.rig import ALICE, SIGNING_SECRET, Rig, channel
from tests.e2e.slackbot import SECRET, event_key
from tests.support import signed

#: Seconds between two steps of one work item (drawn), and before a step is tried again.
PAUSE, AGAIN = (2.0, 8.0), 0.5
#: The Approve button on a gate, and the question's "use the default" button.
BUTTONS = {APPROVE: "theloop:approve", ANSWER: "theloop:default"}
#: How a person decides: types in the thread, or presses the button — Slack hands the
#: press to the bot over HTTP (signed) or over its Socket Mode connection.
TYPE, PRESS_HTTP, PRESS_SOCKET = "typed", "pressed over HTTP", "pressed over Socket Mode"


class Driver:
    """Moves the work items of one run along; the rig is the bot and the fakes."""

    def __init__(self, rig: Rig, rng: random.Random, items: int) -> None:
        self.rig, self.rng, self.width = rig, rng, items
        self.items: list[Item] = []
        #: Events each replica's webhook accepted, by its index: the load balancer's spread.
        self.accepted_by: Counter[int] = Counter()
        self._numbers = [0] * rig.rooms

    def tick(self) -> None:
        """One round: a new work item for each one finished, and each step that is due."""
        now = time.monotonic()
        active = [item for item in self.items if not item.done]
        while len(active) < self.width:
            active.append(self._new_item())
        for item in active:
            if item.due <= now:
                self._step(item)

    def _new_item(self) -> Item:
        room = len(self.items) % self.rig.rooms
        self._numbers[room] += 1
        item = Item(room, self._numbers[room], due=time.monotonic())
        self.rig.add_item(item.ref)
        self.items.append(item)
        return item

    def _step(self, item: Item) -> None:
        step = item.next
        done = self._decide(item, step) if step in ANSWERS else self._send(item, step)
        if done:
            item.step += 1
            item.due = time.monotonic() + self.rng.uniform(*PAUSE)
        else:
            item.due = time.monotonic() + AGAIN

    # -- events --------------------------------------------------------------------------

    def _send(self, item: Item, stem: str) -> bool:
        """the-loop sends the event; True once the webhook accepted it."""
        previous = STORY[item.step - 1] if item.step else ""
        if previous in ANSWERS and not self._relayed(item, previous):
            return False  # the-loop moves on once the decision reached it
        bot = self.rig.pick(self.rng)
        if bot is None:
            return False
        event = item.event(stem)
        item.first_tried.setdefault(event["id"], time.monotonic())
        body = json.dumps(event).encode()
        headers = signed.webhook_headers(SECRET, body)
        try:
            status, answer = signed.post(bot.host, bot.port, signed.WEBHOOK_PATH, body, headers)
        except (OSError, http.client.HTTPException):
            return False  # killed mid-request: sent again, the same id
        if status in (200, 202):
            item.accepted.append((event, time.monotonic()))
            self.accepted_by[self.rig.bots.index(bot)] += 1
            return True
        if status >= 500:
            return False
        raise SystemExit(f"the webhook refused {event['id']}: {status} {answer[:300]!r}")

    def _relayed(self, item: Item, kind: str) -> bool:
        if kind == APPROVE:
            number = int(item.ref.rsplit("#", 1)[1])
            return any(c.startswith("approved") for c in self.rig.github.posted(item.repo, number))
        with self.rig.loop._changed:
            return any(reply.get("ref") == item.ref for reply in self.rig.loop.replies)

    # -- decisions -----------------------------------------------------------------------

    def _decide(self, item: Item, kind: str) -> bool:
        """A person answers the question once it is in the room and settled; True once
        the decision is admitted."""
        key = item.event(ANSWERS[kind])["id"]
        if self.rig.inbox_state(key) != "done":
            return False  # not settled yet: the bot may not know where the question is
        message = self._message(item, key)
        if message is None:
            return False
        decision = item.decisions.get(kind)
        if decision is None:
            decision = Decision(kind, self.rng.choice((TYPE, PRESS_HTTP, PRESS_SOCKET)))
            if decision.via != TYPE and not _button(message, BUTTONS[kind]):
                decision.via = TYPE
            decision.text = _words(item, kind, decision.via)
            item.decisions[kind] = decision
        if decision.via == TYPE:
            return self._type(item, message, decision)
        if decision.via == PRESS_SOCKET:
            return self._press_socket(item, message, decision)
        return self._press(item, message, decision)

    def _message(self, item: Item, key: str) -> dict[str, Any] | None:
        room = channel(item.room)[0]
        return next((m for m in self.rig.slack.messages(room) if event_key(m) == key), None)

    def _type(self, item: Item, message: dict[str, Any], decision: Decision) -> bool:
        """Typed in the work item's thread: in Slack at once, so admitted (the bot reads
        back what it missed); the envelope reaches the bot if it is connected."""
        room = channel(item.room)[0]
        said = self.rig.slack.say(room, ALICE, decision.text, thread_ts=message["thread_ts"])
        decision.tried = decision.admitted = True
        if self.rig.slack.socket_connected():
            self.rig.slack.push_envelope({"type": "event_callback", "event": said}, timeout=2.0)
        return True

    def _press(self, item: Item, message: dict[str, Any], decision: Decision) -> bool:
        """The button pressed, as Slack posts it to the bot's signed interactive route;
        admitted once the bot answers 200, pressed again otherwise."""
        bot = self.rig.pick(self.rng)
        if bot is None:
            return False
        payload = _press_payload(item, message, BUTTONS[decision.kind])
        body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        headers = signed.slack_headers(SIGNING_SECRET, body)
        decision.tried = True
        try:
            status, _answer = signed.post(
                bot.host, bot.port, signed.INTERACTIVE_PATH, body, headers
            )
        except (OSError, http.client.HTTPException):
            return False
        decision.admitted = status == 200
        return decision.admitted

    def _press_socket(self, item: Item, message: dict[str, Any], decision: Decision) -> bool:
        """The button pressed, as Slack hands it to the bot's Socket Mode connection:
        admitted once the bot acknowledged the envelope, pressed again otherwise."""
        if self.rig.pick(self.rng) is None or not self.rig.slack.socket_connected():
            return False
        payload = _press_payload(item, message, BUTTONS[decision.kind])
        decision.tried = True
        ack = self.rig.slack.push_envelope(payload, kind="interactive", timeout=5.0)
        decision.admitted = ack is not None
        return decision.admitted


def _words(item: Item, kind: str, via: str) -> str:
    """What the decision says: the typed words, or what the pressed button sends."""
    if via != TYPE:
        if kind == ANSWER:
            return str(item.event("15")["detail"]["default"])
        return ""
    if kind == APPROVE:
        return f"approve looks right for room {item.room} item {item.number}"
    return f"go with option 2 for room {item.room} item {item.number}"


def _button(message: dict[str, Any], action_id: str) -> dict[str, Any] | None:
    return next(
        (
            element
            for block in message.get("blocks", [])
            if block["type"] == "actions"
            for element in block["elements"]
            if element.get("action_id") == action_id
        ),
        None,
    )


def _press_payload(item: Item, message: dict[str, Any], action_id: str) -> dict[str, Any]:
    room = channel(item.room)[0]
    element = _button(message, action_id) or {"action_id": action_id}
    return {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": room},
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": room},
        "message": message,
        "actions": [{**element, "block_id": "b"}],
    }
