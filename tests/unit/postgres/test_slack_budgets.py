"""Two replicas keep Slack's limits together, not each its own: the shared mode's budgets.

Each replica here is a transport of its own on a database connection pool of its own, as
two processes are; they share the wall clock. The fake Slack enforces its limits across
the app, as Slack does, and answers a call over them 429.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.postgres import database as database_module
from looproom.postgres.database import Database
from looproom.postgres.slack_budgets import SharedBudgets, SharedLimits, SharedPacer
from looproom.slack import responses as t
from looproom.slack.limits import Tier
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, Limit
from tests.support.postgres import PostgresServer
from tests.support.wait import wait_for

ROOM = "C0LOOP0001"
#: Three edits at once, then one a minute: none earned back while a test runs.
EDITS = {"chat.update": Tier(per_minute=1, burst=3)}


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        fake.limits = {
            "chat.update": Limit(per_minute=1, burst=3),
            "chat.postMessage": Limit(per_minute=1, burst=3, per_channel=True),
        }
        yield fake


@pytest.fixture
def pools(database_url: str) -> Iterator[tuple[Database, Database]]:
    """Two replicas' connection pools on one database."""
    one, two = Database(database_url), Database(database_url)
    yield one, two
    one.close()
    two.close()


def _replica(slack: FakeSlack, database: Database, clock: Clock) -> SlackTransport:
    budgets = SharedBudgets(database)
    return SlackTransport.beside(
        WebClient(token=BOT_TOKEN, base_url=slack.url),
        pacer=SharedPacer(budgets, clock=clock),
        limits=SharedLimits(budgets, EDITS, clock),
        max_inline_wait=0.0,
    )


def test_two_replicas_posting_into_one_room_take_its_burst_once(
    slack: FakeSlack, pools: tuple[Database, Database]
) -> None:
    clock = Clock()
    one, two = (_replica(slack, pool, clock) for pool in pools)
    assert [one.post_message(ROOM, text=f"a{n}").ok for n in range(2)] == [True, True]
    assert two.post_message(ROOM, text="b0").ok
    held = two.post_message(ROOM, text="b1")
    assert held.kind == t.RATE_LIMITED and held.retry_after
    assert one.post_message(ROOM, text="a2").kind == t.RATE_LIMITED
    # Slack never had to refuse: the posts over its budget were never made.
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [200, 200, 200]
    clock.now += 1.0  # Slack's pace, not the pair's: what a round trip more would push over
    assert two.post_message(ROOM, text="b2").kind == t.RATE_LIMITED
    # The pair's pace, a tenth under Slack's (docs/deploy.md): a moment before it, still
    # held; at it, one more (the fake's limit is Slack's, less).
    clock.now += 1.0 / 0.9 - 1.0 - 1e-6
    assert two.post_message(ROOM, text="b2").kind == t.RATE_LIMITED
    clock.now += 2e-6
    two.post_message(ROOM, text="b2")
    assert one.post_message(ROOM, text="a3").kind == t.RATE_LIMITED
    assert [c.args["text"] for c in slack.calls_to("chat.postMessage")][3:] == ["b2"]


def test_each_replica_pacing_alone_would_post_into_slacks_limit(slack: FakeSlack) -> None:
    # What the shared budget prevents: two pacers, each with the whole burst.
    clock = Clock()
    one, two = (
        SlackTransport.beside(
            WebClient(token=BOT_TOKEN, base_url=slack.url, retry_handlers=[]),
            pacer=Pacer(clock=clock),
            max_inline_wait=0.0,
        )
        for _ in range(2)
    )
    for n in range(2):
        one.post_message(ROOM, text=f"a{n}")
        two.post_message(ROOM, text=f"b{n}")
    assert [c.fault for c in slack.calls_to("chat.postMessage")] == ["", "", "", "limit"]


def test_two_replicas_share_a_methods_budget(
    slack: FakeSlack, pools: tuple[Database, Database]
) -> None:
    clock = Clock()
    one, two = (_replica(slack, pool, clock) for pool in pools)
    slack.limits.pop("chat.postMessage")
    ts = one.post_message(ROOM, text="v0").ts
    assert [one.update_message(ROOM, ts, text=f"v{n}").ok for n in (1, 2)] == [True, True]
    assert two.update_message(ROOM, ts, text="v3").ok
    assert two.update_message(ROOM, ts, text="v4").kind == t.RATE_LIMITED
    assert [c.status for c in slack.calls_to("chat.update")] == [200, 200, 200]


