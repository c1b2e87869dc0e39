"""The delivery loop: claim each due item of a durable queue and hand it to a delivery.

A fixed number of delivery slots work side by side: one thread claims (the queue hands
out an item only if no earlier item of its group is open and no slot holds the group),
and gives each item to a free slot, which delivers it and records the outcome. So one
work item's slow Slack round trips or its wait for a retry hold only its own slot, while
its own events still go one at a time, in order. No thread per room: the slots are the
bound, whatever the number of rooms.

A Slack outage or a restart costs a delay, never the item: what the delivery cannot do
now is retried with capped exponential backoff (or after the Retry-After it reports),
forever, and stays visible in ``!theloop queue``; only what it calls :class:`Failed` is
parked. Retrying here, at the queue, and not only inside slack_sdk matters: its retry
handlers share one attempt count and give up during a long outage.

The loop knows nothing of what it delivers. The inbox's delivery posts an event
(``looproom.room.outlets.event_delivery``); the relay's hands a decision to its sink
(``looproom.relay.relay``) and, told each outcome, speaks in the room.
"""

from __future__ import annotations

import logging
import queue as handoff
import random
import threading
import time
from collections.abc import Callable

from looproom.durable import fence
from looproom.durable.contract import Item, WorkQueue
from looproom.durable.outcome import Delivered, Outcome, RetryLater

log = logging.getLogger(__name__)

BACKOFF_BASE = 1.0
BACKOFF_CAP = 300.0
#: A Retry-After beyond this is the peer's bug or an attack; wait at most this long.
RETRY_AFTER_CAP = 3600.0
#: The longest pause after the loop itself fails, as on a queue it cannot write.
LOOP_ERROR_CAP = 60.0
#: How long the loop sleeps when nothing is pending (a put wakes it sooner).
IDLE_WAIT = 5.0


def backoff(attempts: int, rng: Callable[[], float] = random.random) -> float:
    """Seconds before attempt ``attempts + 1``: 1 s doubling to 5 min, half of it jittered.

    "Equal jitter": never less than half the exponential delay (so a retry storm spreads
    out without hammering), never more than the cap.
    """
    delay = min(BACKOFF_CAP, BACKOFF_BASE * 2 ** max(0, min(attempts - 1, 30)))
    return delay / 2 + rng() * delay / 2


def delay_for(outcome: RetryLater, attempts: int) -> float:
    """The Retry-After the delivery reported (bounded), else our backoff."""
    if outcome.after is not None:
        return min(max(0.0, outcome.after), RETRY_AFTER_CAP)
    return backoff(attempts)


#: Does one item's work and says what came of it; it may raise (a bug), which is a retry.
Delivery = Callable[[Item], Outcome]
#: Told each outcome once the queue has recorded it.
Settled = Callable[[Item, Outcome], None]


def _nothing(_item: Item, _outcome: Outcome) -> None:
    return None


