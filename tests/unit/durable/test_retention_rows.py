"""Delivered ids remembered at the row budget's default: at most 100,000 per queue, as
`docs/configuration.md` says — with exactly 100,000 delivered the oldest is still a
duplicate after a sweep, with 100,001 it is forgotten and the next oldest is not.

On SQLite and on the shared PostgreSQL. The delivered rows before the edge are put in the
table directly (one statement), within the seven days; the queue sweeps them itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from looproom.durable.contract import WorkQueue
from looproom.durable.queue import DurableQueue
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue

DOCUMENTED_ROWS = 100_000
NOW = 1_000_000.0

#: A queue, and a way to put ``n`` delivered ids (``k0`` … ``k<n-1>``, oldest first) in it.
Opened = tuple[WorkQueue, Callable[[int], None]]


@pytest.fixture(params=["sqlite", "postgresql"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opened]:
    if request.param == "sqlite":
        path = tmp_path / "queues.sqlite3"
        queue = DurableQueue(path, "inbox", clock=lambda: NOW)

        def seed(count: int) -> None:
            rows = ((f"k{n}", NOW - 60.0) for n in range(count))
            with sqlite3.connect(path) as connection:
                connection.executemany(
                    "INSERT INTO items (queue, key, payload, state, due, created, updated)"
                    " VALUES ('inbox', ?, '{}', 'done', 0, ?2, ?2)",
                    rows,
                )

        yield queue, seed
        queue.close()
        return
    database = Database(request.getfixturevalue("database_url"))
    shared = PostgresQueue(database, "inbox", replica="a", lease=30.0, clock=lambda: NOW)

    def seed_postgres(count: int) -> None:
        with database.transaction() as connection:
            connection.execute(
                "INSERT INTO theloop_items (queue, key, payload, state, due, created, updated)"
                " SELECT 'inbox', 'k' || n, '{}', 'done', 0, %s, %s"
                " FROM generate_series(0, %s - 1) AS n ORDER BY n",
                (NOW - 60.0, NOW - 60.0, count),
            )

    yield shared, seed_postgres
    shared.close()
    database.close()


def test_with_exactly_100000_delivered_the_oldest_is_still_a_duplicate(opened: Opened) -> None:
    queue, seed = opened
    seed(DOCUMENTED_ROWS)
    queue.prune()
    assert queue.put("k0", "{}") is False  # a late retry of it is still recognised
    assert queue.depth() == 0


def test_with_100001_delivered_the_oldest_is_forgotten_and_the_next_is_not(
    opened: Opened,
) -> None:
    queue, seed = opened
    seed(DOCUMENTED_ROWS + 1)
    queue.prune()
    assert queue.put("k1", "{}") is False
    assert queue.put("k0", "{}") is True  # forgotten: taken as new