def test_once_a_methods_burst_is_spent_the_pair_calls_it_a_tenth_under_its_tier(
    slack: FakeSlack, pools: tuple[Database, Database]
) -> None:
    # Two catch-ups reading every thread at once spend a tier's burst; from then on a turn
    # at exactly Slack's spacing could reach Slack a round trip sooner than it, refused.
    clock = Clock()
    one, two = (_replica(slack, pool, clock) for pool in pools)
    slack.limits.clear()  # the fake's limits keep real time; here the test's clock says when
    ts = one.post_message(ROOM, text="v0").ts
    assert [one.update_message(ROOM, ts, text=f"v{n}").ok for n in (1, 2)] == [True, True]
    assert two.update_message(ROOM, ts, text="v3").ok  # the burst of three, spent
    clock.now += 60.0  # Slack's spacing at one a minute: not yet the pair's
    assert two.update_message(ROOM, ts, text="v4").kind == t.RATE_LIMITED
    assert one.update_message(ROOM, ts, text="v4").kind == t.RATE_LIMITED
    clock.now += 60.0 / 0.9 - 60.0 - 1e-6  # a moment before a tenth under Slack's pace
    assert two.update_message(ROOM, ts, text="v4").kind == t.RATE_LIMITED
    clock.now += 2e-6  # at it: one call more
    assert two.update_message(ROOM, ts, text="v4").ok
    assert one.update_message(ROOM, ts, text="v5").kind == t.RATE_LIMITED
    assert [c.args["text"] for c in slack.calls_to("chat.update")] == ["v1", "v2", "v3", "v4"]


def test_a_429_one_replica_hears_holds_the_other_for_its_retry_after(
    slack: FakeSlack, pools: tuple[Database, Database]
) -> None:
    clock = Clock()
    one, two = (_replica(slack, pool, clock) for pool in pools)
    slack.limits.clear()
    ts = one.post_message(ROOM, text="v0").ts
    slack.fail("chat.update", "429", retry_after=30)
    assert one.update_message(ROOM, ts, text="v1").kind == t.RATE_LIMITED
    held = two.update_message(ROOM, ts, text="v2")
    assert held.kind == t.RATE_LIMITED and held.retry_after and held.retry_after > 29
    slack.fail("chat.postMessage", "429", retry_after=20)
    assert one.post_message(ROOM, text="p1").kind == t.RATE_LIMITED
    assert two.post_message(ROOM, text="p2").kind == t.RATE_LIMITED
    assert len(slack.calls_to("chat.update")) == 1  # the other replica never asked
    assert len(slack.calls_to("chat.postMessage")) == 2
    clock.now += 31.0
    assert two.update_message(ROOM, ts, text="v3").ok
    assert two.post_message(ROOM, text="p3").ok


def test_a_429_on_a_method_without_a_tier_holds_the_other_replica_too(
    slack: FakeSlack, pools: tuple[Database, Database]
) -> None:
    clock = Clock()
    one, two = (_replica(slack, pool, clock) for pool in pools)
    slack.fail("auth.test", "429", retry_after=30)
    assert one.auth_test().kind == t.RATE_LIMITED
    assert two.auth_test().kind == t.RATE_LIMITED
    assert len(slack.calls_to("auth.test")) == 1  # the other replica never asked
    clock.now += 31.0
    assert two.auth_test().ok


def test_while_the_database_is_unreachable_no_turn_is_handed_out(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The other replica's spending cannot be known: the call waits, as for a spent budget.
    monkeypatch.setattr(database_module, "CONNECT_TIMEOUT", 1.0)
    server = PostgresServer()
    server.start()
    try:
        pool = Database(server.new_database())
        replica = _replica(slack, pool, Clock())
        assert replica.post_message(ROOM, text="before").ok
        server.stop()
        assert replica.post_message(ROOM, text="during").kind == t.RATE_LIMITED
        assert replica.update_message(ROOM, "1.0", text="during").kind == t.RATE_LIMITED
        assert replica.post_message(ROOM, text="during").kind == t.RATE_LIMITED
        said = [r.getMessage() for r in caplog.records if "shared budgets" in r.getMessage()]
        assert len(said) == 1 and "no call until the database answers" in said[0]  # not a call
        server.start()
        # A pooled connection the outage cut fails once more, then the pool opens another.
        wait_for(lambda: replica.post_message(ROOM, text="after").ok, 30, "a turn again")
        assert [c.args["text"] for c in slack.calls_to("chat.postMessage")] == ["before", "after"]
        assert any(r.getMessage().endswith("answers again") for r in caplog.records)
        pool.close()
    finally:
        server.close()


@given(st.lists(st.tuples(st.sampled_from((0, 1)), st.sampled_from((0.0, 0.1, 0.4, 1.3)))))
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_in_any_interleaving_the_pair_posts_within_one_budget(
    pools: tuple[Database, Database], turns: list[tuple[int, float]]
) -> None:
    # A token bucket's promise: any stretch of posts fits the burst plus the rate over it.
    clock, room = Clock(), f"C0{uuid.uuid4().hex[:10]}"  # a room of its own per example
    pacers = [SharedPacer(SharedBudgets(pool), rate=1.0, burst=3.0, clock=clock) for pool in pools]
    granted = []
    for replica, pause in turns:
        clock.now += pause
        if pacers[replica].reserve(room, 0.0) is not None:
            granted.append(clock.now)
    for i, first in enumerate(granted):
        for j in range(i, len(granted)):
            assert j - i + 1 <= 3.0 + 1.0 * (granted[j] - first) + 1e-9
    assert all(a <= b for a, b in pairwise(granted))
