"""A poll keeps the pace Slack gives the app for the history methods, counted, never timed.

The loopback fake of Slack keeps Slack's published limit for an app distributed outside the
Marketplace — one ``conversations.replies`` call a minute, pages of 15 — on a clock the test
moves: the catch-up (the poll's one cycle) waits its turns on that clock, through the real
transport and slack_sdk over HTTP. Shown here: with ``slack.read.app: distributed`` no call
is refused and the calls never outnumber the minutes gone by, a thread with more new
messages than a page is read over two cycles and a room's top level over two pages each in
its turn, with nothing lost or doubled; and an app that
claims tier 3 when Slack holds it to one a minute meets Slack's refusals — what the setting
is for.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from slack_sdk.web import WebClient

from looproom.catchup.catchup import CatchUp
from looproom.catchup.cursors import Cursors
from looproom.settings.read import ReadSettings
from looproom.slack.limits import MethodLimits
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import (
    BOT_TOKEN,
    OUTSIDE_MARKETPLACE,
    OUTSIDE_MARKETPLACE_PAGE,
    FakeSlack,
)

ROOM, KICKOFF, ALICE = "C0PACE0001", "C0PACE0002", "U0ALICE01"
REPLIES, HISTORY = "conversations.replies", "conversations.history"


class Clock:
    """The one clock Slack's limit and the bot's budget are kept by; moved, never waited."""

    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        # A wait always lets some time pass, as a real one does: a budget's rounding left
        # over (1e-13 s) must not be a step too small to move the clock at all.
        self.now += max(1e-6, seconds)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "pace"), (KICKOFF, "kickoff")]) as fake:
        fake.limits = {REPLIES: OUTSIDE_MARKETPLACE, HISTORY: OUTSIDE_MARKETPLACE}
        fake.history_page_limit = OUTSIDE_MARKETPLACE_PAGE
        yield fake
        fake.release()


def _poll(slack: FakeSlack, clock: Clock, app: str, threads: list[str]) -> tuple[CatchUp, list]:
    """One poll cycle's reader over ``threads``, the budget as ``slack.read.app`` says."""
    slack.clock = clock
    read = ReadSettings(mode="poll", app=app)
    transport = SlackTransport.beside(
        WebClient(token=BOT_TOKEN, base_url=slack.url),
        limits=MethodLimits(read.history_tiers(), clock=clock),
        max_inline_wait=0.0,
    )
    transport.history_page = read.history_page()
    fed: list[dict] = []
    cursors = Cursors({})
    cursors.since(time.time() - 60)  # the bot kept cursors before these threads began
    poll = CatchUp(
        lambda: [(ROOM, thread) for thread in threads],
        lambda channel, thread, oldest: transport.thread(channel, thread, oldest, so_far=True),
        fed.append,
        cursors,
        rooms=lambda: [KICKOFF],  # a room whose top level is for the bot, as a kickoff's
        read_room=transport.top_level,
        turn=transport.limits.wait,
        pause=clock.advance,
    )
    return poll, fed


def _threads(slack: FakeSlack, replies: list[int]) -> tuple[list[str], list[str]]:
    """Threads with ``replies[i]`` new replies each: their parents and every reply's ts."""
    parents = [slack.say(ROOM, ALICE, f"work item {i}")["ts"] for i in range(len(replies))]
    said = [
        slack.say(ROOM, ALICE, f"answer {n} in {i}", thread_ts=parent)["ts"]
        for i, (parent, count) in enumerate(zip(parents, replies, strict=True))
        for n in range(count)
    ]
    return parents, said


def test_a_distributed_apps_poll_never_outpaces_one_call_a_minute_and_loses_nothing(
    slack: FakeSlack,
) -> None:
    clock = Clock()
    parents: list[str] = []
    poll, fed = _poll(slack, clock, "distributed", parents)
    start = clock.now
    new_threads, said = _threads(slack, [20, 1, 1, 1])  # the first: more than a page of 15
    parents += new_threads
    said += [slack.say(KICKOFF, ALICE, f"kickoff {n}")["ts"] for n in range(20)]  # two pages

    poll.run()
    poll.run()  # the next cycle at once: the shortest interval cannot hurry it

    for method in (REPLIES, HISTORY):
        calls = slack.calls_to(method)
        assert [c for c in calls if c.fault] == []  # Slack refused none
        # In any minute, one call: the k-th no sooner than k minutes after the first.
        assert all(call.at >= calls[0].at + 60 * k for k, call in enumerate(calls))
        assert calls[0].at >= start
        assert {int(c.args["limit"]) for c in calls} == {OUTSIDE_MARKETPLACE_PAGE}
    assert len(slack.calls_to(REPLIES)) == 8  # two cycles of four threads, a page each
    assert len(slack.calls_to(HISTORY)) == 3  # the room's two pages, then nothing new
    assert sorted(m["ts"] for m in fed) == sorted(said)  # all read, none twice


def test_an_app_held_to_one_call_a_minute_but_set_as_internal_meets_slacks_refusals(
    slack: FakeSlack,
) -> None:
    clock = Clock()
    parents, _said = _threads(slack, [1, 1, 1, 1])
    poll, _fed = _poll(slack, clock, "internal", parents)
    poll.run()
    assert [c for c in slack.calls_to(REPLIES) if c.fault == "limit"] != []
