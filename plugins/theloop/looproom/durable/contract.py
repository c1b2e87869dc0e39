"""The durable queue's contract: what the delivery worker and the admin commands rely on.

Any store that keeps the inbox or the relay implements :class:`WorkQueue` — SQLite in one
process (``looproom.durable.queue``), or a database shared by several bots. The rules,
each one a test in ``tests/unit/durable/test_queue_contract.py``:

* **Stored before acknowledged.** :meth:`WorkQueue.put` returns once the item is durable;
  a key seen before (open, delivered or dropped, within the retention) is a duplicate.
* **A claim is one atomic step.** :meth:`WorkQueue.claim` picks the oldest due pending item
  that no earlier item of its ``group`` holds back and marks it in flight, with one more
  attempt, in the same transaction: two claimers, in one process or in several, never get
  the same item, nor two items of one group.
* **Order within a group.** An item is held back while an earlier item of its group is
  pending (waiting for a retry too) or in flight; a parked or dropped one holds nothing
  back. Ungrouped items (``group=""``) are independent of each other.
* **In flight is settled once.** The claimer reports :meth:`~WorkQueue.done`,
  :meth:`~WorkQueue.retry` or :meth:`~WorkQueue.park` for the key it claimed.
* **A claimer that died.** Its item comes back pending and flagged ``maybe_delivered``
  (whoever delivers it next looks before doing it again): SQLite does so for every item in
  flight when the file is opened; a shared store when the claim's lease ran out.
* **Waking.** :meth:`~WorkQueue.wait` returns once an item was put or made due, or another
  claimer settled one (that may free its group's next item), or at the timeout;
  :meth:`~WorkQueue.wake` ends every wait at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Item:
    """One queued item as the deliverer or an admin sees it."""

    key: str
    payload: str
    state: str
    attempts: int
    #: Claimed before a crash or restart: it may have landed; the deliverer reconciles.
    maybe_delivered: bool
    due: float
    created: float
    last_error: str
    #: When it was first handed out (0.0: never): where a look-up of what may have
    #: landed starts.
    first_try: float = 0.0
    #: The items of one group are handed out one at a time, in the order put ("": none).
    group: str = ""


@dataclass(frozen=True)
class Failure:
    """The most recent delivery error, for ``!theloop status``."""

    key: str
    error: str
    at: float


class WorkQueue(Protocol):
    """A named durable queue; every method is safe to call from any thread."""

    name: str

    def put(self, key: str, payload: str, group: str = "") -> bool:
        """Store durably; False when ``key`` was seen before (a duplicate)."""
        ...

    def claim(self, now: float | None = None) -> Item | None:
        """The oldest due item its group does not hold back, now in flight; None if none."""
        ...

    def done(self, key: str) -> None:
        """Delivered: forget the payload, remember the key."""
        ...

    def retry(self, key: str, after_seconds: float, error: str, *, uncertain: bool = False) -> None:
        """Pending again, due in ``after_seconds``; ``uncertain`` flags ``maybe_delivered``."""
        ...

    def park(self, key: str, error: str) -> None:
        """Stuck: kept and visible, not retried until :meth:`retry_now`."""
        ...

    def retry_now(self, key: str) -> bool:
        """A parked or waiting item due now; False when there is no such open item."""
        ...

    def drop(self, key: str) -> bool:
        """Give up on an open item (its key stays remembered)."""
        ...

    def get(self, key: str) -> Item | None: ...

    def list(self, limit: int = 100) -> list[Item]:
        """The open items (pending, in flight, parked), oldest first."""
        ...

    def depth(self) -> int: ...

    def oldest(self) -> float | None: ...

    def counts(self) -> dict[str, int]: ...

    def next_due(self) -> float | None:
        """When the earliest claimable pending item is due; None when none is pending."""
        ...

    def last_error(self) -> Failure | None: ...

    def wait(self, timeout: float) -> None: ...

    def wake(self) -> None: ...

    def writable(self) -> str:
        """``""`` when an item could be stored now, else why not."""
        ...

    def close(self) -> None: ...
