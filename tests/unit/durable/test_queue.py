"""The durable queue: stored before the 202, delivered once, resumed after a crash."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from looproom.durable import queue as queue_module
from looproom.durable import sqlite as sqlite_module
from looproom.durable.queue import DurableQueue
from tests.support.crash import sigkill_writer

PLUGIN_DIR = Path(__file__).resolve().parents[3] / "plugins" / "theloop"


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "queues.sqlite3"


@pytest.fixture
def q(db: Path, clock: Clock) -> DurableQueue:
    queue = DurableQueue(db, "inbox", clock=clock)
    yield queue
    queue.close()


def test_a_key_is_stored_once_and_stays_a_duplicate_after_delivery(q: DurableQueue) -> None:
    assert q.put("e1", "{}") is True
    assert q.put("e1", '{"other": 1}') is False
    item = q.claim()
    assert (item.key, item.payload) == ("e1", "{}")
    q.done("e1")
    assert q.put("e1", "{}") is False
    assert q.depth() == 0


def test_items_are_claimed_oldest_first_and_each_only_once(q: DurableQueue) -> None:
    for key in ("a", "b", "c"):
        q.put(key, key)
    claimed = [q.claim().key for _ in range(3)]
    assert claimed == ["a", "b", "c"]
    assert q.claim() is None
    assert q.counts() == {"pending": 0, "inflight": 3, "parked": 0}


def test_a_retry_waits_until_due_and_counts_attempts(q: DurableQueue, clock: Clock) -> None:
    q.put("e1", "{}")
    first = q.claim()
    q.retry("e1", 30, "slack: ratelimited")
    assert q.claim() is None
    clock.now += 30
    second = q.claim()
    assert (first.attempts, second.attempts, second.last_error) == (1, 2, "slack: ratelimited")
    assert q.last_error().error == "slack: ratelimited"


def test_a_later_item_never_overtakes_an_earlier_one_of_its_group(
    q: DurableQueue, clock: Clock
) -> None:
    for key, group in (("a1", "item-a"), ("a2", "item-a"), ("b1", "item-b"), ("a3", "item-a")):
        q.put(key, key, group=group)
    assert q.claim().key == "a1"
    assert q.claim().key == "b1"  # a2 waits while a1 is in flight; another group does not
    assert q.claim() is None
    q.retry("a1", 30, "slack: ratelimited")
    assert q.claim() is None  # a2 and a3 are due, but a1 is still waiting
    assert q.next_due() == clock.now + 30  # so the worker sleeps until a1, not a busy loop
    clock.now += 30
    assert q.claim().key == "a1"
    q.done("a1")
    assert q.claim().key == "a2"


def test_a_parked_or_dropped_item_no_longer_holds_its_group_back(q: DurableQueue) -> None:
    for key in ("a1", "a2", "a3"):
        q.put(key, key, group="item-a")
    q.claim()
    q.park("a1", "invalid_blocks")
    assert q.claim().key == "a2"
    assert q.drop("a2") is True
    assert q.claim().key == "a3"


def test_a_file_from_before_groups_gains_them_and_keeps_its_items(db: Path, clock: Clock) -> None:
    old = sqlite3.connect(db)
    old.executescript(
        queue_module._SCHEMA.replace("    grp        TEXT    NOT NULL DEFAULT '',\n", "")
    )
    old.execute(
        "INSERT INTO items (queue, key, payload, state, due, created, updated)"
        " VALUES ('inbox', 'old', '{}', 'pending', 0, 0, 0)"
    )
    old.commit()
    old.close()
    reopened = DurableQueue(db, "inbox", clock=clock)
    reopened.put("new", "{}", group="item-a")
    assert [reopened.claim().key, reopened.claim().key] == ["old", "new"]
    reopened.close()


def test_a_parked_item_stays_visible_and_waits_for_an_admin(q: DurableQueue, clock: Clock) -> None:
    q.put("stuck", "{}")
    q.claim()
    q.park("stuck", "invalid_blocks")
    clock.now += 10**6
    assert q.claim() is None
    [item] = q.list()
    assert (item.key, item.state, item.last_error) == ("stuck", "parked", "invalid_blocks")
    assert q.depth() == 1
    assert q.retry_now("stuck") is True
    assert q.claim().key == "stuck"


def test_a_dropped_item_is_gone_but_its_key_is_remembered(q: DurableQueue) -> None:
    q.put("e1", "{}")
    assert q.drop("e1") is True
    assert (q.claim(), q.depth(), q.list()) == (None, 0, [])
    assert q.put("e1", "{}") is False
    assert q.drop("e1") is False
    assert q.retry_now("nope") is False


def test_an_item_in_flight_at_a_crash_comes_back_flagged_maybe_delivered(
    db: Path, clock: Clock
) -> None:
    before = DurableQueue(db, "inbox", clock=clock)
    before.put("e1", "{}")
    before.put("e2", "{}")
    assert before.claim().maybe_delivered is False
    # No done(): the process died mid-delivery. A new process opens the same file.
    after = DurableQueue(db, "inbox", clock=clock)
    resumed = after.claim()
    assert (resumed.key, resumed.maybe_delivered, resumed.attempts) == ("e1", True, 2)
    assert after.claim().maybe_delivered is False  # e2 was never handed out
    before.close()
    after.close()


def test_named_queues_in_one_file_do_not_see_each_other(db: Path, clock: Clock) -> None:
    inbox = DurableQueue(db, "inbox", clock=clock)
    relay = DurableQueue(db, "relay", clock=clock)
    inbox.put("k", "event")
    assert relay.put("k", "decision") is True
    assert (inbox.claim().payload, relay.claim().payload) == ("event", "decision")
    inbox.close()
    relay.close()


def test_delivered_keys_are_forgotten_after_the_retention_window(
    q: DurableQueue, clock: Clock
) -> None:
    q.put("old", "{}")
    q.claim()
    q.done("old")
    clock.now += queue_module.RETENTION_SECONDS + 1
    q.prune()
    assert q.get("old") is None
    assert q.put("old", "{}") is True


def test_undelivered_items_are_never_pruned(q: DurableQueue, clock: Clock) -> None:
    q.put("waiting", "{}")
    q.put("stuck", "{}")
    q.park("stuck", "x")
    clock.now += queue_module.RETENTION_SECONDS * 10
    q.prune()
    assert q.depth() == 2


def test_the_row_budget_keeps_the_newest_delivered_keys(
    q: DurableQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(queue_module, "RETENTION_ROWS", 2)
    for key in ("k1", "k2", "k3"):
        q.put(key, "{}")
        q.claim()
        q.done(key)
    q.prune()
    assert [q.get(k) is not None for k in ("k1", "k2", "k3")] == [False, True, True]


def test_concurrent_producers_and_consumers_store_and_hand_out_each_item_once(
    q: DurableQueue,
) -> None:
    keys = [f"{t}-{i}" for t in range(4) for i in range(50)]
    claimed: list[str] = []
    lock = threading.Lock()

    def produce(t: int) -> None:
        for i in range(50):
            assert q.put(f"{t}-{i}", "{}")

    def consume() -> None:
        while True:
            item = q.claim()
            if item is None:
                return
            with lock:
                claimed.append(item.key)

    producers = [threading.Thread(target=produce, args=(t,)) for t in range(4)]
    for thread in producers:
        thread.start()
    for thread in producers:
        thread.join()
    consumers = [threading.Thread(target=consume) for _ in range(4)]
    for thread in consumers:
        thread.start()
    for thread in consumers:
        thread.join()
    assert sorted(claimed) == sorted(keys)


def _returns(call, timeout: float = 10.0) -> bool:
    """Whether ``call`` returned within ``timeout`` (run in a daemon thread)."""
    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(timeout)
    return not thread.is_alive()


def test_a_waiting_consumer_is_woken_by_a_put(q: DurableQueue) -> None:
    q.wait(0)  # nothing pending from before
    waiter = threading.Thread(target=q.wait, args=(600,), daemon=True)
    waiter.start()
    q.put("k", "{}")
    waiter.join(10)
    assert not waiter.is_alive()


def test_a_put_between_an_empty_claim_and_the_wait_is_not_missed(q: DurableQueue) -> None:
    q.wait(0)
    assert q.claim() is None
    q.put("k", "{}")  # lands before the consumer starts waiting
    assert _returns(lambda: q.wait(600))


_WRITER = """
import sys
sys.path.insert(0, sys.argv[2])
from looproom.durable.queue import DurableQueue
q = DurableQueue(sys.argv[1], "inbox")
i = 0
while True:
    q.put(f"event-{i}", "x" * 3000)
    print(i, flush=True)  # printed only after put() returned: what the 202 promises
    i += 1
