"""The delivery policy applied: what the room's thread holds after a work item's timeline,
through the real outlet and transport over the loopback fake of Slack; its memory kept in
the bot's storage across a restart; classic style posting everything."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient

from looproom.admin.text import why_text
from looproom.events import KNOWN_EVENTS, Event
from looproom.room.delivery_log import ITEM_CAP, DeliveryLog
from looproom.room.policy import Told
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack
from tests.support import messages, timeline

LOOP = "C0LOOP0001"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Room:
    """One outlet with the delivery policy, over storage that outlives it."""

    def __init__(self, slack: FakeSlack, store: dict[str, Any], style: str = "agentic") -> None:
        self.clock = Clock()
        client = WebClient(token=BOT_TOKEN, base_url=slack.url)
        transport = SlackTransport.beside(client, pacer=Pacer(clock=self.clock))
        settings = Settings(channel=LOOP, subscribe=KNOWN_EVENTS, room_style=style)
        self.told = DeliveryLog(store)
        self.outlet = SlackOutlet(
            transport, BindingBook(store), settings, interactive=True, told=self.told
        )

    def deliver(self, *wires: dict[str, Any]) -> None:
        for wire in wires:
            self.clock.now += 5.0
            outcome = self.outlet.deliver(Event.from_wire(wire), maybe_delivered=False)
            assert type(outcome).__name__ == "Delivered", outcome
            self.outlet.cards.draw_due()  # the parent's redraw, on the cards' stage


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop")]) as fake:
        yield fake


def keys(slack: FakeSlack) -> list[str]:
    found = []
    for message in slack.messages(LOOP):
        payload = (message.get("metadata") or {}).get("event_payload") or {}
        if payload.get("kind") == "event":
            found.append(payload["key"])
    return found


def by_id(name: str) -> dict[str, Any]:
    (found,) = [e for e in timeline.work_item() if e["id"] == name]
    return found


def test_the_timeline_posts_each_question_once_with_its_controls(slack: FakeSlack) -> None:
    Room(slack, {}).deliver(*timeline.work_item())
    posted = [c.args for c in slack.calls_to("chat.postMessage")]
    assert len(posted) == 12  # the parent and eleven replies, from 32 events
    shown = keys(slack)
    for gate in timeline.GATES:
        assert shown.count(gate) == 1, gate
    for message in slack.messages(LOOP):
        key = ((message.get("metadata") or {}).get("event_payload") or {}).get("key")
        if key in ("tl-requirements-gate", "tl-design-gate", "tl-pr-gate", "tl-checklist"):
            actions = [b for b in message["blocks"] if b["type"] == "actions"]
            assert actions, f"{key} has no controls"
    for dropped in ("tl-requirements-gate-again", "tl-tmux", "tl-requirements-ready"):
        assert dropped not in shown


def replies(slack: FakeSlack) -> list[dict[str, Any]]:
    return [m for m in slack.messages(LOOP) if m.get("thread_ts") not in (None, m["ts"])]


def test_progress_and_completion_edit_the_phases_one_message(slack: FakeSlack) -> None:
    room = Room(slack, {})
    room.deliver(by_id("tl-requirements-started"), by_id("tl-requirements-draft"))
    (phase,) = replies(slack)
    assert "Working on the requirements — step 1 of 2" in phase["text"]
    room.deliver(by_id("tl-requirements-done"))
    (phase,) = replies(slack)
    assert "Finished the requirements" in phase["text"] and "edited" in phase


def test_the_policys_memory_survives_a_restart(slack: FakeSlack) -> None:
    store: dict[str, Any] = {}
    Room(slack, store).deliver(messages.event("06", id="gate"))
    Room(slack, store).deliver(messages.event("06", id="gate-again"))
    assert keys(slack) == ["gate"]


def test_unreadable_memory_posts_everything_rather_than_nothing(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    store: dict[str, Any] = {}
    Room(slack, store).deliver(messages.event("06", id="gate"))
    store["room.told"] = {timeline.ITEM: "not a record"}
    with caplog.at_level(logging.WARNING):
        Room(slack, store).deliver(messages.event("06", id="gate-again"))
    assert keys(slack) == ["gate", "gate-again"]
    assert "unreadable" in caplog.text


def test_classic_style_posts_every_subscribed_event(slack: FakeSlack) -> None:
    Room(slack, {}, style="classic").deliver(*timeline.work_item())
    assert keys(slack) == [e["id"] for e in timeline.work_item()]
    assert not slack.calls_to("chat.update") or all(
        "metadata" in c.args and "parent" in str(c.args["metadata"])
        for c in slack.calls_to("chat.update")
    )


def test_why_names_the_rule_of_each_decision(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    room = Room(slack, {})
    with caplog.at_level(logging.DEBUG, logger="looproom.room.slack_outlet"):
        room.deliver(by_id("tl-requirements-gate"), by_id("tl-requirements-ready"))
    assert "gate-collapse dropped comment.agent" in caplog.text
    text = why_text(timeline.ITEM, room.told.items(), room.told.why(timeline.ITEM), 2000.0)
    assert "`phase-approval-pending · requirements-approval`: *post* (post)" in text
    assert "`comment.agent`: *drop* (gate-collapse)" in text
    assert "No decisions kept" in why_text("acme/api#1", [], [], 0.0)


def test_a_gate_found_after_a_crash_is_remembered_as_posted(slack: FakeSlack) -> None:
    store: dict[str, Any] = {}
    gate = messages.event("06", id="gate")
    Room(slack, store).deliver(gate)
    store.pop("room.told")  # the crash came between the post and the memory's write
    restarted = Room(slack, store)
    restarted.clock.now += 5.0
    outcome = restarted.outlet.deliver(Event.from_wire(gate), maybe_delivered=True)
    assert "already in" in str(outcome)
    restarted.deliver(messages.event("06", id="gate-again"))
    assert keys(slack) == ["gate"]


def test_the_memory_is_bounded_and_forgets_the_least_recent_item_first() -> None:
    store: dict[str, Any] = {}
    book = DeliveryLog(store)
    for n in range(ITEM_CAP + 3):
        book.put(f"github:acme/api#{n}", Told(done=f"{n}.0"))
    assert len(store["room.told"]) == ITEM_CAP
    assert book.get("github:acme/api#0") == Told()  # forgotten: the room hears it in full
    assert book.get(f"github:acme/api#{ITEM_CAP + 2}") == Told(done=f"{ITEM_CAP + 2}.0")
