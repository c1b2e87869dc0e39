"""Delivery slots: work items side by side, each one's items one at a time and in order."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from looproom.durable.outcome import Delivered, Outcome, RetryLater
from looproom.durable.queue import DurableQueue, Item
from looproom.durable.worker import Worker
from tests.support.wait import wait_for

TIMEOUT = 30.0  # a bound on waiting, never an expectation of speed


@pytest.fixture
def q(tmp_path: Path) -> Iterator[DurableQueue]:
    queue = DurableQueue(tmp_path / "q.sqlite3", "inbox")
    yield queue
    queue.close()


class Recorder:
    """A delivery that records what it handled, and how many ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.delivered: list[str] = []
        self.running: set[str] = set()
        self.most = 0
        self.overlap: list[str] = []

    def begin(self, item: Item) -> None:
        with self.lock:
            if item.group in {key.split("-")[0] for key in self.running}:
                self.overlap.append(item.key)
            self.running.add(item.key)
            self.most = max(self.most, len(self.running))

    def end(self, item: Item) -> None:
        with self.lock:
            self.running.discard(item.key)
            self.delivered.append(item.key)

    def of(self, group: str) -> list[str]:
        with self.lock:
            return [key for key in self.delivered if key.startswith(f"{group}-")]


def _put(q: DurableQueue, group: str, count: int) -> None:
    for n in range(count):
        q.put(f"{group}-{n}", "{}", group=group)


def _run(worker: Worker) -> Worker:
    worker.start()
    return worker


def test_a_slow_delivery_holds_its_own_slot_while_other_work_items_flow(q: DurableQueue) -> None:
    release = threading.Event()
    seen = Recorder()

    def deliver(item: Item) -> Outcome:
        seen.begin(item)
        if item.key == "slow-0":
            release.wait(TIMEOUT)  # a Slack call that takes its time
        seen.end(item)
        return Delivered()

    _put(q, "slow", 3)
    for group in ("b", "c", "d"):
        _put(q, group, 4)
    worker = _run(Worker(q, deliver, slots=3))
    try:
        wait_for(
            lambda: all(len(seen.of(g)) == 4 for g in ("b", "c", "d")), TIMEOUT, "others delivered"
        )
        assert seen.of("slow") == []  # its next events wait behind it, not beside it
        release.set()
        wait_for(lambda: q.depth() == 0, TIMEOUT, "everything delivered")
    finally:
        release.set()
        assert worker.stop() is True
    assert seen.of("slow") == ["slow-0", "slow-1", "slow-2"]
    assert seen.overlap == []


def test_a_retry_in_one_work_item_lets_the_others_flow_and_keeps_its_own_order(
    q: DurableQueue,
) -> None:
    others_done = threading.Event()
    seen = Recorder()
    tries: list[str] = []

    def deliver(item: Item) -> Outcome:
        seen.begin(item)
        if item.key == "a-0" and not others_done.is_set():
            tries.append(item.key)
            with seen.lock:
                seen.running.discard(item.key)
            return RetryLater("slack is down for this one", after=0.0)
        seen.end(item)
        if all(len(seen.of(g)) == 3 for g in ("b", "c")):
            others_done.set()
        return Delivered()

    _put(q, "a", 3)
    _put(q, "b", 3)
    _put(q, "c", 3)
    worker = _run(Worker(q, deliver, slots=2))
    try:
        wait_for(lambda: q.depth() == 0, TIMEOUT, "everything delivered")
    finally:
        assert worker.stop() is True
    assert tries  # it did wait for its retry ...
    assert seen.of("a") == ["a-0", "a-1", "a-2"]  # ... and nothing of its own overtook it
    first_of_a = seen.delivered.index("a-0")
    assert set(seen.delivered[:first_of_a]) == {f"{g}-{n}" for g in ("b", "c") for n in range(3)}
    assert seen.overlap == []


def test_no_more_deliveries_run_at_once_than_there_are_slots(q: DurableQueue) -> None:
    gate = threading.Semaphore(0)
    seen = Recorder()

    def deliver(item: Item) -> Outcome:
        seen.begin(item)
        gate.acquire(timeout=TIMEOUT)
        seen.end(item)
        return Delivered()

    for group in "abcdef":
        _put(q, group, 1)
    worker = _run(Worker(q, deliver, slots=2))
    try:
        wait_for(lambda: len(seen.running) == 2, TIMEOUT, "both slots busy")
        assert q.counts()["inflight"] == 2  # nothing claimed that no slot could start
        for _ in range(6):
            gate.release()
        wait_for(lambda: q.depth() == 0, TIMEOUT, "everything delivered")
    finally:
        for _ in range(6):
            gate.release()
        assert worker.stop() is True
    assert seen.most == 2
    assert sorted(seen.delivered) == [f"{g}-0" for g in "abcdef"]


def test_a_worker_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one delivery slot"):
        Worker(None, lambda _item: Delivered(), slots=0)  # type: ignore[arg-type]


# Work items and, per event, how many attempts fail before it lands (0: the first lands).
_work = st.lists(
    st.tuples(st.sampled_from("abcde"), st.integers(min_value=0, max_value=2)),
    min_size=1,
    max_size=25,
)


@settings(
    deadline=None, max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(work=_work, slots=st.integers(min_value=1, max_value=4))
def test_any_mix_of_work_items_and_retries_is_delivered_in_order_one_at_a_time_per_item(
    tmp_path_factory: pytest.TempPathFactory, work: list[tuple[str, int]], slots: int
) -> None:
    q = DurableQueue(tmp_path_factory.mktemp("q") / "q.sqlite3", "inbox")
    failures = {f"{group}-{n}": fails for n, (group, fails) in enumerate(work)}
    seen = Recorder()

    def deliver(item: Item) -> Outcome:
        seen.begin(item)
        with seen.lock:
            left = failures[item.key]
            failures[item.key] = left - 1
            if left > 0:  # a retry in this work item while the others go on
                seen.running.discard(item.key)
                return RetryLater("not yet", after=0.0)
        seen.end(item)
        return Delivered()

    for key in failures:
        q.put(key, "{}", group=key.split("-")[0])
    worker = _run(Worker(q, deliver, slots=slots))
    try:
        wait_for(lambda: q.depth() == 0, TIMEOUT, "everything delivered")
    finally:
        assert worker.stop() is True
        q.close()
    for group in "abcde":
        assert seen.of(group) == [key for key in failures if key.startswith(f"{group}-")]
    assert seen.overlap == []
