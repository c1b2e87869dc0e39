"""A SQLite file that keeps what it was told: WAL, every commit fsynced, any thread.

The durable queues and the Errbot storage plugin (``storage/sqlite/``) open their files
here, so what the bot accepted and what Errbot stored survive a SIGKILL and a power cut
alike: the WAL journal with ``synchronous=FULL`` fsyncs each commit before it returns
(NORMAL would survive a SIGKILL but not a power cut; FULL costs a fraction of a
millisecond per commit, see bench/bench_ingest.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path


class StorageError(RuntimeError):
    """A SQLite file cannot be opened, read or written; the message names the file."""

    def __init__(self, path: str | Path, error: BaseException) -> None:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        super().__init__(f"storage {path}: {reason}")
        self.path = str(path)


#: How long a writer waits for another connection's lock before it gives up.
BUSY_TIMEOUT = 30


def connect(path: str | Path) -> sqlite3.Connection:
    """A WAL, fully synchronous connection, usable from any thread (under the caller's lock).

    Autocommit (``isolation_level=None``): every transaction is opened explicitly, with
    :func:`transaction`, so none is left open by accident.
    """
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(
        str(path), isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT
    )
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` when anything is raised inside."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        # SQLite rolls back by itself on some errors (disk full): a second ROLLBACK would
        # raise and hide the error that matters.
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    try:
        db.execute("COMMIT")
    except BaseException:
        # A failed COMMIT (disk full) leaves the transaction open: every later BEGIN
        # would fail too, even once there is room again.
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise


def transactions(
    path: str | Path, schema: str
) -> Callable[[], AbstractContextManager[sqlite3.Connection]]:
    """The file ``path`` opened with its tables (``schema``), as one transaction at a time
    across threads; any SQLite failure, opening included, a :class:`StorageError`."""
    try:
        db = connect(path)
        db.executescript(schema)
    except sqlite3.Error as exc:
        raise StorageError(path, exc) from exc
    lock = threading.Lock()

    @contextmanager
    def transact() -> Iterator[sqlite3.Connection]:
        with lock:
            try:
                with transaction(db) as connection:
                    yield connection
            except sqlite3.Error as exc:
                raise StorageError(path, exc) from exc

    return transact
