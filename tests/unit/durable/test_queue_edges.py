"""The durable queue at its edges: the item a claim hands out, a retry's flag, which states
an admin's retry and drop reach, the last error as status shows it. Each test fails on a
one-token slip in ``looproom/durable/queue.py`` that the queue's other tests let through."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from looproom.durable.queue import DurableQueue


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def q(tmp_path: Path, clock: Clock) -> Iterator[DurableQueue]:
    queue = DurableQueue(tmp_path / "queues.sqlite3", "inbox", clock=clock)
    yield queue
    queue.close()


def test_a_claimed_item_is_in_flight_and_says_when_it_was_first_handed_out(
    q: DurableQueue, clock: Clock
) -> None:
    clock.now = 1_000_000.0
    q.put("e1", "{}", group="github:o/r#7")
    first = q.claim()
    assert first is not None
    assert (first.state, first.attempts, first.first_try) == ("inflight", 1, 1_000_000.0)
    assert (first.created, first.group) == (1_000_000.0, "github:o/r#7")
    assert q.get("e1") == first  # what the deliverer holds is what is stored
    # Retried and claimed again later: the first hand-out is kept, the attempts counted.
    q.retry("e1", 0, "slack down")
    clock.now = 1_000_060.0
    again = q.claim()
    assert again is not None
    assert (again.state, again.attempts, again.first_try) == ("inflight", 2, 1_000_000.0)


def test_a_claim_at_a_given_time_takes_only_what_is_due_then(q: DurableQueue, clock: Clock) -> None:
    q.put("e1", "{}")
    q.claim()
    q.retry("e1", 30, "429")
    assert q.claim(now=clock.now + 29) is None
    claimed = q.claim(now=clock.now + 30)
    assert claimed is not None and claimed.first_try == clock.now


def test_a_retry_is_not_flagged_as_maybe_delivered_unless_it_says_so(q: DurableQueue) -> None:
    for key, uncertain in (("sure", False), ("unsure", True)):
        q.put(key, "{}")
        q.claim()
        if uncertain:
            q.retry(key, 0, "timed out", uncertain=True)
        else:
            q.retry(key, 0, "refused")
    assert q.get("sure").maybe_delivered is False
    assert q.get("unsure").maybe_delivered is True


def test_an_admins_retry_reaches_a_parked_or_waiting_item_never_one_in_flight(
    q: DurableQueue,
) -> None:
    for key in ("parked", "waiting", "flying"):
        q.put(key, "{}")
    q.claim()
    q.park("parked", "gave up")
    q.claim()
    q.retry("waiting", 600, "429")
    q.claim()  # "flying" is being delivered now
    assert [q.retry_now(key) for key in ("parked", "waiting", "flying")] == [True, True, False]
    assert q.get("flying").state == "inflight"


def test_an_admins_drop_reaches_what_is_open_never_what_was_delivered(q: DurableQueue) -> None:
    q.put("delivered", "{}")
    q.claim()
    q.done("delivered")
    q.put("waiting", "{}")
    assert q.drop("delivered") is False and q.get("delivered").state == "done"
    assert q.drop("waiting") is True and q.get("waiting").state == "dropped"


def test_the_last_error_names_its_item_and_when(q: DurableQueue, clock: Clock) -> None:
    assert q.last_error() is None
    q.put("e1", "{}")
    q.claim()
    clock.now = 1_000_042.0
    q.retry("e1", 5, "slack: ratelimited")
    failure = q.last_error()
    assert failure is not None
    assert (failure.key, failure.error, failure.at) == ("e1", "slack: ratelimited", 1_000_042.0)


@pytest.mark.parametrize(("free", "writable"), [(1024 * 1024, True), (1024 * 1024 - 1, False)])
def test_a_file_system_with_less_than_a_mebibyte_free_takes_nothing_more(
    q: DurableQueue, monkeypatch: pytest.MonkeyPatch, free: int, writable: bool
) -> None:
    real = __import__("shutil").disk_usage

    def disk_usage(path: object) -> object:
        return real(path)._replace(free=free)

    monkeypatch.setattr("looproom.durable.queue.shutil.disk_usage", disk_usage)
    reason = q.writable()
    assert (reason == "") is writable
    if not writable:
        assert reason.endswith(f"{free} bytes free on its file system") and str(q.path) in reason


def test_the_listing_shows_the_first_hundred_in_order(q: DurableQueue) -> None:
    for n in range(101):
        q.put(f"e{n:03}", "{}")
    assert [item.key for item in q.list()] == [f"e{n:03}" for n in range(100)]


def test_the_oldest_open_item_is_what_status_ages_the_queue_by(
    q: DurableQueue, clock: Clock
) -> None:
    assert q.oldest() is None
    q.put("first", "{}")
    clock.now += 60
    q.put("second", "{}")
    assert q.oldest() == 1_000_000.0
    q.claim()
    q.done("first")
    assert q.oldest() == 1_000_060.0


def test_a_file_that_cannot_be_opened_is_an_error_naming_it_and_why(tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("", encoding="utf-8")
    path = tmp_path / "not-a-folder" / "queues.sqlite3"
    with pytest.raises(Exception) as caught:
        DurableQueue(path, "inbox")
    text = str(caught.value)
    assert text.startswith(f"storage {path}: ") and not text.endswith(": None")


def test_delivered_keys_past_a_week_are_forgotten_at_every_thousandth_put(
    q: DurableQueue, clock: Clock
) -> None:
    # A delivered key is kept a week (a retry within it is a duplicate), then forgotten —
    # pruning is a scan, so it runs once every thousand puts, counted from the first.
    q.put("old", "{}")
    q.claim()
    q.done("old")
    clock.now += 7 * 24 * 3600 + 1
    for n in range(2, 1000):
        q.put(f"e{n}", "{}")
    assert q.get("old") is not None  # 999 puts: not yet
    q.put("e1000", "{}")
    assert q.get("old") is None


def test_a_file_from_before_first_try_was_kept_is_brought_up_to_date(tmp_path: Path) -> None:
    path = tmp_path / "queues.sqlite3"
    DurableQueue(path, "inbox").close()
    with sqlite3.connect(path) as old:  # the file as a bot before first_try left it
        old.execute("ALTER TABLE items DROP COLUMN first_try")
    queue = DurableQueue(path, "inbox", clock=lambda: 5.0)
    queue.put("e1", "{}")
    claimed = queue.claim()
    assert claimed is not None and claimed.first_try == 5.0
    queue.close()


def test_a_file_it_cannot_write_now_is_named_with_the_reason(
    q: DurableQueue, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Locked:
        def execute(self, *_args: object) -> None:
            raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(q, "_db", Locked())
    assert q.writable() == f"storage {q.path}: database is locked"
