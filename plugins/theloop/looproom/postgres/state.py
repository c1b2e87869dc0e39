"""The plugin's key-value state in the shared database, for every replica at once.

A :class:`PostgresState` is the mapping the room's books keep their records in (bindings,
memory, told, cursors, kickoff claims, the stream's cursor) — what Errbot's storage holds
on one machine. Nothing is cached: each read asks the database, so what another replica
wrote is what the next read sees. Values are JSON text (never pickle: a row another
process wrote must not be able to run code here; ``text``, not ``jsonb``, because the
books' least-recently-used order is the order of a mapping's keys).

``atomic`` is the books' lock (:func:`looproom.durable.state.lock_for`): inside it, on one
thread, every read and write is one transaction that first takes an advisory lock every
replica takes, so two replicas' read-modify-writes never interleave. It is re-entrant:
a book calling another inside its block joins the same transaction.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, MutableMapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from types import TracebackType
from typing import Any

import psycopg

from looproom.postgres.database import Database

#: The advisory lock of the state's read-modify-writes (constant, shared with no one else).
STATE_LOCK = 7_311_402_024


class _Atomic(AbstractContextManager["_Atomic"]):
    """One transaction per thread under the state's advisory lock; re-entrant."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._local = threading.local()
        # Taken before a connection is: threads of one process queue here, not each holding
        # a pooled connection while the advisory lock keeps them waiting.
        self._here = threading.RLock()

    @property
    def connection(self) -> psycopg.Connection | None:
        """This thread's connection inside a block, else None."""
        return getattr(self._local, "connection", None)

    def __enter__(self) -> _Atomic:
        depth = getattr(self._local, "depth", 0)
        if depth == 0:
            stack = ExitStack()
            stack.enter_context(self._here)
            try:
                connection = stack.enter_context(self._db.transaction())
                connection.execute("SELECT pg_advisory_xact_lock(%s)", (STATE_LOCK,))
            except BaseException:
                stack.close()
                raise
            self._local.stack, self._local.connection = stack, connection
        self._local.depth = depth + 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        self._local.depth -= 1
        if self._local.depth == 0:
            stack, self._local.stack, self._local.connection = self._local.stack, None, None
            return bool(stack.__exit__(kind, error, trace))
        return False


class PostgresState(MutableMapping[str, Any]):
    """Key → JSON value in ``theloop_state``; ``atomic`` guards read-modify-writes."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self.atomic = _Atomic(database)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        inside = self.atomic.connection
        if inside is not None:
            yield inside
        else:
            with self._db.connection() as connection:
                yield connection

    def __getitem__(self, key: str) -> Any:
        with self._connection() as db:
            row = db.execute("SELECT value FROM theloop_state WHERE key = %s", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return json.loads(row[0])

    def __setitem__(self, key: str, value: Any) -> None:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        with self._connection() as db:
            db.execute(
                "INSERT INTO theloop_state (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, text),
            )

    def __delitem__(self, key: str) -> None:
        with self._connection() as db:
            if db.execute("DELETE FROM theloop_state WHERE key = %s", (key,)).rowcount == 0:
                raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        with self._connection() as db:
            rows = db.execute("SELECT key FROM theloop_state ORDER BY key").fetchall()
        return iter([str(row[0]) for row in rows])

    def __len__(self) -> int:
        with self._connection() as db:
            row = db.execute("SELECT COUNT(*) FROM theloop_state").fetchone()
        return int(row[0]) if row else 0
