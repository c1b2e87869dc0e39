"""Where the room keeps what it knows: one SQLite file, or one shared PostgreSQL database.

Unset ``THELOOP_DATABASE_URL`` (the embedded default, ``make run``): the queues in
``queues.sqlite3`` under the data directory and the books' records in Errbot's storage of
the plugin. Set: the queues, the books' records and this replica's heartbeat in the
database, so any replica can carry on with what another accepted; Errbot's storage then
keeps only Errbot's own settings, which are per process.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from looproom.durable.queue import DurableQueue, Failure, Item
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.postgres.replicas import Heartbeat, Seen
from looproom.postgres.state import PostgresState
from looproom.settings import Environment

QUEUES_FILE = "queues.sqlite3"


class Queue(Protocol):
    """What the workers, the webhook and the admin commands ask of a durable queue."""

    name: str

    def put(self, key: str, payload: str, group: str = "") -> bool: ...
    def claim(self, now: float | None = None) -> Item | None: ...
    def done(self, key: str) -> None: ...
    def retry(
        self, key: str, after_seconds: float, error: str, *, uncertain: bool = False
    ) -> None: ...
    def park(self, key: str, error: str) -> None: ...
    def retry_now(self, key: str) -> bool: ...
    def drop(self, key: str) -> bool: ...
    def get(self, key: str) -> Item | None: ...
    def list(self, limit: int = 100) -> list[Item]: ...
    def depth(self) -> int: ...
    def oldest(self) -> float | None: ...
    def counts(self) -> dict[str, int]: ...
    def next_due(self) -> float | None: ...
    def last_error(self) -> Failure | None: ...
    def wait(self, timeout: float) -> None: ...
    def wake(self) -> None: ...
    def writable(self) -> str: ...
    def close(self) -> None: ...


@dataclass
class Stores:
    """The state mapping and the two queues of one activation, and what they live in."""

    state: MutableMapping[str, Any]
    inbox: Queue
    relay: Queue
    #: ``SQLite <file>`` or ``PostgreSQL <url without password>``, for status lines.
    where: str
    replica: str = ""
    heartbeat: Heartbeat | None = None
    database: Database | None = field(default=None, repr=False)

    def start(self) -> None:
        if self.heartbeat is not None:
            self.heartbeat.start()

    def replicas(self) -> list[Seen]:
        """The replicas seen within a lease (empty on SQLite: one process, no heartbeat)."""
        return self.heartbeat.seen() if self.heartbeat is not None else []

    def close(self) -> None:
        """Close the queues, then stop the heartbeat (its claims lapse a lease later)."""
        self.inbox.close()
        self.relay.close()
        if self.heartbeat is not None:
            self.heartbeat.stop()
        if self.database is not None:
            self.database.close()


def open_stores(
    env: Environment, data_dir: Path, errbot_store: MutableMapping[str, Any], names: tuple[str, str]
) -> Stores:
    """The stores ``env`` asks for; ``names`` are the inbox's and the relay's queue names."""
    inbox, relay = names
    if not env.database_url:
        path = data_dir / QUEUES_FILE
        return Stores(
            errbot_store, DurableQueue(path, inbox), DurableQueue(path, relay), f"SQLite {path}"
        )
    database = Database(env.database_url)
    beat = Heartbeat(database, env.replica, env.lease_seconds)
    lease = env.lease_seconds
    return Stores(
        PostgresState(database),
        PostgresQueue(database, inbox, replica=beat.id, lease=lease),
        PostgresQueue(database, relay, replica=beat.id, lease=lease),
        f"PostgreSQL {database.name}",
        replica=env.replica,
        heartbeat=beat,
        database=database,
    )
