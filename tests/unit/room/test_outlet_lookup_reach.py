"""How far the Slack outlet looks for a post that may have landed before posting it again:
its thread's first 2 000 messages, ten pages of 200 (`docs/rooms.md`). A post that landed
behind a 500 as the thread's 2 000th message is found and not posted twice; as the
2 001st it is past the reach and posted again — the limit a very long thread meets,
pinned here so a change to it is seen.

Against the loopback Slack through the real transport; the thread's other replies are
said in it by a member."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient

from looproom.durable.outcome import Delivered, RetryLater
from looproom.events import KNOWN_EVENTS, Event
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

LOOP, ITEM, ALICE = "C0LOOP0001", "github:acme/api#7", "U0ALICE01"
DOCUMENTED_REACH = 10 * 200


class Clock:
    """The pacer's clock, moved a second before each delivery: one event a second."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Outlet:
    def __init__(self, slack: FakeSlack) -> None:
        self.clock = Clock()
        client = WebClient(token=BOT_TOKEN, base_url=slack.url)
        transport = SlackTransport.beside(client, pacer=Pacer(clock=self.clock))
        settings = Settings(channel="#the-loop", subscribe=KNOWN_EVENTS)
        self.outlet = SlackOutlet(transport, BindingBook({}), settings)

    def deliver(self, event: Event) -> Any:
        self.clock.now += 1.0
        return self.outlet.deliver(event, maybe_delivered=False)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop")]) as fake:
        yield fake


def _event(n: int) -> Event:
    detail = {"phase": "design", "node": f"step-{n}"}
    return Event("phase.progress", ITEM, id=f"evt-{n}", text=f"Step {n} done.", detail=detail)


def _landed_as(slack: FakeSlack, position: int) -> tuple[Outlet, list[Any]]:
    """A post that landed behind a 500 as the thread's ``position``-th message (the parent
    the first); the outlet and the thread's messages before its retry."""
    outlet = Outlet(slack)
    assert isinstance(outlet.deliver(_event(1)), Delivered)
    (parent,) = slack.top_level(LOOP)
    for n in range(position - 3):  # the parent and event 1's reply are the first two
        slack.say(LOOP, ALICE, f"words {n}", thread_ts=parent["ts"])
    slack.fail("chat.postMessage", "land_then_5xx")
    assert isinstance(outlet.deliver(_event(2)), RetryLater)
    return outlet, [parent, *slack.thread(LOOP, parent["ts"])]


def _copies(slack: FakeSlack) -> int:
    return [
        (m.get("metadata") or {}).get("event_payload", {}).get("key") for m in slack.messages(LOOP)
    ].count("evt-2")


def test_a_post_that_landed_as_the_threads_2000th_message_is_found(slack: FakeSlack) -> None:
    outlet, thread = _landed_as(slack, DOCUMENTED_REACH)
    assert len(thread) == DOCUMENTED_REACH
    outcome = outlet.deliver(_event(2))
    assert isinstance(outcome, Delivered) and "already" in outcome.detail
    assert _copies(slack) == 1


def test_one_that_landed_as_the_2001st_is_past_the_reach_and_posted_again(
    slack: FakeSlack,
) -> None:
    outlet, thread = _landed_as(slack, DOCUMENTED_REACH + 1)
    assert len(thread) == DOCUMENTED_REACH + 1
    outcome = outlet.deliver(_event(2))
    assert isinstance(outcome, Delivered) and "already" not in outcome.detail
    assert _copies(slack) == 2
