"""The delivery worker: every accepted event is posted, a failure costs a delay."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from looproom.durable import worker as worker_module
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.queue import DurableQueue, Item
from looproom.durable.worker import BACKOFF_CAP, RETRY_AFTER_CAP, Worker, backoff, delay_for
from looproom.events import Event
from looproom.room.outlets import event_delivery


def _event(n: int) -> Event:
    return Event(event_type="decision-pending", work_item=f"github:o/r#{n}", id=f"e{n}")


class Clock:
    def __init__(self) -> None:
        self.now = 5_000.0

    def __call__(self) -> float:
        return self.now


class ScriptedOutlet:
    """An outlet answering from a script, recording what it was handed."""

    def __init__(self, *answers: Outcome | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, bool]] = []

    def deliver(self, event: Event, *, maybe_delivered: bool) -> Outcome:
        self.calls.append((event.id, maybe_delivered))
        answer = self.answers.pop(0) if self.answers else Delivered()
        if isinstance(answer, Exception):
            raise answer
        return answer


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def q(tmp_path: Path, clock: Clock) -> DurableQueue:
    queue = DurableQueue(tmp_path / "q.sqlite3", "inbox", clock=clock)
    yield queue
    queue.close()


def _put(q: DurableQueue, *events: Event) -> None:
    for event in events:
        q.put(event.delivery_key, event.to_json())


def test_backoff_doubles_from_one_second_with_jitter_and_caps_at_five_minutes() -> None:
    assert [backoff(n, rng=lambda: 0.0) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert [backoff(n, rng=lambda: 1.0) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert backoff(50, rng=lambda: 1.0) == BACKOFF_CAP
    assert backoff(10_000, rng=lambda: 0.0) == BACKOFF_CAP / 2


def test_the_backoff_reaches_five_minutes_at_the_tenth_attempt_and_stays_there() -> None:
    # docs/webhook.md: 1 s doubling to 5 minutes. The ninth wait is 256 s, the tenth the cap.
    assert backoff(9, rng=lambda: 1.0) == 256.0
    assert backoff(10, rng=lambda: 1.0) == backoff(11, rng=lambda: 1.0) == 300.0
    assert backoff(10, rng=lambda: 0.0) == 150.0  # half of it jittered, never less


def test_a_retry_after_of_an_hour_is_waited_and_one_second_more_is_not() -> None:
    # docs/webhook.md: Slack's Retry-After, at most an hour.
    assert delay_for(RetryLater("429", after=3600.0), attempts=1) == 3600.0
    assert delay_for(RetryLater("429", after=3601.0), attempts=1) == 3600.0
    assert delay_for(RetryLater("429", after=0.0), attempts=1) == 0.0


def test_a_retry_after_from_the_outlet_wins_over_backoff_within_bounds() -> None:
    assert delay_for(RetryLater("429", after=42.0), attempts=9) == 42.0
    assert delay_for(RetryLater("429", after=-5.0), attempts=1) == 0.0
    assert delay_for(RetryLater("429", after=1e9), attempts=1) == RETRY_AFTER_CAP
    assert 0.5 <= delay_for(RetryLater("down"), attempts=1) <= 1.0


def test_a_delivered_event_leaves_the_queue(q: DurableQueue, clock: Clock) -> None:
    outlet = ScriptedOutlet(Delivered())
    _put(q, _event(1))
    assert Worker(q, event_delivery(outlet), clock=clock).step() is True
    assert (outlet.calls, q.depth(), q.get("e1").state) == ([("e1", False)], 0, "done")


def test_retry_later_keeps_the_event_until_its_retry_after(q: DurableQueue, clock: Clock) -> None:
    outlet = ScriptedOutlet(RetryLater("ratelimited", after=30.0), Delivered())
    worker = Worker(q, event_delivery(outlet), clock=clock)
    _put(q, _event(1))
    worker.step()
    assert worker.step() is False  # not due yet
    item = q.get("e1")
    assert (item.state, item.due, item.last_error) == ("pending", clock.now + 30, "ratelimited")
    clock.now += 30
    assert worker.step() is True
    assert q.get("e1").state == "done"


def test_an_outlet_that_raises_costs_a_retry_not_the_event(q: DurableQueue, clock: Clock) -> None:
    worker = Worker(q, event_delivery(ScriptedOutlet(ConnectionError("slack down"))), clock=clock)
    _put(q, _event(1))
    worker.step()
    item = q.get("e1")
    assert (item.state, item.last_error) == ("pending", "ConnectionError: slack down")


def test_failed_parks_the_event_for_an_admin(q: DurableQueue, clock: Clock) -> None:
    worker = Worker(q, event_delivery(ScriptedOutlet(Failed("invalid_blocks"))), clock=clock)
    _put(q, _event(1))
    worker.step()
    clock.now += 10**6
    assert worker.step() is False
    assert (q.get("e1").state, q.last_error().error) == ("parked", "invalid_blocks")


def test_a_stored_payload_that_is_not_an_event_is_parked(q: DurableQueue, clock: Clock) -> None:
    q.put("garbage", "{not json")
    Worker(q, event_delivery(ScriptedOutlet()), clock=clock).step()
    item = q.get("garbage")
    assert item.state == "parked"
    assert item.last_error.startswith("stored payload is not an event")


def test_an_event_in_flight_at_a_crash_is_handed_over_flagged(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "q.sqlite3"
    crashed = DurableQueue(db, "inbox", clock=clock)
    _put(crashed, _event(1))
    crashed.claim()  # the old process died here
    outlet = ScriptedOutlet(Delivered("found the earlier post"))
    restarted = DurableQueue(db, "inbox", clock=clock)
    Worker(restarted, event_delivery(outlet), clock=clock).step()
    assert outlet.calls == [("e1", True)]
    crashed.close()
    restarted.close()


def _wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> bool:
    done = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if condition():
            return True
        done.wait(0.02)
    return condition()


def test_the_thread_delivers_in_order_through_an_outage_and_stops_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "backoff", lambda attempts: 0.0)
    q = DurableQueue(tmp_path / "q.sqlite3", "inbox")
    outlet = ScriptedOutlet(RetryLater("down"), RetryLater("down"))
    worker = Worker(q, event_delivery(outlet))
    worker.start()
    _put(q, *(_event(n) for n in range(1, 6)))
    assert _wait_for(lambda: q.depth() == 0)
    assert worker.stop() is True
    delivered = [key for key, _ in outlet.calls[2:]]
    assert delivered == ["e1", "e2", "e3", "e4", "e5"]
    assert q.get("e1").attempts == 3
    q.close()


def test_an_outlet_that_raised_after_posting_is_retried_flagged_to_reconcile_first(
    q: DurableQueue, clock: Clock
) -> None:
    # e.g. chat.postMessage succeeded, then recording the post raised: never post blindly again.
    outlet = ScriptedOutlet(OSError("disk full"), RetryLater("slack down"), Delivered())
    worker = Worker(q, event_delivery(outlet), clock=clock)
    _put(q, _event(1))
    for _ in range(3):
        clock.now += BACKOFF_CAP
        worker.step()
    assert outlet.calls == [("e1", False), ("e1", True), ("e1", True)]
    assert q.get("e1").state == "done"


def test_the_loop_works_any_delivery_and_says_each_outcome_once_it_is_recorded(
    q: DurableQueue, clock: Clock
) -> None:
    q.put("k1", "not an event: the loop does not read it")
    q.put("k2", "second")
    seen: list[tuple[str, object, str]] = []

    def settled(item: Item, outcome: Outcome) -> None:
        stored = q.get(item.key)
        seen.append((item.key, outcome, stored.state if stored else ""))

    answers = iter([Delivered("first"), Failed("never")])
    worker = Worker(q, lambda _item: next(answers), settled=settled, clock=clock)
    assert worker.step() and worker.step() and not worker.step()
    assert seen == [("k1", Delivered("first"), "done"), ("k2", Failed("never"), "parked")]


class _Unwritable:
    """A queue whose every claim fails, as one on a read-only or full disk does."""

    def __init__(self) -> None:
        self.claims = 0

    def claim(self, _now: float) -> Item | None:
        self.claims += 1
        raise RuntimeError("storage q.sqlite3: attempt to write a readonly database")

    def wake(self) -> None:
        return None


class _Pauses(threading.Event):
    """The worker's stop event, recording each pause it is asked for; set after five."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        self.asked.append(float(timeout or 0))
        if len(self.asked) >= 5:
            self.set()
        return self.is_set()


def test_a_queue_it_cannot_write_is_retried_ever_more_slowly_not_spun_on() -> None:
    queue = _Unwritable()
    loop = Worker(queue, lambda _item: Delivered())  # type: ignore[arg-type]
    pauses = _Pauses()
    loop._stop = pauses
    loop._run()
    assert queue.claims == 5
    assert pauses.asked == [1.0, 2.0, 4.0, 8.0, 16.0]


def test_a_routine_wait_is_not_a_warning_but_a_failure_is(
    q: DurableQueue, clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    outlet = ScriptedOutlet(
        RetryLater("pacing posts to #x", after=1.0, routine=True), RetryLater("ratelimited")
    )
    worker = Worker(q, event_delivery(outlet), clock=clock)
    _put(q, _event(1))
    caplog.set_level(logging.DEBUG, logger="looproom.durable.worker")
    worker.step()
    paced = [r for r in caplog.records if "pacing" in r.getMessage()]
    assert [r.levelno for r in paced] == [logging.DEBUG]
    clock.now += 1.0
    worker.step()
    failed = [r for r in caplog.records if "ratelimited" in r.getMessage()]
    assert [r.levelno for r in failed] == [logging.WARNING]
