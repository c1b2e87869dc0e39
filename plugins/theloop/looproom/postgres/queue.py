"""The durable queue on the shared database: one queue, many replicas, each item once.

The contract of :mod:`looproom.durable.contract` (the SQLite queue's docstring has the
states), kept by several processes at once:

- A claim locks the row it takes (``FOR UPDATE SKIP LOCKED``): two replicas claiming at
  once take two different items, neither waits for the other.
- The claimer writes its replica id and a lease (``lease_until``) on the item; its
  heartbeat (:mod:`looproom.postgres.replicas`) extends the leases of what it holds. An
  item in flight whose lease ran out belongs to a replica that stopped: any replica claims
  it again, flagged ``maybe_delivered``, and reconciles it as after a crash.
- Only the holder settles an item in flight (done, retry, park): a replica that lost its
  claim to a takeover cannot undo the new holder's work.
- A settle the database cannot take now (an outage) is owed, not lost: it is recorded
  before this replica's next claim, and meanwhile the heartbeat keeps the item this
  replica's, so nobody delivers it again.
- Puts of one group take an advisory lock on it, so items of a group are numbered in the
  order they commit and a claim never sees a later one before an earlier one.

Times are the replicas' clocks (keep them in sync, as NTP does).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from looproom.durable import queue as sqlite_queue
from looproom.durable.contract import Failure, Item
from looproom.durable.sqlite import StorageError
from looproom.postgres.database import Database
from looproom.postgres.wakeups import CHANNEL

_FIRST_IN_GROUP = (
    "(i.grp = '' OR NOT EXISTS (SELECT 1 FROM theloop_items AS earlier"
    " WHERE earlier.queue = i.queue AND earlier.grp = i.grp AND earlier.seq < i.seq"
    " AND earlier.state IN ('pending', 'inflight')))"
)
_COLUMNS = (
    "key, payload, state, attempts, maybe_delivered, due, created, last_error, first_try, grp"
)
_OPEN = ("pending", "inflight", "parked")

log = logging.getLogger(__name__)


class PostgresQueue:
    """A named FIFO queue in the shared database, claimed by this replica as ``replica``."""

    def __init__(
        self,
        database: Database,
        name: str,
        *,
        replica: str,
        lease: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name, self.replica, self.lease = name, replica, lease
        self.path = database.name  # what a StorageError and the status lines name
        self._db, self._clock = database, clock
        self._changed = threading.Event()
        #: Settles the database did not take yet (key, assignments, values), oldest first.
        self._owed: list[tuple[str, str, tuple[object, ...]]] = []
        self._owed_lock = threading.Lock()
        database.wakeups.register(name, self._changed)
        self._puts = 0
        self.prune()

    def put(self, key: str, payload: str, group: str = "") -> bool:
        """Store an item durably; False when ``key`` was seen before (a duplicate)."""
        now = self._clock()
        # One round trip (a pipeline): the group's lock, the row, the news to the replicas.
        with self._db.connection() as db, db.pipeline(), db.transaction():
            if group:  # numbered in commit order within the group (see the module's doc)
                db.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))", (self.name, group)
                )
            cursor = db.execute(
                "WITH added AS (INSERT INTO theloop_items"
                " (queue, key, payload, state, due, created, updated, grp)"
                " VALUES (%s, %s, %s, 'pending', %s, %s, %s, %s)"
                " ON CONFLICT (queue, key) DO NOTHING RETURNING queue)"
                f" SELECT pg_notify('{CHANNEL}', queue) FROM added",
                (self.name, key, payload, now, now, now, group),
            )
        added = cursor.rowcount == 1
        if added:
            self._changed.set()
        self._puts += 1
        if self._puts % sqlite_queue._PRUNE_EVERY == 0:
            self.prune()
        return added

    def claim(self, now: float | None = None) -> Item | None:
        """The oldest due item not held back by its group — or one in flight whose holder's
        lease ran out (then flagged ``maybe_delivered``) — held by this replica now."""
        now = self._clock() if now is None else now
        self._pay_owed()  # an item delivered before an outage is settled before the next
        with self._db.connection() as db:  # one statement: the lock and the claim at once
            row = db.execute(
                "UPDATE theloop_items SET state = 'inflight', attempts = attempts + 1,"
                " updated = %s, first_try = CASE WHEN first_try = 0 THEN %s ELSE first_try END,"
                " owner = %s, lease_until = %s,"
                # SET reads the row as it was: one in flight was a lapsed claim, taken over
                " maybe_delivered = maybe_delivered OR state = 'inflight'"
                " WHERE seq = (SELECT i.seq FROM theloop_items AS i WHERE i.queue = %s"
                " AND ((i.state = 'pending' AND i.due <= %s)"
                " OR (i.state = 'inflight' AND i.lease_until < %s))"
                f" AND {_FIRST_IN_GROUP} ORDER BY i.seq LIMIT 1 FOR UPDATE OF i SKIP LOCKED)"
                f" RETURNING {_COLUMNS}",
                (now, now, self.replica, now + self.lease, self.name, now, now),
            ).fetchone()
        return None if row is None else sqlite_queue._item(row)

    def holds(self, key: str) -> bool:
        """Whether this replica still holds ``key`` in flight, with a quarter of a lease
        left (a beat is due every third): a write a delivery makes asks this first
        (:mod:`looproom.durable.fence`). A database that cannot say: not held, so
        nothing is done that may be another replica's by now."""
        try:
            row = self._one(
                "SELECT 1 FROM theloop_items WHERE queue = %s AND key = %s"
                " AND state = 'inflight' AND owner = %s AND lease_until > %s",
                key,
                self.replica,
                self._clock() + self.lease / 4,
            )
        except StorageError:
            return False
        return row is not None

    def done(self, key: str) -> None:
        """Delivered: forget the payload, remember the key for deduplication."""
        self._settle(key, "state = 'done', payload = '', maybe_delivered = FALSE", ())

    def retry(self, key: str, after_seconds: float, error: str, *, uncertain: bool = False) -> None:
        """Not delivered yet: due again in ``after_seconds``; ``uncertain`` flags it."""
        due = self._clock() + max(0.0, after_seconds)
        flag = ", maybe_delivered = TRUE" if uncertain else ""
        self._settle(key, f"state = 'pending', due = %s, last_error = %s{flag}", (due, error))

    def park(self, key: str, error: str) -> None:
        """Stuck: kept and visible, not retried until :meth:`retry_now`."""
        self._settle(key, "state = 'parked', last_error = %s", (error,))

    def _settle(self, key: str, assignments: str, values: tuple[object, ...]) -> None:
        """The holder's word on its item: an item in flight under another replica's claim
        (taken over after this one's lease ran out) is left to that replica. When the
        database cannot take it now, it is owed (see the module's doc)."""
        try:
            self._pay_owed()
            self._set_held(key, assignments, values)
        except StorageError as exc:
            with self._owed_lock:
                self._owed.append((key, assignments, values))
            log.warning("queue %s: %s settled but not recorded yet: %s", self.name, key, exc)

    def _set_held(self, key: str, assignments: str, values: tuple[object, ...]) -> bool:
        held = "AND (state <> 'inflight' OR owner = %s)"
        return self._set(key, assignments, values, _OPEN, held, (self.replica,))

    def _pay_owed(self) -> None:
        """Record the settles owed, oldest first; raises while the database still fails."""
        with self._owed_lock:
            owed, self._owed = self._owed, []
        for done, (key, assignments, values) in enumerate(owed):
            try:
                self._set_held(key, assignments, values)
            except StorageError:
                with self._owed_lock:
                    self._owed[:0] = owed[done:]
                raise

    def retry_now(self, key: str) -> bool:
        """Make a parked or waiting item due now; False if no such open item."""
        return self._set(
            key, "state = 'pending', due = %s", (self._clock(),), ("pending", "parked")
        )

    def drop(self, key: str) -> bool:
        """Give up on an open item (its key stays remembered); False if no such item."""
        return self._set(
            key, "state = 'dropped', payload = '', last_error = 'dropped by an admin'", (), _OPEN
        )

    def _set(
        self,
        key: str,
        assignments: str,
        values: tuple[object, ...],
        states: tuple[str, ...],
        also: str = "",
        also_values: tuple[object, ...] = (),
    ) -> bool:
        with self._db.connection() as db:  # a settled item may free its group's next one
            cursor = db.execute(
                f"WITH changed AS (UPDATE theloop_items SET {assignments}, updated = %s"
                f" WHERE queue = %s AND key = %s AND state = ANY(%s) {also} RETURNING queue)"
                f" SELECT pg_notify('{CHANNEL}', queue) FROM changed",
                (*values, self._clock(), self.name, key, list(states), *also_values),
            )
            changed = cursor.rowcount == 1
        if changed:
            self._changed.set()
        return changed

    def get(self, key: str) -> Item | None:
        """One item by key, in any state (done items have an empty payload)."""
        row = self._one(f"SELECT {_COLUMNS} FROM theloop_items WHERE queue = %s AND key = %s", key)
        return None if row is None else sqlite_queue._item(row)

    def list(self, limit: int = 100) -> list[Item]:
        """The open items (pending, in flight, parked), oldest first."""
        with self._db.connection() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM theloop_items WHERE queue = %s AND state = ANY(%s)"
                " ORDER BY seq LIMIT %s",
                (self.name, list(_OPEN), limit),
            ).fetchall()
        return [sqlite_queue._item(row) for row in rows]

    def depth(self) -> int:
        """How many items are not delivered yet (pending, in flight or parked)."""
        row = self._one(
            "SELECT COUNT(*) FROM theloop_items WHERE queue = %s AND state = ANY(%s)", list(_OPEN)
        )
        return int(row[0]) if row else 0

    def oldest(self) -> float | None:
        """When the oldest item not delivered yet was stored; None when there is none."""
        row = self._one(
            "SELECT MIN(created) FROM theloop_items WHERE queue = %s AND state = ANY(%s)",
            list(_OPEN),
        )
        return None if row is None or row[0] is None else float(row[0])

    def counts(self) -> dict[str, int]:
        """How many open items are in each state (pending, inflight, parked)."""
        with self._db.connection() as db:
            rows = db.execute(
                "SELECT state, COUNT(*) FROM theloop_items WHERE queue = %s AND state = ANY(%s)"
                " GROUP BY state",
                (self.name, list(_OPEN)),
            ).fetchall()
        return {state: 0 for state in _OPEN} | {str(s): int(n) for s, n in rows}

    def next_due(self) -> float | None:
        """When the earliest claimable item becomes due — a pending one, or one in flight
        whose lease runs out — None when there is none, or when the database cannot say
        (the worker then looks again after its idle wait; its claim meets the outage)."""
        try:
            row = self._one(
                "SELECT MIN(CASE WHEN i.state = 'pending' THEN i.due ELSE i.lease_until END)"
                " FROM theloop_items AS i WHERE i.queue = %s"
                f" AND i.state IN ('pending', 'inflight') AND {_FIRST_IN_GROUP}"
            )
        except StorageError:
            return None
        return None if row is None or row[0] is None else float(row[0])

    def last_error(self) -> Failure | None:
        """The most recent delivery error recorded on any item still remembered."""
        row = self._one(
            "SELECT key, last_error, updated FROM theloop_items WHERE queue = %s"
            " AND last_error <> '' ORDER BY updated DESC, seq DESC LIMIT 1"
        )
        return None if row is None else Failure(key=row[0], error=row[1], at=float(row[2]))

    def _one(self, sql: str, *values: object) -> tuple[object, ...] | None:
        with self._db.connection() as db:
            return db.execute(sql, (self.name, *values)).fetchone()

    def wait(self, timeout: float) -> None:
        """Sleep until an item was put, made due or settled — by any replica — since the
        last wait, or ``timeout``."""
        self._changed.wait(max(0.0, timeout))
        self._changed.clear()

    def wake(self) -> None:
        """Wake every :meth:`wait` (used to stop a worker promptly)."""
        self._changed.set()

    def prune(self) -> None:
        """Forget delivered keys past the retention window or beyond the row budget."""
        cutoff = self._clock() - sqlite_queue.RETENTION_SECONDS
        with self._db.transaction() as db:
            db.execute(
                "DELETE FROM theloop_items WHERE queue = %s AND state IN ('done', 'dropped')"
                " AND updated < %s",
                (self.name, cutoff),
            )
            db.execute(
                "DELETE FROM theloop_items WHERE seq IN (SELECT seq FROM theloop_items"
                " WHERE queue = %s AND state IN ('done', 'dropped') ORDER BY seq DESC OFFSET %s)",
                (self.name, sqlite_queue.RETENTION_ROWS),
            )

    def writable(self) -> str:
        """ "" when an item could be stored now; else why not (the server named)."""
        return self._db.writable()

    def close(self) -> None:
        """Nothing of its own to close: the database is its owner's to close."""
