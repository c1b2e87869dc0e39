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
from typing import Any

from looproom.attention.store import AskStore, postgres_asks, sqlite_asks
from looproom.durable.contract import WorkQueue
from looproom.durable.queue import DurableQueue
from looproom.loop_log.book import RoomRecords, postgres_records, sqlite_records
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.postgres.replicas import Heartbeat, Seen
from looproom.postgres.state import PostgresState
from looproom.settings import Environment

QUEUES_FILE = "queues.sqlite3"


@dataclass
class Stores:
    """The state mapping and the queues of one activation, and what they live in."""

    state: MutableMapping[str, Any]
    inbox: WorkQueue
    relay: WorkQueue
    #: ``SQLite <file>`` or ``PostgreSQL <url without password>``, for status lines.
    where: str
    #: Requests to open a work item from Slack, kept until their issue exists.
    kickoff: WorkQueue | None = None
    #: The asks on record (``looproom.attention``), beside the queues.
    asks: AskStore | None = None
    #: The asks' steps: mentions, direct messages, reminders, escalations.
    attention: WorkQueue | None = None
    #: The room's records for the-loop's event log (``looproom.loop_log``).
    room_records: RoomRecords | None = None
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
        for queue in (self.kickoff, self.attention):
            if queue is not None:
                queue.close()
        if self.heartbeat is not None:
            self.heartbeat.stop()
        if self.database is not None:
            self.database.close()


def open_stores(
    env: Environment,
    data_dir: Path,
    errbot_store: MutableMapping[str, Any],
    names: tuple[str, str],
    kickoff: str = "",
    attention: str = "",
) -> Stores:
    """The stores ``env`` asks for; ``names`` are the inbox's and the relay's queue names,
    ``kickoff`` the kickoff queue's and ``attention`` the asks' steps' (``""``: none)."""
    inbox, relay = names
    if not env.database_url:
        path = data_dir / QUEUES_FILE
        return Stores(
            errbot_store,
            DurableQueue(path, inbox),
            DurableQueue(path, relay),
            f"SQLite {path}",
            kickoff=DurableQueue(path, kickoff) if kickoff else None,
            asks=sqlite_asks(path),
            attention=DurableQueue(path, attention) if attention else None,
            room_records=sqlite_records(path),
        )
    database = Database(env.database_url)
    beat = Heartbeat(database, env.replica, env.lease_seconds)
    lease = env.lease_seconds
    return Stores(
        PostgresState(database),
        PostgresQueue(database, inbox, replica=beat.id, lease=lease),
        PostgresQueue(database, relay, replica=beat.id, lease=lease),
        f"PostgreSQL {database.name}",
        kickoff=PostgresQueue(database, kickoff, replica=beat.id, lease=lease) if kickoff else None,
        asks=postgres_asks(database),
        attention=PostgresQueue(database, attention, replica=beat.id, lease=lease)
        if attention
        else None,
        room_records=postgres_records(database),
        replica=env.replica,
        heartbeat=beat,
        database=database,
    )
