"""The lease at its edges, on a real PostgreSQL server, the replicas' clock driven by hand.

``THELOOP_LEASE_SECONDS`` is "how long a replica that stopped keeps its claims before
another takes them over" (docs/configuration.md): at exactly a lease after its last word
the claim is still the holder's; one step past, any other replica takes it over. The same
edge after a heartbeat renewed the claim, for the list of replicas seen within a lease,
and for the fence a delivery asks before a side effect leaves (held only while more than a
quarter of the lease is left: on the edge it says no, the side where nothing is done twice).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.postgres.replicas import Heartbeat

LEASE = 30.0
START = 1_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def _past(moment: float) -> float:
    """The next instant the clock can tell after ``moment`` (one step past it)."""
    return math.nextafter(moment, math.inf)


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    opened = Database(database_url)
    yield opened
    opened.close()


def _queues(database: Database, clock: Clock) -> tuple[Heartbeat, PostgresQueue, PostgresQueue]:
    beat_a = Heartbeat(database, "a", LEASE, clock=clock)
    a = PostgresQueue(database, "inbox", replica=beat_a.id, lease=LEASE, clock=clock)
    b = PostgresQueue(database, "inbox", replica="b", lease=LEASE, clock=clock)
    return beat_a, a, b


def test_a_claim_exactly_a_lease_old_is_kept_and_one_step_past_it_is_taken_over(
    database: Database,
) -> None:
    clock = Clock()
    _, a, b = _queues(database, clock)
    a.put("e1", "{}")
    assert a.claim().key == "e1"
    clock.now = START + LEASE
    assert b.claim() is None  # still a's, to the instant
    clock.now = _past(START + LEASE)
    taken = b.claim()
    assert (taken.key, taken.maybe_delivered, taken.attempts) == ("e1", True, 2)


def test_a_claim_renewed_by_a_heartbeat_lapses_a_lease_after_that_beat_not_before(
    database: Database,
) -> None:
    clock = Clock()
    beat_a, a, b = _queues(database, clock)
    a.put("e1", "{}")
    a.claim()
    renewed = START + LEASE - 1  # a beats just before its first lease would run out
    clock.now = renewed
    beat_a.beat()
    clock.now = _past(START + LEASE)  # past the first lease: the renewal holds
    assert b.claim() is None
    clock.now = renewed + LEASE
    assert b.claim() is None
    clock.now = _past(renewed + LEASE)
    assert b.claim().key == "e1"


def test_a_replica_whose_claim_was_taken_over_cannot_settle_it(database: Database) -> None:
    clock = Clock()
    _, a, b = _queues(database, clock)
    a.put("e1", "{}")
    a.claim()
    clock.now = _past(START + LEASE)
    b.claim()
    a.done("e1")
    assert b.get("e1").state == "inflight"  # b's to settle, not a's
    b.done("e1")
    assert b.get("e1").state == "done"


def test_a_replica_is_listed_as_seen_until_exactly_a_lease_after_its_beat(
    database: Database,
) -> None:
    clock = Clock()
    a = Heartbeat(database, "bot-a", LEASE, clock=clock)
    b = Heartbeat(database, "bot-b", LEASE, clock=clock)
    a.beat()
    clock.now = START + LEASE  # its claims are still its own: it is still one of us
    b.beat()
    assert [s.name for s in b.seen()] == ["bot-a", "bot-b"]
    clock.now = _past(START + LEASE)
    assert [s.name for s in b.seen()] == ["bot-b"]


def test_the_fence_holds_while_more_than_a_quarter_of_the_lease_is_left(
    database: Database,
) -> None:
    clock = Clock()
    _, a, _b = _queues(database, clock)
    a.put("e1", "{}")
    a.claim()
    edge = START + LEASE - LEASE / 4  # a quarter of the lease left
    clock.now = math.nextafter(edge, -math.inf)
    assert a.holds("e1") is True
    clock.now = edge
    assert a.holds("e1") is False  # on the edge: nothing more leaves under this claim
