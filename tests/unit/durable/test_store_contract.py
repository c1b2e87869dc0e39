"""The queue and state contract, on both stores: one SQLite file, one PostgreSQL database.

Every test here runs twice — ``sqlite`` (the embedded default: ``DurableQueue`` and
Errbot's storage on the SQLite storage plugin) and ``postgresql`` (the shared mode, on a
real server: tests/conftest.py) — so the room behaves the same on either. The claimers'
side of the queue (order per group, restarts, interleavings) is test_queue_contract.py's,
on both stores too; what only the shared mode has (replicas, leases, the schema's
versions) is in test_shared_mode.py.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from looproom.catchup.cursors import Cursors
from looproom.durable import queue as queue_module
from looproom.durable.contract import WorkQueue as Queue
from looproom.durable.queue import DurableQueue
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.postgres.state import PostgresState
from looproom.room.routing import BindingBook, ThreadBinding
from tests.support.errbot_storage import open_sqlite_storage

LEASE = 30.0


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Store:
    """One store under test: its queues, its state, and what a crash does to a queue."""

    kind: str
    clock: Clock
    open_queue: Callable[[str, str], Queue]
    open_state: Callable[[], MutableMapping[str, Any]]
    opened: list[Any] = field(default_factory=list)

    def queue(self, name: str = "inbox", replica: str = "a") -> Queue:
        queue = self.open_queue(name, replica)
        self.opened.append(queue)
        return queue

    def state(self) -> MutableMapping[str, Any]:
        return self.open_state()

    def books(self, make: Callable[[MutableMapping[str, Any]], Any], count: int) -> list[Any]:
        """``count`` books over the state as they would race: on SQLite one process keeps
        one book (its lock is the book's); on PostgreSQL each is a replica of its own."""
        if self.kind == "sqlite":
            return [make(self.state())] * count
        return [make(self.state()) for _ in range(count)]

    def after_crash(self, name: str = "inbox") -> Queue:
        """The queue as the next process sees it after the holder died mid-delivery: the
        same file reopened, or another replica once the dead one's lease ran out."""
        self.clock.now += LEASE + 1 if self.kind == "postgresql" else 0
        return self.queue(name, replica="b")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    clock = Clock()
    if request.param == "sqlite":
        path = tmp_path / "queues.sqlite3"
        kept = open_sqlite_storage(tmp_path, "TheLoop")
        made = Store(
            "sqlite",
            clock,
            lambda name, _replica: DurableQueue(path, name, clock=clock),
            lambda: kept,
        )
        yield made
        kept.close_storage()
    else:
        database = Database(request.getfixturevalue("database_url"))
        made = Store(
            "postgresql",
            clock,
            lambda name, replica: PostgresQueue(
                database, name, replica=replica, lease=LEASE, clock=clock
            ),
            lambda: PostgresState(database),
        )
        yield made
        database.close()
    for queue in made.opened:
        queue.close()


# -- the queue -------------------------------------------------------------------------


def test_a_key_is_stored_once_and_stays_a_duplicate_after_delivery(store: Store) -> None:
    q = store.queue()
    assert q.put("e1", "{}") is True
    assert q.put("e1", '{"other": 1}') is False
    item = q.claim()
    assert (item.key, item.payload, item.attempts) == ("e1", "{}", 1)
    q.done("e1")
    assert q.put("e1", "{}") is False
    assert (q.depth(), q.get("e1").state) == (0, "done")


def test_items_are_claimed_oldest_first_and_each_only_once(store: Store) -> None:
    q = store.queue()
    for key in ("a", "b", "c"):
        q.put(key, key)
    assert [q.claim().key for _ in range(3)] == ["a", "b", "c"]
    assert q.claim() is None
    assert q.counts() == {"pending": 0, "inflight": 3, "parked": 0}


def test_a_retry_waits_until_due_and_keeps_its_error(store: Store) -> None:
    q = store.queue()
    q.put("e1", "{}")
    q.claim()
    q.retry("e1", 30, "slack: ratelimited")
    assert q.claim() is None
    assert q.next_due() == store.clock.now + 30
    store.clock.now += 30
    again = q.claim()
    assert (again.attempts, again.last_error, q.last_error().error) == (
        2,
        "slack: ratelimited",
        "slack: ratelimited",
    )


def test_a_later_item_never_overtakes_an_earlier_one_of_its_group(store: Store) -> None:
    q = store.queue()
    for key, group in (("a1", "item-a"), ("a2", "item-a"), ("b1", "item-b"), ("a3", "item-a")):
        q.put(key, key, group=group)
    assert q.claim().key == "a1"
    assert q.claim().key == "b1"  # a2 waits while a1 is in flight; another group does not
    assert q.claim() is None
    q.retry("a1", 30, "slack: ratelimited")
    assert q.claim() is None  # a2 and a3 are due, but a1 still waits
    store.clock.now += 30
    assert q.claim().key == "a1"
    q.done("a1")
    assert [q.claim().key, q.claim()] == ["a2", None]


def test_a_parked_or_dropped_item_no_longer_holds_its_group_back(store: Store) -> None:
    q = store.queue()
    for key in ("a1", "a2", "a3"):
        q.put(key, key, group="item-a")
    q.claim()
    q.park("a1", "invalid_blocks")
    assert q.claim().key == "a2"
    assert q.drop("a2") is True
    assert q.claim().key == "a3"
    assert [(i.key, i.state) for i in q.list()] == [("a1", "parked"), ("a3", "inflight")]
    assert q.retry_now("a1") is True
    assert q.claim().key == "a1"


def test_a_dropped_key_is_remembered(store: Store) -> None:
    q = store.queue()
    q.put("e1", "{}")
    assert q.drop("e1") is True
    assert (q.claim(), q.depth(), q.list()) == (None, 0, [])
    assert (q.put("e1", "{}"), q.drop("e1"), q.retry_now("nope")) == (False, False, False)


def test_an_item_held_when_its_holder_died_comes_back_flagged_maybe_delivered(
    store: Store,
) -> None:
    before = store.queue()
    before.put("e1", "{}")
    before.put("e2", "{}")
    assert before.claim().maybe_delivered is False
    after = store.after_crash()  # no done(): the holder died mid-delivery
    resumed = after.claim()
    assert (resumed.key, resumed.maybe_delivered, resumed.attempts) == ("e1", True, 2)
    assert after.claim().maybe_delivered is False  # e2 was never handed out
    after.done("e1")
    assert after.get("e1").maybe_delivered is False


def test_an_uncertain_retry_stays_flagged_until_done(store: Store) -> None:
    q = store.queue()
    q.put("e1", "{}")
    q.claim()
    q.retry("e1", 0, "raised after posting", uncertain=True)
    q.claim()
    q.retry("e1", 0, "slack down")  # a plain failure does not settle the doubt
    assert q.claim().maybe_delivered is True
    q.done("e1")
    assert q.get("e1").maybe_delivered is False


def test_named_queues_do_not_see_each_other(store: Store) -> None:
    inbox, relay = store.queue("inbox"), store.queue("relay")
    inbox.put("k", "event")
    assert relay.put("k", "decision") is True
    assert (inbox.claim().payload, relay.claim().payload) == ("event", "decision")


def test_delivered_keys_are_forgotten_after_retention_and_undelivered_never(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = store.queue()
    for key in ("old", "k2", "k3"):
        q.put(key, "{}")
        q.claim()
        q.done(key)
    q.put("waiting", "{}")
    monkeypatch.setattr(queue_module, "RETENTION_ROWS", 1)
    q.prune()
    assert [q.get(k) is not None for k in ("old", "k2", "k3")] == [False, False, True]
    store.clock.now += queue_module.RETENTION_SECONDS + 1
    q.prune()
    assert (q.get("k3"), q.put("old", "{}"), q.depth()) == (None, True, 2)


def test_concurrent_producers_and_consumers_store_and_hand_out_each_item_once(
    store: Store,
) -> None:
    producers_q, consumers_q = store.queue(replica="a"), store.queue(replica="b")
    keys = [f"{t}-{i}" for t in range(3) for i in range(30)]
    claimed: list[str] = []
    lock = threading.Lock()

    def produce(t: int) -> None:
        for i in range(30):
            assert producers_q.put(f"{t}-{i}", "{}")

    def consume(q: Queue) -> None:
        while (item := q.claim()) is not None:
            with lock:
                claimed.append(item.key)

    _all(*(lambda t=t: produce(t) for t in range(3)))
    _all(*(lambda q=q: consume(q) for q in (producers_q, consumers_q) * 2))
    assert sorted(claimed) == sorted(keys)


def test_a_waiting_consumer_is_woken_by_a_put(store: Store) -> None:
    q = store.queue()
    q.wait(0)
    waiter = threading.Thread(target=q.wait, args=(600,), daemon=True)
    waiter.start()
    q.put("k", "{}")
    waiter.join(10)
    assert not waiter.is_alive()


def _all(*calls: Callable[[], None]) -> None:
    threads = [threading.Thread(target=call) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


# -- the state -------------------------------------------------------------------------


def test_the_state_is_a_mapping_whose_values_keep_their_order(store: Store) -> None:
    state = store.state()
    state["rooms"] = {"z": 1, "a": [1, "two", None], "m": {"nested": True}}
    state["since"] = 12.5
    assert list(state["rooms"]) == ["z", "a", "m"]  # the books' LRU order is key order
    assert state["rooms"]["a"] == [1, "two", None] and state.get("since") == 12.5
    del state["since"]
    assert (state.get("since"), "rooms" in state, sorted(state.keys())) == (None, True, ["rooms"])
    with pytest.raises(KeyError):
        del state["since"]


def test_a_thread_binding_written_by_one_book_is_read_by_another(store: Store) -> None:
    first, second = store.books(BindingBook, 2)
    first.remember(ThreadBinding("acme/app#1", "C1", "100.1"))
    assert second.thread("acme/app#1", "C1") == ThreadBinding("acme/app#1", "C1", "100.1")
    second.forget("acme/app#1", "C1")
    assert first.thread("acme/app#1", "C1") is None


def test_a_parent_owed_a_redraw_is_still_owed_when_another_book_reads_it(store: Store) -> None:
    """What survives a crash: the card's state, owed, in the store (drawn after a start)."""
    first, second = store.books(BindingBook, 2)
    first.remember(ThreadBinding("acme/app#1", "C1", "100.1", "🔧 Working", "f0"))
    assert first.want(ThreadBinding("acme/app#1", "C1", "100.1"), "🎉 Done", "https://x/1")
    (owed,) = [t for t in second.threads() if t.dirty]
    assert (owed.ts, owed.state, owed.url, owed.drawn) == ("100.1", "🎉 Done", "https://x/1", "f0")
    assert second.drew(owed, "f1")
    assert first.binding("acme/app#1", "C1") == ThreadBinding(
        "acme/app#1", "C1", "100.1", "🎉 Done", "f1", "https://x/1"
    )


def test_a_message_is_claimed_once_however_many_readers_race(store: Store) -> None:
    readers = store.books(Cursors, 4)
    won: list[bool] = []
    lock = threading.Lock()

    def read(cursors: Cursors) -> None:
        for n in range(10):
            claimed = cursors.claim("C1", "100.1", f"200.{n}")
            with lock:
                won.append(claimed)

    _all(*(lambda c=c: read(c) for c in readers))
    assert won.count(True) == 10


def test_a_delivered_key_is_remembered_for_exactly_seven_days(store: Store) -> None:
    # docs/configuration.md: delivered ids are remembered for 7 days, so a late retry is
    # still a duplicate — to the instant; one step past it, the id is free again.
    q = store.queue()
    q.put("late", "{}")
    q.claim()
    q.done("late")
    delivered = store.clock.now
    store.clock.now = delivered + 7 * 24 * 3600
    q.prune()
    assert q.put("late", "{}") is False  # still a duplicate
    store.clock.now = math.nextafter(delivered + 7 * 24 * 3600, math.inf)
    q.prune()
    assert q.put("late", "{}") is True
