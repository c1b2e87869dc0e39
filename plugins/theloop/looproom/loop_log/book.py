"""The room's records for the-loop's event log: kept in order, each once, for loopside to read.

the-loop's ``the-loop events`` and its dashboard read one JSONL file on the-loop's machine,
which the bot cannot write. So the room keeps its ``channel.*`` records here (beside the
queues: SQLite, or the shared PostgreSQL), numbered in the order they were written, each
under an id its cause gives it — a redelivered event, a second replica or a retried press
adds no second record. loopside, beside the-loop, reads them past its cursor
(:mod:`looproom.loop_log.read`) and appends them through the-loop's own writer.

Bounded: past :data:`KEEP` records the oldest go, and a reader that far behind is told how
many it missed. Keeping a record never breaks the room: a store that fails is logged, once,
as the-loop's own event log does.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from looproom.durable.sqlite import StorageError, transactions
from looproom.postgres.database import Database

log = logging.getLogger(__name__)

#: How many records are kept: a reader further behind is told how many it missed.
KEEP = 10_000
#: How many records one read returns at most.
PAGE_MAX = 500
LEVELS = ("debug", "info", "warning", "error")

SQLITE_TABLE = """
CREATE TABLE IF NOT EXISTS theloop_room_records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    work_item TEXT NOT NULL DEFAULT '',
    record TEXT NOT NULL
);
"""
#: Inserted only when the id is new: a repeat neither adds a row nor spends a number.
_INSERT = (
    "INSERT INTO theloop_room_records (id, work_item, record) SELECT ?, ?, ?"
    " WHERE NOT EXISTS (SELECT 1 FROM theloop_room_records WHERE id = ?)"
)
_TRIM = (
    "DELETE FROM theloop_room_records WHERE seq <= (SELECT max(seq) FROM theloop_room_records) - ?"
)
#: Said first by a writer: the table is its own until it commits (a no-op on SQLite,
#: whose ``BEGIN IMMEDIATE`` holds the file already).
LOCK = "LOCK TABLE theloop_room_records IN EXCLUSIVE MODE"

#: ``(sql, params) → rows`` inside one transaction (rows only for a SELECT).
Run = Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]


def stamp(at: float) -> str:
    """``at`` as the-loop's event log writes a time: UTC, milliseconds, ``Z``."""
    moment = datetime.fromtimestamp(at, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass(frozen=True)
class Record:
    """One record as the-loop's event log takes it: its type, level, time and fields."""

    id: str
    event: str
    ts: str
    level: str = "info"
    fields: Mapping[str, Any] = field(default_factory=dict)

    def wire(self, seq: int) -> dict[str, Any]:
        return {
            "seq": seq,
            "id": self.id,
            "event": self.event,
            "ts": self.ts,
            "level": self.level,
            "fields": dict(self.fields),
        }


@dataclass(frozen=True)
class Page:
    """Records past a cursor: ``next`` is the cursor to ask from next (past every record
    looked at, shown or not); ``missed`` how many were gone before the reader came back;
    ``more`` whether another page waits."""

    records: list[dict[str, Any]]
    next: int
    missed: int = 0
    more: bool = False


class RoomRecords:
    """The records kept; every method is one transaction, safe from any thread."""

    def __init__(self, transact: Callable[[], AbstractContextManager[Run]]) -> None:
        self._transact = transact
        self._warned = False

    def add(self, record: Record, work_item: str = "") -> bool:
        """Keep ``record``; False when its id was kept before, or the store failed (logged).
        ``work_item``: whose it is — a work item's ref, ``@`` and an instance's name, or
        ``""`` the room's own (:mod:`looproom.loop_log.channel` says who reads which)."""
        if record.level not in LEVELS:
            raise ValueError(f"level {record.level!r} is not one of {', '.join(LEVELS)}")
        body = json.dumps(
            {"event": record.event, "ts": record.ts, "level": record.level, **record.fields},
            ensure_ascii=False,
            separators=(",", ":"),
        )
        try:
            with self._transact() as run:
                run(LOCK, ())
                before = run("SELECT count(*) FROM theloop_room_records WHERE id = ?", (record.id,))
                if before[0][0]:
                    return False
                run(_INSERT, (record.id, work_item, body, record.id))
                run(_TRIM, (KEEP,))
        except StorageError as exc:
            if not self._warned:  # once: the room goes on without its records
                self._warned = True
                log.warning("the room's records for the-loop's event log: not kept: %s", exc)
            return False
        return True

    def has(self, rid: str) -> bool:
        """Whether a record of id ``rid`` is kept (False too when the store cannot say)."""
        try:
            with self._transact() as run:
                found = run("SELECT count(*) FROM theloop_room_records WHERE id = ?", (rid,))
        except StorageError:
            return False
        return bool(found[0][0])

    def since(
        self, after: int, limit: int = PAGE_MAX, visible: Callable[[str], bool] | None = None
    ) -> Page:
        """Up to ``limit`` records numbered past ``after``, oldest first; ``visible`` says
        which work items' records this reader may see (None: all). A cursor past every
        number this store gave is another store's (the bot's data started afresh): read
        from its first record, so nothing it keeps is skipped."""
        limit = max(1, min(limit, PAGE_MAX))
        with self._transact() as run:
            oldest, newest = run("SELECT min(seq), max(seq) FROM theloop_room_records", ())[0]
            if after > int(newest or 0):
                after = 0
            rows = run(
                "SELECT seq, id, work_item, record FROM theloop_room_records"
                " WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, limit + 1),
            )
        more = len(rows) > limit
        rows = rows[:limit]
        missed = max(0, int(oldest) - after - 1) if oldest is not None and after > 0 else 0
        shown = [
            _wire(int(seq), str(rid), str(body))
            for seq, rid, item, body in rows
            if visible is None or visible(str(item))
        ]
        return Page(shown, int(rows[-1][0]) if rows else after, missed, more)


def _wire(seq: int, rid: str, body: str) -> dict[str, Any]:
    kept = json.loads(body)
    event, ts, level = kept.pop("event"), kept.pop("ts"), kept.pop("level")
    return Record(rid, event, ts, level, kept).wire(seq)


def sqlite_records(path: str | Path) -> RoomRecords:
    """The records in the SQLite file ``path`` (the queues' file: one place to back up)."""
    opened = transactions(path, SQLITE_TABLE)

    @contextmanager
    def transact() -> Iterator[Run]:
        with opened() as connection:
            yield (
                lambda sql, params: (
                    [] if sql == LOCK else connection.execute(sql, params).fetchall()
                )
            )

    return RoomRecords(transact)


def postgres_records(database: Database) -> RoomRecords:
    """The records in the shared database. A writer locks the table first, so numbers are
    taken in the order they commit: a reader past ``seq`` never misses one committed later."""

    @contextmanager
    def transact() -> Iterator[Run]:
        with database.transaction() as connection:

            def run(sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
                cursor = connection.execute(sql.replace("?", "%s"), params)
                return [tuple(row) for row in cursor.fetchall()] if cursor.description else []

            yield run

    return RoomRecords(transact)
