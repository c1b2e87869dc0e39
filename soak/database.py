"""The shared mode's database in the soak: a PostgreSQL server of its own, and its faults.

``--replicas 2`` runs the bots on one PostgreSQL, started from the machine's binaries as
the tests start theirs (:mod:`tests.support.postgres`), in a temporary directory removed
at the end. A ``db-restart`` stops the server (a fast shutdown: every connection cut) and
starts it again after its outage; a ``db-cut`` terminates the bots' connections
(``pg_terminate_backend``), as a failover or a proxy does. The soak reads the replicas'
queues here, with a connection of its own opened for each look, so a look during an
outage says "unknown" rather than waiting.
"""

from __future__ import annotations

import threading
import time

import psycopg

from tests.support.postgres import PostgresServer

#: What a look at the queues waits for a connection before it says "unknown".
LOOK_TIMEOUT = 2


class SoakDatabase:
    """One server, one database for the replicas; restarted and cut by the faults."""

    def __init__(self) -> None:
        # fsync off, as in the tests: a fast shutdown still writes every commit out; only a
        # crash of the machine itself would lose one, and that is not what is soaked.
        self.server = PostgresServer()
        self.server.start()
        self.url = self.server.new_database()
        self.database = self.url.rsplit("/", 1)[1]
        #: Each outage: (stopped at, started again at) in monotonic time; the last may be open.
        self.outages: list[tuple[float, float | None]] = []
        self._lock = threading.Lock()
        self._back: threading.Timer | None = None
        self.broken = ""

    @property
    def up(self) -> bool:
        with self._lock:
            return not self.outages or self.outages[-1][1] is not None

    def restart(self, down: float) -> bool:
        """Stop the server now and start it again ``down`` s later; False when it is down."""
        with self._lock:
            if self.outages and self.outages[-1][1] is None:
                return False
            self.outages.append((time.monotonic(), None))
        self.server.stop()
        self._back = threading.Timer(down, self._start_again)
        self._back.daemon = True
        self._back.start()
        return True

    def _start_again(self) -> None:
        for _ in range(3):  # the port may linger a moment after the stop
            try:
                self.server.start()
                break
            except RuntimeError as exc:
                said = str(exc)
                time.sleep(1.0)
        else:
            self.broken = f"PostgreSQL did not start again:\n{said}"
        with self._lock:
            self.outages[-1] = (self.outages[-1][0], time.monotonic())

    def cut(self) -> int:
        """Terminate every connection to the bots' database; how many were cut (0 when
        the server is down)."""
        try:
            with psycopg.connect(self.server.url(), connect_timeout=LOOK_TIMEOUT) as admin:
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (self.database,),
                ).fetchall()
        except psycopg.OperationalError:
            return 0
        return sum(1 for (done,) in rows if done)

    def calm(self) -> None:
        """Wait for the server to be back, if an outage is under way."""
        if self._back is not None:
            self._back.join()

    def longest_outage(self) -> float:
        return max((end - start for start, end in self.outages if end is not None), default=0.0)

    def during_outage(self, start: float, end: float) -> bool:
        """Whether the span ``start``–``end`` (monotonic) overlapped an outage."""
        with self._lock:
            spans = [(a, b if b is not None else time.monotonic()) for a, b in self.outages]
        return any(a < end and start < b for a, b in spans)

    def queue_states(self) -> dict[tuple[str, str], int] | None:
        """``(queue, state)`` → how many items; None when the database cannot say now."""
        rows = self._look("SELECT queue, state, COUNT(*) FROM theloop_items GROUP BY queue, state")
        if rows is None:
            return None
        return {(str(q), str(s)): int(n) for q, s, n in rows}

    def inbox_state(self, key: str) -> str:
        """The inbox's state for the event ``key`` (``""``: not stored, or cannot say)."""
        rows = self._look("SELECT state FROM theloop_items WHERE queue = 'inbox' AND key = %s", key)
        return str(rows[0][0]) if rows else ""

    def look(self, sql: str) -> list[tuple] | None:
        """Rows of ``sql``; None when the database cannot say now."""
        return self._look(sql)

    def _look(self, sql: str, *values: object) -> list[tuple] | None:
        if not self.up:
            return None
        try:
            with psycopg.connect(self.url, connect_timeout=LOOK_TIMEOUT) as db:
                return db.execute(sql, values).fetchall()
        except psycopg.OperationalError:
            return None

    def close(self) -> None:
        if self._back is not None:
            self._back.cancel()
        self.server.close()
