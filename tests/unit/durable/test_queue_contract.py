"""The queue contract every store keeps (``looproom.durable.contract``), side by side claimers.

Parametrised by store: each entry of ``STORES`` opens a queue by name on a fresh place and
reopens it as a restarted process would — SQLite, and PostgreSQL (the shared mode, on the
real server of tests/conftest.py), where the restart is another replica a lease later.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looproom.durable.contract import Item, WorkQueue
from looproom.durable.queue import DurableQueue
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


#: ``open(place, name, clock)`` → a queue; called again on the same place: a restart.
Opener = Callable[[Path, str, Clock], WorkQueue]


def _sqlite(place: Path, name: str, clock: Clock) -> WorkQueue:
    return DurableQueue(place / "queues.sqlite3", name, clock=clock)


LEASE = 30.0


def _postgresql(request: pytest.FixtureRequest) -> Opener:
    """Queues in one fresh database, a place each a queue's namespace. Opened again on a
    place, the replica that died is followed by another once its lease ran out: that is
    how a shared store tells a dead claimer from a slow one."""
    database = Database(request.getfixturevalue("database_url"))
    request.addfinalizer(database.close)
    opened: set[Path] = set()

    def open_queue(place: Path, name: str, clock: Clock) -> WorkQueue:
        if place in opened:
            clock.now += LEASE + 1
        opened.add(place)
        replica = f"replica-{uuid.uuid4().hex[:8]}"
        return PostgresQueue(database, f"{name}@{place}", replica=replica, lease=LEASE, clock=clock)

    return open_queue


STORES: dict[str, Callable[[pytest.FixtureRequest], Opener]] = {
    "sqlite": lambda _request: _sqlite,
    "postgresql": _postgresql,
}


@pytest.fixture(params=sorted(STORES))
def opener(request: pytest.FixtureRequest) -> Opener:
    return STORES[request.param](request)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def q(opener: Opener, tmp_path: Path, clock: Clock) -> Iterator[WorkQueue]:
    queue = opener(tmp_path, "inbox", clock)
    yield queue
    queue.close()


def _claim_all(q: WorkQueue) -> list[Item]:
    claimed = []
    while (item := q.claim()) is not None:
        claimed.append(item)
    return claimed


def test_claimers_get_one_item_per_group_at_a_time_in_the_order_put(q: WorkQueue) -> None:
    for n in range(3):
        for group in ("a", "b", "c"):
            q.put(f"{group}{n}", "{}", group=group)
    first = _claim_all(q)
    assert [(i.key, i.group) for i in first] == [("a0", "a"), ("b0", "b"), ("c0", "c")]
    q.done("b0")
    assert [i.key for i in _claim_all(q)] == ["b1"]
    q.retry("a0", 0.0, "slack down")  # waiting for its retry, a0 still holds a1 back
    assert [i.key for i in _claim_all(q)] == ["a0"]


def test_ungrouped_items_are_handed_out_side_by_side(q: WorkQueue) -> None:
    for key in ("k1", "k2", "k3"):
        q.put(key, "{}")
    assert [i.key for i in _claim_all(q)] == ["k1", "k2", "k3"]


def test_a_settled_item_wakes_a_claimer_waiting_for_its_group(q: WorkQueue) -> None:
    q.put("a0", "{}", group="a")
    q.put("a1", "{}", group="a")
    assert q.claim().key == "a0"
    q.wait(0)  # whatever happened before: now nothing is claimable
    q.done("a0")
    woke = threading.Event()

    def waiter() -> None:
        q.wait(60.0)
        woke.set()

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    thread.join(30.0)
    assert woke.is_set()
    assert q.claim().key == "a1"


def test_several_items_in_flight_at_a_crash_come_back_flagged_and_in_order(
    opener: Opener, tmp_path: Path, clock: Clock
) -> None:
    q = opener(tmp_path, "inbox", clock)
    for group in ("a", "b", "c"):
        q.put(f"{group}0", "{}", group=group)
        q.put(f"{group}1", "{}", group=group)
    assert len(_claim_all(q)) == 3  # a0, b0, c0 in flight, then the process dies
    q.close()
    q = opener(tmp_path, "inbox", clock)
    again = _claim_all(q)
    assert [(i.key, i.maybe_delivered, i.attempts) for i in again] == [
        ("a0", True, 2),
        ("b0", True, 2),
        ("c0", True, 2),
    ]
    for item in again:
        q.done(item.key)
    assert [(i.key, i.maybe_delivered) for i in _claim_all(q)] == [
        ("a1", False),
        ("b1", False),
        ("c1", False),
    ]
    q.close()


@dataclass
class Model:
    """What the contract says the queue holds: each group's open keys, in the order put."""

    open: dict[str, list[str]] = field(default_factory=dict)
    inflight: set[str] = field(default_factory=set)
    group_of: dict[str, str] = field(default_factory=dict)

    def claimable(self) -> set[str]:
        """The first open key of each group with nothing of it in flight."""
        firsts = {keys[0] for keys in self.open.values() if keys}
        return firsts - self.inflight

    def settle(self, key: str, stays_open: bool) -> None:
        self.inflight.discard(key)
        if not stays_open:
            self.open[self.group_of[key]].remove(key)


