"""How far the Slack outlet looks for a post that may have landed before posting it again
(`docs/rooms.md`): its thread's messages from ten minutes before the event's time (the
clocks of the-loop and Slack may disagree that much), ten pages of 200. So a long thread's
older replies do not use up the reach; an event that carries no time is looked for in the
thread's first 2 000 messages — found as the 2 000th, posted again as the 2 001st.

Against the loopback Slack through the real transport; the thread's other replies are
said in it by a member."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from datetime import datetime, timezone
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


def _event(n: int, ts: str = "") -> Event:
    detail = {"phase": "design", "node": f"step-{n}"}
    text = f"Step {n} done."
    return Event("phase.progress", ITEM, id=f"evt-{n}", text=text, detail=detail, ts=ts)


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _landed_as(slack: FakeSlack, position: int, event: Event) -> tuple[Outlet, list[Any]]:
    """``event``'s post, landed behind a 500 as the thread's ``position``-th message (the
    parent the first); the outlet and the thread's messages before its retry."""
    outlet = Outlet(slack)
    assert isinstance(outlet.deliver(_event(1)), Delivered)
    (parent,) = slack.top_level(LOOP)
    for n in range(position - 3):  # the parent and event 1's reply are the first two
        slack.say(LOOP, ALICE, f"words {n}", thread_ts=parent["ts"])
    slack.fail("chat.postMessage", "land_then_5xx")
    assert isinstance(outlet.deliver(event), RetryLater)
    return outlet, [parent, *slack.thread(LOOP, parent["ts"])]


def _copies(slack: FakeSlack) -> int:
    return [
        (m.get("metadata") or {}).get("event_payload", {}).get("key") for m in slack.messages(LOOP)
    ].count("evt-2")


def test_a_post_that_landed_as_the_threads_2000th_message_is_found(slack: FakeSlack) -> None:
    outlet, thread = _landed_as(slack, DOCUMENTED_REACH, _event(2))
    assert len(thread) == DOCUMENTED_REACH
    outcome = outlet.deliver(_event(2))
    assert isinstance(outcome, Delivered) and "already" in outcome.detail
    assert _copies(slack) == 1


def test_one_that_landed_as_the_2001st_is_past_the_reach_and_posted_again(
    slack: FakeSlack,
) -> None:
    outlet, thread = _landed_as(slack, DOCUMENTED_REACH + 1, _event(2))
    assert len(thread) == DOCUMENTED_REACH + 1
    outcome = outlet.deliver(_event(2))
    assert isinstance(outcome, Delivered) and "already" not in outcome.detail
    assert _copies(slack) == 2


def test_a_post_in_a_long_thread_is_looked_for_from_its_events_time(slack: FakeSlack) -> None:
    outlet = Outlet(slack)
    assert isinstance(outlet.deliver(_event(1)), Delivered)
    (parent,) = slack.top_level(LOOP)
    for n in range(DOCUMENTED_REACH + 500):  # an hour of talk before the event
        slack.say(LOOP, ALICE, f"words {n}", thread_ts=parent["ts"])
    slack.later(3600)
    event = _event(2, _iso(math.ceil(time.time()) + 3600))
    slack.fail("chat.postMessage", "land_then_5xx")
    assert isinstance(outlet.deliver(event), RetryLater)
    outcome = outlet.deliver(event)
    assert isinstance(outcome, Delivered) and "already" in outcome.detail
    assert _copies(slack) == 1


@pytest.mark.parametrize(("ahead", "copies"), [(599, 1), (601, 2)])
def test_the_loops_clock_may_run_ten_minutes_ahead_of_slacks(
    slack: FakeSlack, ahead: int, copies: int
) -> None:
    # The event's time is the-loop's; its post's is Slack's: one that says it came
    # ``ahead`` seconds after its own post landed is still found within ten minutes.
    outlet = Outlet(slack)
    assert isinstance(outlet.deliver(_event(1)), Delivered)
    event = _event(2, _iso(math.ceil(time.time()) + ahead))
    slack.fail("chat.postMessage", "land_then_5xx")
    assert isinstance(outlet.deliver(event), RetryLater)
    outlet.deliver(event)
    assert _copies(slack) == copies
