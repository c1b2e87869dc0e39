"""The delivery loop: claim due events from the inbox and hand each to the outlet (DESIGN §3.2).

A Slack outage or a restart costs a delay, never the event: what the outlet cannot post now
is retried with capped exponential backoff (or after the Retry-After it reports), forever,
and stays visible in ``!theloop queue``; only what the outlet calls :class:`Failed` is parked.
Retrying here, at the queue, and not only inside slack_sdk matters: its retry handlers share
one attempt count and give up during a long outage (§4 fact 4).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable

from looproom.durable.outcome import Delivered, Failed, Outcome, Outlet, RetryLater
from looproom.durable.queue import DurableQueue, Item
from looproom.inbound.events import Event, SchemaError

log = logging.getLogger(__name__)

BACKOFF_BASE = 1.0
BACKOFF_CAP = 300.0
#: A Retry-After beyond this is the peer's bug or an attack; wait at most this long.
RETRY_AFTER_CAP = 3600.0
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
    """The outlet's Retry-After when it gave one (bounded), else our backoff."""
    if outcome.after is not None:
        return min(max(0.0, outcome.after), RETRY_AFTER_CAP)
    return backoff(attempts)


class Worker:
    """One daemon thread delivering the queue's items in FIFO order of due items."""

    def __init__(
        self,
        queue: DurableQueue,
        outlet: Outlet,
        *,
        clock: Callable[[], float] = time.time,
        name: str = "theloop-delivery",
    ) -> None:
        self._queue = queue
        self._outlet = outlet
        self._clock = clock
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the loop to stop and wait for it; False if a delivery is still running."""
        self._stop.set()
        self._queue.wake()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.step():
                    self._idle()
            except Exception:  # the loop must outlive any one bad item or bug
                log.exception("delivery loop error; continuing")
                self._stop.wait(1.0)

    def _idle(self) -> None:
        due = self._queue.next_due()
        wait = IDLE_WAIT if due is None else min(IDLE_WAIT, due - self._clock())
        if not self._stop.is_set():
            self._queue.wait(max(0.05, wait))

    def step(self) -> bool:
        """Deliver one due item; False when none was due."""
        item = self._queue.claim(self._clock())
        if item is None:
            return False
        self._apply(item, self._deliver(item))
        return True

    def _deliver(self, item: Item) -> Outcome:
        try:
            event = Event.from_wire(json.loads(item.payload))
        except (ValueError, SchemaError) as exc:
            return Failed(f"stored payload is not an event: {exc}")
        try:
            return self._outlet.deliver(event, maybe_delivered=item.maybe_delivered)
        except Exception as exc:  # an outlet bug must not lose the event
            log.exception("outlet raised on %s", item.key)
            # It may have raised after posting (its bookkeeping failed): reconcile first.
            return RetryLater(f"{type(exc).__name__}: {exc}", uncertain=True)

    def _apply(self, item: Item, outcome: Outcome) -> None:
        if isinstance(outcome, Delivered):
            self._queue.done(item.key)
        elif isinstance(outcome, RetryLater):
            delay = delay_for(outcome, item.attempts)
            log.warning(
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