"""


def test_every_put_that_returned_survives_a_sigkill(db: Path) -> None:
    acknowledged, _ = sigkill_writer(_WRITER, str(db), str(PLUGIN_DIR), after=300)
    reopened = DurableQueue(db, "inbox")
    assert all(reopened.get(f"event-{i}") is not None for i in acknowledged)
    assert reopened.depth() >= len(acknowledged)
    reopened.close()


def test_an_uncertain_retry_comes_back_flagged_until_done(q: DurableQueue, clock: Clock) -> None:
    q.put("e1", "{}")
    q.claim()
    q.retry("e1", 0, "raised after posting", uncertain=True)
    q.claim()
    q.retry("e1", 0, "slack down")  # a plain failure does not settle the doubt
    assert q.claim().maybe_delivered is True
    q.done("e1")
    assert q.get("e1").maybe_delivered is False


def test_the_group_probe_seeks_by_index_rather_than_scanning_delivered_items(
    q: DurableQueue,
) -> None:
    # A long-lived work item accumulates delivered keys; asking "is an earlier item of my
    # group still open?" must stay a seek on (queue, grp, state, seq), or ingest slows
    # with every event the work item ever had.
    plan = q._db.execute(
        "EXPLAIN QUERY PLAN SELECT 1 FROM items WHERE queue='inbox' AND state='pending' "
        f"AND {queue_module._FIRST_IN_GROUP}"
    ).fetchall()
    details = " | ".join(str(row[-1]) for row in plan)
    assert "items_group_open (queue=? AND grp=? AND state=? AND seq<?)" in details, details


def test_a_queue_file_that_cannot_be_opened_is_an_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data directory should be", encoding="utf-8")
    with pytest.raises(sqlite_module.StorageError) as caught:
        DurableQueue(blocker / "theloop" / "queues.sqlite3", "inbox")
    assert str(blocker / "theloop" / "queues.sqlite3") in str(caught.value)


def test_a_write_the_disk_refuses_is_a_storage_error_and_the_next_one_succeeds(
    tmp_path: Path,
) -> None:
    q = DurableQueue(tmp_path / "q.sqlite3", "inbox")
    q._db.execute("PRAGMA max_page_count = 8")  # a tiny disk, full after a few items
    with pytest.raises(sqlite_module.StorageError) as caught:
        for n in range(1000):
            q.put(f"k{n}", "x" * 4000)
    assert "full" in str(caught.value) and str(q.path) in str(caught.value)
    assert q.writable() == ""  # no transaction left open behind the failed write
    q._db.execute("PRAGMA max_page_count = 1000000")
    assert q.put("after", "y")
    q.close()
