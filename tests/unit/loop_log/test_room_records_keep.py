"""The room's records for the-loop's event log at their default bound: the last 10 000 kept,
as `docs/connect-the-loop.md` tells the reader — the 10 000th record keeps the first, the
10 001st lets it go and a reader that read it is told it missed nothing more.

On SQLite and on the shared PostgreSQL. The 9 999 records before the edge are put in the
table directly (one statement), the ones at and past it through the book itself.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from looproom.loop_log.book import Record, RoomRecords, postgres_records, sqlite_records
from looproom.postgres.database import Database
from looproom.postgres.schema import migrate

DOCUMENTED_KEEP = 10_000
ITEM = "github:acme/api#7"
_BODY = json.dumps({"event": "channel.posted", "ts": "2026-12-07T10:00:00.000Z", "level": "info"})
_ROWS = "INSERT INTO theloop_room_records (id, work_item, record) VALUES (?, ?, ?)"

#: The records' store and a way to put ``n`` records (``r1`` … ``rn``) in it directly.
Opened = tuple[RoomRecords, Callable[[int], None]]


@pytest.fixture(params=["sqlite", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    if request.param == "sqlite":
        path = tmp_path / "queues.sqlite3"
        records = sqlite_records(path)
        records.has("r0")  # the table is made

        def seed(count: int) -> None:
            with sqlite3.connect(path) as connection:
                rows = ((f"r{n}", ITEM, _BODY) for n in range(1, count + 1))
                connection.executemany(_ROWS, rows)

        yield records, seed
        return
    database = Database(request.getfixturevalue("database_url"))
    with database.transaction() as connection:
        migrate(connection)

    def seed_postgres(count: int) -> None:
        with database.transaction() as connection:
            connection.execute(
                "INSERT INTO theloop_room_records (id, work_item, record)"
                " SELECT 'r' || n, %s, %s FROM generate_series(1, %s) AS n ORDER BY n",
                (ITEM, _BODY, count),
            )

    yield postgres_records(database), seed_postgres
    database.close()


def _record(n: int) -> Record:
    return Record(f"r{n}", "channel.posted", "2026-12-07T10:00:00.000Z")


def test_the_ten_thousandth_record_keeps_the_first(opened: Opened) -> None:
    records, seed = opened
    seed(DOCUMENTED_KEEP - 1)
    assert records.add(_record(DOCUMENTED_KEEP), ITEM)
    assert records.has("r1") and records.has(f"r{DOCUMENTED_KEEP}")
    page = records.since(0, limit=1)
    assert [r["id"] for r in page.records] == ["r1"] and page.missed == 0


def test_the_ten_thousand_and_first_record_lets_the_first_go(opened: Opened) -> None:
    records, seed = opened
    seed(DOCUMENTED_KEEP)
    assert records.add(_record(DOCUMENTED_KEEP + 1), ITEM)
    assert not records.has("r1")
    assert records.has("r2") and records.has(f"r{DOCUMENTED_KEEP + 1}")
    assert [r["id"] for r in records.since(0, limit=1).records] == ["r2"]
    behind = records.since(1)  # a reader that had read r1 only: nothing of it lost
    assert behind.missed == 0 and behind.records[0]["id"] == "r2"
