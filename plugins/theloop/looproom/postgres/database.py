"""One PostgreSQL database shared by every replica: its connections, its name, its failures.

:class:`Database` opens a small connection pool on ``THELOOP_DATABASE_URL``, migrates the
schema (:mod:`looproom.postgres.schema`) and names the server for status lines without its
password. Every failure to reach it becomes a :class:`StorageError` naming the server, as a
SQLite file's failure names the file, so the webhook answers 503 and the delivery loop
waits and tries again alike on either store.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import psycopg_pool

from looproom.durable.sqlite import StorageError
from looproom.http.origins import redact_url
from looproom.postgres import schema
from looproom.postgres.wakeups import Wakeups

log = logging.getLogger(__name__)

#: Seconds a caller waits for a connection before the database counts as unreachable:
#: short, so the webhook answers 503 quickly and the sender retries.
CONNECT_TIMEOUT = 5.0
#: Per replica: the workers, the heartbeat, the desk and the HTTP server's threads.
POOL_SIZE = 12


class Database:
    """The shared database: a pool of autocommit connections, the schema migrated on open."""

    def __init__(
        self, url: str, *, pool_size: int = POOL_SIZE, timeout: float | None = None
    ) -> None:
        """``timeout``: seconds to wait for a connection (default :data:`CONNECT_TIMEOUT`)."""
        timeout = CONNECT_TIMEOUT if timeout is None else timeout
        self.url, self.name = url, redact_url(url)
        #: Other replicas' puts and settles, heard: what wakes this process's workers.
        self.wakeups = Wakeups(url)
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": max(1, int(timeout))},
            # No check on checkout (a round trip per use): a connection an outage cut fails
            # its first query, as a StorageError the caller retries, and the pool drops it.
            timeout=timeout,
            name="theloop",
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=timeout * 2)
            with self.connection() as connection:
                found = schema.migrate(connection)
        except schema.SchemaTooNew:
            self._pool.close()
            raise
        except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
            self._pool.close()
            raise StorageError(self.name, exc) from exc
        if found < schema.VERSION:
            log.info("database %s: schema migrated from %d to %d", self.name, found, schema.VERSION)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled autocommit connection; any database failure as a :class:`StorageError`."""
        try:
            with self._pool.connection() as connection:
                yield connection
        except (psycopg.OperationalError, psycopg.InterfaceError, psycopg_pool.PoolTimeout) as exc:
            raise StorageError(self.name, exc) from exc

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """:meth:`connection` inside one transaction: committed on exit, rolled back on a raise."""
        with self.connection() as connection, connection.transaction():
            yield connection

    def writable(self) -> str:
        """ "" when a write could be made now; else why not (the server named)."""
        try:
            with self.transaction() as connection:
                connection.execute("SELECT txid_current()")
        except StorageError as exc:
            return str(exc)
        return ""

    def close(self) -> None:
        self.wakeups.close()
        self._pool.close()
