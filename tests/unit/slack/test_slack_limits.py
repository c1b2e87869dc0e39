"""Slack's limits as a whole: one budget per method for every slot; a hold names one thing."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from looproom.slack import responses as t
from looproom.slack.limits import COMEBACK, MethodLimits, Tier
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, Limit

ROOM, OTHER = "C0LOOP0001", "C0OTHER001"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_tier_spends_its_burst_then_gives_turns_at_its_rate() -> None:
    clock = Clock()
    limits = MethodLimits({"chat.update": Tier(per_minute=60, burst=2)}, clock=clock)
    assert [limits.reserve("chat.update", most=0.0) for _ in range(2)] == [0.0, 0.0]
    assert limits.reserve("chat.update", most=0.5) is None  # a second away: nothing taken
    assert limits.reserve("chat.update", most=1.0) == 1.0  # taken: the next one queues behind
    assert limits.reserve("chat.update", most=5.0) == 2.0
    clock.now += 60
    assert limits.reserve("chat.update", most=0.0) == 0.0
    assert limits.reserve("chat.postMessage", most=0.0) == 0.0  # paced per channel instead


def test_a_caller_refused_a_turn_is_expected_back_for_one_just_after_its_wait() -> None:
    clock = Clock()
    limits = MethodLimits({"chat.update": Tier(per_minute=60, burst=1)}, clock=clock)
    assert limits.wanted("chat.update") == 0.0
    assert limits.reserve("chat.update", most=0.0) == 0.0
    assert limits.reserve("chat.update", most=0.0) is None  # a delivery, back to its queue
    assert limits.wanted("chat.update") == 1.0 + COMEBACK  # its wait, and its way back
    clock.now += 1.0 + COMEBACK
    assert limits.wanted("chat.update") == 0.0
    assert limits.wanted("reactions.add") == 0.0  # one method's callers only


def test_a_hold_names_one_method_and_ends_with_its_wait() -> None:
    clock = Clock()
    limits = MethodLimits({}, clock=clock)
    limits.hold("chat.update", 30.0)
    assert limits.reserve("chat.update", most=2.0) is None
    assert limits.wait("chat.update") == 30.0
    assert limits.reserve("reactions.add", most=0.0) == 0.0
    clock.now += 30
    assert limits.reserve("chat.update", most=0.0) == 0.0


def test_of_slots_answered_429_together_one_alone_finds_out_whether_slack_takes_more() -> None:
    limits = MethodLimits({"chat.update": Tier(per_minute=60, burst=5)}, clock=Clock())
    assert limits.find_out("chat.update")  # this slot's retry is the one
    claims: list[bool] = []
    others = [
        threading.Thread(target=lambda: claims.append(limits.find_out("chat.update")))
        for _ in range(8)
    ]
    for thread in others:
        thread.start()
    for thread in others:
        thread.join(10.0)
    assert claims == [False] * 8  # no other slot retries beside it
    assert limits.find_out("chat.update")  # still this slot's
    assert limits.find_out("reactions.add") is True  # one method's calls only
    limits.answered("chat.update", limited=False)  # Slack took it: anyone may again
    after: list[bool] = []
    thread = threading.Thread(target=lambda: after.append(limits.find_out("chat.update")))
    thread.start()
    thread.join(10.0)
    assert after == [True]


def test_after_a_429_slots_woken_late_for_their_turns_leave_a_spacing_apart() -> None:
    clock = Clock()
    limits = MethodLimits({"chat.update": Tier(per_minute=30, burst=5)}, clock=clock)
    assert limits.reserve("chat.update", most=0.0) == 0.0
    assert limits.leave("chat.update") == 0.0
    limits.hold("chat.update", 1.0)  # Slack said 429: from now on its steady rate, 2 s apart
    clock.now += 1.0
    assert limits.reserve("chat.update", most=0.0) == 0.0  # the call finding out goes ...
    assert limits.leave("chat.update") == 0.0  # ... when Slack said, not a spacing later
    limits.answered("chat.update", limited=False)  # ... and is taken
    reserved, stalled = threading.Barrier(4), threading.Event()
    turns: list[float | None] = []
    extra: list[float] = []

    def slot() -> None:
        turns.append(limits.reserve("chat.update", most=10.0))
        reserved.wait(10.0)
        stalled.wait(10.0)  # its turn came while the process stood still
        extra.append(limits.leave("chat.update"))

    slots = [threading.Thread(target=slot) for _ in range(3)]
    for thread in slots:
        thread.start()
    reserved.wait(10.0)
    assert sorted(turns) == [2.0, 4.0, 6.0]  # two seconds apart, as Slack takes them
    clock.now += 20.0  # every turn is past: woken together, they would leave at once
    stalled.set()
    for thread in slots:
        thread.join(10.0)
    assert sorted(extra) == [0.0, 2.0, 4.0]  # they leave two seconds apart all the same


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop"), (OTHER, "elsewhere")]) as fake:
        yield fake


def _transport(slack: FakeSlack, limits: MethodLimits | None = None) -> SlackTransport:
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport.beside(client)
    if limits is not None:
        transport.limits = limits
    return transport


def test_a_429_holds_its_method_for_every_slot_and_nothing_else(slack: FakeSlack) -> None:
    transport = _transport(slack)
    first = transport.post_message(ROOM, text="v1")
    other = transport.post_message(OTHER, text="v1")
    slack.fail("chat.update", "429", retry_after=30)
    assert transport.update_message(ROOM, first.ts, text="v2").kind == t.RATE_LIMITED
    # Another slot's edit in another room waits for the same Retry-After, without asking.
    held = transport.update_message(OTHER, other.ts, text="v2")
    assert (held.kind, held.retry_after is not None and held.retry_after > 2) == (
        t.RATE_LIMITED,
        True,
    )
    assert [c.status for c in slack.calls_to("chat.update")] == [429]
    # What the 429 did not name goes on: another method, and the rooms' posts.
    assert transport.add_reaction(ROOM, first.ts, "eyes").ok
    assert transport.post_message(OTHER, text="still posting").ok


def test_a_post_429_holds_its_channel_not_the_method(slack: FakeSlack) -> None:
    transport = _transport(slack)
    slack.fail("chat.postMessage", "429", retry_after=30)
    assert transport.post_message(ROOM, text="held").kind == t.RATE_LIMITED
    assert transport.post_wait(ROOM) > 2
    assert transport.post_wait(OTHER) == 0
    assert transport.post_message(OTHER, text="another room").ok


def _edit_from_slots(transport: SlackTransport, slack: FakeSlack, slots: int, each: int) -> list:
    """``slots`` threads, each editing its own message ``each`` times; every reply."""
    posted = [transport.post_message(ROOM, text=f"slot {n}").ts for n in range(slots)]
    replies: list = []
    lock = threading.Lock()

    def slot(ts: str) -> None:
        for n in range(each):
            response = transport.update_message(ROOM, ts, text=f"edit {n}")
            with lock:
                replies.append(response)

    threads = [threading.Thread(target=slot, args=(ts,)) for ts in posted]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60.0)
    return replies


def test_slots_that_meet_slacks_burst_stop_at_the_first_429_not_each_on_its_own(
    slack: FakeSlack,
) -> None:
    # Slack's budget is smaller than the bot assumes: it answers 429 with a Retry-After
    # too long to wait inline. Every call after it waits for it, whichever slot makes it.
    slack.limits = {"chat.update": Limit(per_minute=1, burst=5)}
    slots, each = 8, 3
    replies = _edit_from_slots(_transport(slack), slack, slots, each)
    answered_429 = [c for c in slack.calls_to("chat.update") if c.status == 429]
    assert len(replies) == slots * each
    assert 1 <= len(answered_429) <= slots  # at most the calls already on their way
    held = [r for r in replies if r.kind == t.RATE_LIMITED]
    assert len(held) == slots * each - 5  # each told to come back later, none lost
    assert all(r.retry_after and r.retry_after > 0 for r in held)


def test_a_budget_that_matches_slacks_meets_no_429_at_all(slack: FakeSlack) -> None:
    slack.limits = {"chat.update": Limit(per_minute=1, burst=5)}
    limits = MethodLimits({"chat.update": Tier(per_minute=1, burst=5)})
    replies = _edit_from_slots(_transport(slack, limits), slack, slots=8, each=3)
    assert [c.status for c in slack.calls_to("chat.update")] == [200] * 5
    assert sum(r.ok for r in replies) == 5
    assert all(r.kind == t.RATE_LIMITED for r in replies if not r.ok)