# An interleaving: puts to groups, claims, and settlements of what is in flight.
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.sampled_from("abcd")),
        st.tuples(st.just("claim"), st.just("")),
        st.tuples(st.sampled_from(["done", "retry", "park"]), st.integers(0, 7)),
    ),
    max_size=60,
)


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=_steps)
def test_any_interleaving_keeps_each_group_in_order_and_one_at_a_time(
    opener: Opener, tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, object]]
) -> None:
    clock = Clock()
    q = opener(tmp_path_factory.mktemp("q"), "inbox", clock)
    model, done_order, put_order = Model(), [], []
    try:
        for n, (op, arg) in enumerate(steps):
            if op == "put":
                key, group = f"k{n}", str(arg)
                assert q.put(key, "{}", group=group)
                model.open.setdefault(group, []).append(key)
                model.group_of[key] = group
                put_order.append(key)
            elif op == "claim":
                expected = model.claimable()
                item = q.claim()
                if item is None:
                    assert not expected, f"{sorted(expected)} were claimable"
                    continue
                assert item.key in expected, f"{item.key} overtook its group"
                assert item.group == model.group_of[item.key]
                model.inflight.add(item.key)
            elif model.inflight:
                key = sorted(model.inflight)[int(arg) % len(model.inflight)]  # type: ignore[call-overload]
                if op == "done":
                    q.done(key)
                    done_order.append(key)
                elif op == "retry":
                    q.retry(key, 0.0, "later")
                else:
                    q.park(key, "stuck")
                model.settle(key, stays_open=op == "retry")
        by_group: dict[str, list[str]] = {}
        for key in done_order:
            by_group.setdefault(model.group_of[key], []).append(key)
        for keys in by_group.values():
            assert keys == sorted(keys, key=put_order.index)
    finally:
        q.close()


def test_slots_on_threads_deliver_every_group_in_order_and_never_two_of_one_group(
    q: WorkQueue,
) -> None:
    groups = [f"g{n}" for n in range(12)]
    for n in range(6):
        for group in groups:
            q.put(f"{group}-{n}", "{}", group=group)
    delivered: dict[str, list[int]] = {group: [] for group in groups}
    holding: set[str] = set()
    overlaps: list[str] = []
    lock = threading.Lock()

    def slot() -> None:
        while (item := q.claim()) is not None or q.depth():
            if item is None:
                q.wait(0.05)
                continue
            with lock:
                if item.group in holding:
                    overlaps.append(item.key)
                holding.add(item.group)
            assert q.get(item.key) is not None  # the delivery's work, outside the lock
            with lock:
                holding.discard(item.group)
                delivered[item.group].append(int(item.key.rsplit("-", 1)[1]))
            q.done(item.key)

    threads = [threading.Thread(target=slot) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60.0)
    assert overlaps == []
    assert delivered == {group: list(range(6)) for group in groups}