class Worker:
    """``slots`` daemon threads delivering the queue's items, fed by one claiming thread."""

    def __init__(
        self,
        queue: WorkQueue,
        deliver: Delivery,
        *,
        settled: Settled = _nothing,
        clock: Callable[[], float] = time.time,
        name: str = "theloop-delivery",
        slots: int = 1,
    ) -> None:
        if slots < 1:
            raise ValueError(f"a worker needs at least one delivery slot, got {slots}")
        self._queue = queue
        self._deliver_one, self._settled = deliver, settled
        self._clock = clock
        self._stop = threading.Event()
        # A slot is taken before a claim, so nothing is claimed that no slot can start.
        self._free = threading.Semaphore(slots)
        self._items: handoff.SimpleQueue[Item | None] = handoff.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._slots = [
            threading.Thread(target=self._slot, name=f"{name}-{n + 1}", daemon=True)
            for n in range(slots)
        ]

    def start(self) -> None:
        for slot in self._slots:
            slot.start()
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the loop to stop and wait for it; False if a delivery is still running."""
        deadline = time.monotonic() + timeout
        self._stop.set()
        self._queue.wake()
        self._free.release()  # a loop waiting for a busy slot looks at the stop now
        if self._thread.is_alive():
            self._thread.join(timeout)
        for _ in self._slots:
            self._items.put(None)  # after any item handed out: each slot finishes its own
        for slot in self._slots:
            if slot.is_alive():
                slot.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in (self._thread, *self._slots))

    @property
    def alive(self) -> bool:
        return all(t.is_alive() for t in (self._thread, *self._slots))

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            if not self._free.acquire(timeout=IDLE_WAIT):
                continue  # every slot busy: each frees one when its delivery is recorded
            if self._stop.is_set():
                break
            try:
                self._claim_next()
            except Exception as exc:  # the loop must outlive any bug or storage failure
                failures += 1
                # A queue it cannot read or write (disk full, read-only, a database away)
                # fails every step: wait longer each time, and say it in full once.
                if failures == 1:
                    log.exception("delivery loop error; continuing")
                else:
                    log.error("delivery loop error again (%d in a row): %s", failures, exc)
                self._stop.wait(min(LOOP_ERROR_CAP, 2.0 ** (failures - 1)))
                continue
            failures = 0

    def _claim_next(self) -> None:
        """Hand the next due item to the slot taken; or give the slot back and wait until
        one may be due. Raises what the queue raises, the slot given back."""
        try:
            item = self._queue.claim(self._clock())
        except BaseException:
            self._free.release()
            raise
        if item is not None:
            self._items.put(item)
            return
        self._free.release()
        self._idle()

    def _slot(self) -> None:
        while (item := self._items.get()) is not None:
            try:
                self._work(item)
            except Exception:  # recording the outcome failed: the item stays in flight
                # and is handed out again, flagged, when the queue is next opened.
                log.exception("delivery slot error on %s; continuing", item.key)
            finally:
                self._free.release()

    def _idle(self) -> None:
        due = self._queue.next_due()
        wait = IDLE_WAIT if due is None else min(IDLE_WAIT, due - self._clock())
        if not self._stop.is_set():
            self._queue.wait(max(0.05, wait))

    def step(self) -> bool:
        """Deliver one due item on the caller's thread; False when none was due."""
        item = self._queue.claim(self._clock())
        if item is None:
            return False
        self._work(item)
        return True

    def _work(self, item: Item) -> None:
        outcome = self._deliver(item)
        self._apply(item, outcome)
        self._settled(item, outcome)

    def _deliver(self, item: Item) -> Outcome:
        # A shared queue's claim can be taken over while this delivery is frozen: its
        # writes ask whether it is still held (see looproom.durable.fence).
        holds = getattr(self._queue, "holds", None)
        try:
            if holds is None:
                return self._deliver_one(item)
            with fence.holding(lambda: bool(holds(item.key))):
                return self._deliver_one(item)
        except Exception as exc:  # a delivery bug must not lose the item
            log.exception("delivery raised on %s", item.key)
            # It may have raised after doing its work (its bookkeeping failed): the next
            # attempt is flagged, so it looks before it does it again.
            return RetryLater(f"{type(exc).__name__}: {exc}", uncertain=True)

    def _apply(self, item: Item, outcome: Outcome) -> None:
        if isinstance(outcome, Delivered):
            self._queue.done(item.key)
        elif isinstance(outcome, RetryLater):
            delay = delay_for(outcome, item.attempts)
            log.log(
                logging.DEBUG if outcome.routine else logging.WARNING,
                "delivery of %s failed (attempt %d), retrying in %.1f s: %s",
                item.key,
                item.attempts,
                delay,
                outcome.reason,
            )
            self._queue.retry(item.key, delay, outcome.reason, uncertain=outcome.uncertain)
        else:
            log.error("delivery of %s failed for good, parked: %s", item.key, outcome.reason)
            self._queue.park(item.key, outcome.reason)
