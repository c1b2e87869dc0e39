"""A crash-safe durable queue on SQLite: store before acknowledging, deliver once.

One SQLite file can hold several named queues (the inbox of the-loop's events, the relay of
decisions). Durability: the file is opened by :mod:`looproom.durable.sqlite`, so every
commit is fsynced before :meth:`DurableQueue.put` returns, and a SIGKILL *or* a power cut
after the webhook's 202 cannot lose the event.

States: ``pending`` (due at ``due``) → ``inflight`` (claimed) → ``done`` | back to
``pending`` (retry) | ``parked`` (stuck: kept and visible, not retried until an admin says
so) | ``dropped`` (an admin gave up on it). Done and dropped keys are remembered for a while
so a retried delivery stays a duplicate after the item was delivered.

Order within a group: an item put with a ``group`` (the inbox uses the work item) is not
handed out while an earlier item of the same group is pending or in flight, so a later
event cannot overtake one that waits for a retry and a thread reads in the author's order.
A parked or dropped item no longer holds its group back: nothing waits behind a stuck one.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from looproom.durable import sqlite
from looproom.durable.contract import Failure, Item

__all__ = ["DurableQueue", "Failure", "Item"]

#: How long a delivered key is remembered for deduplication, and how many at most.
RETENTION_SECONDS = 7 * 24 * 3600
RETENTION_ROWS = 100_000
#: Below this much free space the health route says storage is failing, before a write does.
MIN_FREE_BYTES = 1024 * 1024
_PRUNE_EVERY = 1000  # puts between two prunes: pruning is a scan, not free

_SCHEMA = """
CREATE TABLE IF NOT EXISTS items (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    queue      TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    state      TEXT    NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    maybe_delivered INTEGER NOT NULL DEFAULT 0,
    due        REAL    NOT NULL,
    created    REAL    NOT NULL,
    updated    REAL    NOT NULL,
    last_error TEXT    NOT NULL DEFAULT '',
    grp        TEXT    NOT NULL DEFAULT '',
    first_try  REAL    NOT NULL DEFAULT 0,
    UNIQUE (queue, key)
);
CREATE INDEX IF NOT EXISTS items_due ON items (queue, state, due, seq);
"""
#: With state in the index the "earlier open item of my group?" probe is a seek, not a
#: scan over every delivered item of a long-lived work item.
_GROUP_INDEX = "CREATE INDEX IF NOT EXISTS items_group_open ON items (queue, grp, state, seq)"
#: A pending item that no earlier open item of its group holds back.
_FIRST_IN_GROUP = (
    "(grp = '' OR NOT EXISTS (SELECT 1 FROM items AS earlier WHERE earlier.queue = items.queue"
    " AND earlier.grp = items.grp AND earlier.seq < items.seq"
    " AND earlier.state IN ('pending', 'inflight')))"
)
_OPEN_STATES = ("pending", "inflight", "parked")
_COLUMNS = (
    "key, payload, state, attempts, maybe_delivered, due, created, last_error, first_try, grp"
)


class DurableQueue:
    """A named FIFO queue in a SQLite file; thread-safe (one connection, one lock).

    It keeps :class:`looproom.durable.contract.WorkQueue`'s contract for the claimers of one
    process: a claim is one ``BEGIN IMMEDIATE`` transaction under the lock, and an item
    in flight when the file is opened belonged to a process that is gone.
    """

    def __init__(
        self, path: str | Path, name: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        # An Event, not a Condition: a put between a consumer's empty claim and its wait
        # must still wake it (a Condition would lose that notification).
        self._changed = threading.Event()
        self._puts = 0
        self.path = Path(path)
        try:
            self._db = sqlite.connect(path)
            self._db.executescript(_SCHEMA)
            self._add_columns()
            self._recover()
            self.prune()
        except (sqlite3.Error, OSError) as exc:  # at start: say which file
            raise sqlite.StorageError(path, exc) from exc

    def _add_columns(self) -> None:
        """Files written before groups and first tries existed gain the columns (every old
        item ungrouped, never tried as far as it knows)."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(items)")}
        if "grp" not in columns:
            self._db.execute("ALTER TABLE items ADD COLUMN grp TEXT NOT NULL DEFAULT ''")
        if "first_try" not in columns:
            self._db.execute("ALTER TABLE items ADD COLUMN first_try REAL NOT NULL DEFAULT 0")
        self._db.execute(_GROUP_INDEX)

    def _recover(self) -> None:
        """Items in flight when the last process died may have been delivered: flag them."""
        with sqlite.transaction(self._db) as db:
            db.execute(
                "UPDATE items SET state='pending', maybe_delivered=1 "
                "WHERE queue=? AND state='inflight'",
                (self.name,),
            )

    def put(self, key: str, payload: str, group: str = "") -> bool:
        """Store an item durably; False when ``key`` was seen before (a duplicate).

        Items of one non-empty ``group`` are handed out one at a time, in the order put.
        """
        now = self._clock()
        with self._lock, _storage(self.path), sqlite.transaction(self._db) as db:
            cursor = db.execute(
                "INSERT OR IGNORE INTO items"
                " (queue, key, payload, state, due, created, updated, grp)"
                " VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)",
                (self.name, key, payload, now, now, now, group),
            )
            added = cursor.rowcount == 1
            if added:
                self._changed.set()
            self._puts += 1
            due_for_prune = self._puts % _PRUNE_EVERY == 0
        if due_for_prune:
            self.prune()
        return added

    def claim(self, now: float | None = None) -> Item | None:
        """The oldest due item not held back by its group, marked in flight with one more
        attempt; None if none is due."""
        now = self._clock() if now is None else now
        with self._lock, sqlite.transaction(self._db) as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM items WHERE queue=? AND state='pending' AND due<=? "
                f"AND {_FIRST_IN_GROUP} ORDER BY seq LIMIT 1",
                (self.name, now),
            ).fetchone()
            if row is None:
                return None
            db.execute(
                "UPDATE items SET state='inflight', attempts=attempts+1, updated=?, "
                "first_try=CASE WHEN first_try=0 THEN ? ELSE first_try END "
                "WHERE queue=? AND key=?",
                (now, now, self.name, row[0]),
            )
        item = _item(row)
        first = item.first_try or now
        return replace(item, state="inflight", attempts=item.attempts + 1, first_try=first)

    def done(self, key: str) -> None:
        """Delivered: forget the payload, remember the key for deduplication."""
        self._set(key, "state='done', payload='', maybe_delivered=0", ())

    def retry(self, key: str, after_seconds: float, error: str, *, uncertain: bool = False) -> None:
        """Not delivered yet: due again in ``after_seconds``, the error kept for status.

        ``uncertain``: the attempt may have landed, so the item comes back flagged
        ``maybe_delivered`` (never cleared here: only :meth:`done` settles it).
        """
        due = self._clock() + max(0.0, after_seconds)
        flag = ", maybe_delivered=1" if uncertain else ""
        self._set(key, f"state='pending', due=?, last_error=?{flag}", (due, error))

    def park(self, key: str, error: str) -> None:
        """Stuck: kept and visible, not retried until :meth:`retry_now`."""
        self._set(key, "state='parked', last_error=?", (error,))

    def retry_now(self, key: str) -> bool:
        """Make a parked or waiting item due now; False if no such open item."""
        return self._set(
            key, "state='pending', due=?", (self._clock(),), states=("pending", "parked")
        )

    def drop(self, key: str) -> bool:
        """Give up on an open item (its key stays remembered); False if no such item."""
        return self._set(
            key, "state='dropped', payload='', last_error='dropped by an admin'", (), _OPEN_STATES
        )

    def _set(
        self,
        key: str,
        assignments: str,
        values: tuple[object, ...],
        states: tuple[str, ...] = _OPEN_STATES,
    ) -> bool:
        marks = ",".join("?" * len(states))
        with self._lock, sqlite.transaction(self._db) as db:
            cursor = db.execute(
                f"UPDATE items SET {assignments}, updated=? "
                f"WHERE queue=? AND key=? AND state IN ({marks})",
                (*values, self._clock(), self.name, key, *states),
            )
            changed = cursor.rowcount == 1
        if changed:  # a settled item may free its group's next one: a claimer looks again
            self._changed.set()
        return changed

    def get(self, key: str) -> Item | None:
        """One item by key, in any state (done items have an empty payload)."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM items WHERE queue=? AND key=?", (self.name, key)
            ).fetchone()
        return None if row is None else _item(row)

    def list(self, limit: int = 100) -> list[Item]:
        """The open items (pending, in flight, parked), oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM items WHERE queue=? AND state IN (?,?,?) "
                "ORDER BY seq LIMIT ?",
                (self.name, *_OPEN_STATES, limit),
            ).fetchall()
        return [_item(row) for row in rows]

    def depth(self) -> int:
        """How many items are not delivered yet (pending, in flight or parked)."""
        with self._lock:
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM items WHERE queue=? AND state IN (?,?,?)",
                (self.name, *_OPEN_STATES),
            ).fetchone()
        return int(count)

    def oldest(self) -> float | None:
        """When the oldest item not delivered yet was stored; None when there is none."""
        with self._lock:
            (created,) = self._db.execute(
                "SELECT MIN(created) FROM items WHERE queue=? AND state IN (?,?,?)",
                (self.name, *_OPEN_STATES),
            ).fetchone()
        return created

    def counts(self) -> dict[str, int]:
        """How many open items are in each state (pending, inflight, parked)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT state, COUNT(*) FROM items WHERE queue=? AND state IN (?,?,?) "
                "GROUP BY state",
                (self.name, *_OPEN_STATES),
            ).fetchall()
        return {state: 0 for state in _OPEN_STATES} | {str(s): int(n) for s, n in rows}

    def next_due(self) -> float | None:
        """When the earliest claimable pending item becomes due; None when none is pending."""
        with self._lock:
            (due,) = self._db.execute(
                "SELECT MIN(due) FROM items WHERE queue=? AND state='pending' "
                f"AND {_FIRST_IN_GROUP}",
                (self.name,),
            ).fetchone()
        return due

    def last_error(self) -> Failure | None:
        """The most recent delivery error recorded on any item still remembered."""
        with self._lock:
            row = self._db.execute(
                "SELECT key, last_error, updated FROM items WHERE queue=? AND last_error!='' "
                "ORDER BY updated DESC, seq DESC LIMIT 1",
                (self.name,),
            ).fetchone()
        return None if row is None else Failure(key=row[0], error=row[1], at=row[2])

    def wait(self, timeout: float) -> None:
        """Sleep until an item was added, made due or settled since the last wait, or
        ``timeout``.

        Call it after an empty :meth:`claim`: a put in between makes it return at once.
        """
        self._changed.wait(max(0.0, timeout))
        self._changed.clear()

    def wake(self) -> None:
        """Wake every :meth:`wait` (used to stop a worker promptly)."""
        self._changed.set()

    def prune(self) -> None:
        """Forget delivered keys past the retention window or beyond the row budget."""
        cutoff = self._clock() - RETENTION_SECONDS
        with self._lock, sqlite.transaction(self._db) as db:
            db.execute(
                "DELETE FROM items WHERE queue=? AND state IN ('done','dropped') AND updated<?",
                (self.name, cutoff),
            )
            db.execute(
                "DELETE FROM items WHERE seq IN (SELECT seq FROM items WHERE queue=? AND "
                "state IN ('done','dropped') ORDER BY seq DESC LIMIT -1 OFFSET ?)",
                (self.name, RETENTION_ROWS),
            )

    def writable(self) -> str:
        """ "" when an item could be stored now; else why not (the file named)."""
        try:
            free = shutil.disk_usage(self.path.parent).free
            with self._lock:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("ROLLBACK")
        except (sqlite3.Error, OSError) as exc:
            return str(sqlite.StorageError(self.path, exc))
        if free < MIN_FREE_BYTES:
            return f"storage {self.path}: {free} bytes free on its file system"
        return ""

    def close(self) -> None:
        """Close the file; the queue object is unusable afterwards."""
        with self._lock:
            self._db.close()


@contextmanager
def _storage(path: Path) -> Iterator[None]:
    """A SQLite failure (disk full, read-only) as a :class:`StorageError` naming the file."""
    try:
        yield
    except sqlite3.Error as exc:
        raise sqlite.StorageError(path, exc) from exc


def _item(row: tuple[object, ...]) -> Item:
    key, payload, state, attempts, maybe, due, created, error, first, group = row
    return Item(
        key=str(key),
        payload=str(payload),
        state=str(state),
        attempts=int(attempts),  # type: ignore[arg-type]
        maybe_delivered=bool(maybe),
        due=float(due),  # type: ignore[arg-type]
        created=float(created),  # type: ignore[arg-type]
        last_error=str(error),
        first_try=float(first),  # type: ignore[arg-type]
        group=str(group),
    )
