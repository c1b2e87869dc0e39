"""The asks on record, in SQLite beside the queues or in the shared PostgreSQL database.

Both keep one table, ``theloop_asks`` (PostgreSQL's is migrated by
``looproom.postgres.schema``), and the same rules, each one statement: an ask is opened
once (its id is the key), closed once, and each step — reminded, escalated, claimed — is
taken once and only while the ask is open. That compare-and-set is what keeps two
replicas, a restart or an answer racing a reminder from reminding anyone twice or after
the answer: whoever's update changed the row sends; the other sends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from looproom.attention.record import ANSWERED, COLUMNS, OPEN, STEPS, Ask
from looproom.durable.sqlite import transactions
from looproom.postgres.database import Database

#: The table, as SQLite creates it (PostgreSQL's is the schema's step 2, the same columns).
SQLITE_TABLE = """
CREATE TABLE IF NOT EXISTS theloop_asks (
    id TEXT PRIMARY KEY, work_item TEXT NOT NULL, kind TEXT NOT NULL,
    channel TEXT NOT NULL, ts TEXT NOT NULL, thread TEXT NOT NULL,
    asked TEXT NOT NULL, basis TEXT NOT NULL DEFAULT '', opened REAL NOT NULL,
    reminded REAL NOT NULL DEFAULT 0, escalated REAL NOT NULL DEFAULT 0,
    claimed_by TEXT NOT NULL DEFAULT '', claimed_at REAL NOT NULL DEFAULT 0,
    outcome TEXT NOT NULL, answered_by TEXT NOT NULL DEFAULT '',
    answered_how TEXT NOT NULL DEFAULT '', closed REAL NOT NULL DEFAULT 0,
    dms TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS theloop_asks_item ON theloop_asks (work_item, opened);
CREATE INDEX IF NOT EXISTS theloop_asks_open ON theloop_asks (outcome, opened);
CREATE TABLE IF NOT EXISTS theloop_ask_steps (
    ask TEXT NOT NULL, member TEXT NOT NULL, step TEXT NOT NULL, at REAL NOT NULL,
    PRIMARY KEY (ask, member, step)
);
"""
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM theloop_asks"
#: Lines a listing returns at most: the answers are read, not scrolled.
LIMIT = 200

#: ``(sql, params) → (rows, rowcount)`` inside one transaction.
Run = Callable[[str, tuple[Any, ...]], tuple[list[tuple[Any, ...]], int]]


class AskStore:
    """The asks on record; every method is one transaction, safe from any thread."""

    def __init__(self, transact: Callable[[], AbstractContextManager[Run]]) -> None:
        self._transact = transact

    def open(self, ask: Ask) -> bool:
        """Recorded; False when this ask was recorded before (its id seen)."""
        row = ask.row()
        names = ", ".join(row)
        marks = ", ".join("?" for _ in row)
        sql = f"INSERT INTO theloop_asks ({names}) VALUES ({marks}) ON CONFLICT (id) DO NOTHING"
        return self._change(sql, tuple(row.values())) == 1

    def close(self, ask_id: str, outcome: str, by: str, how: str, at: float) -> bool:
        """Answered (or moved on) once: False when it was not open."""
        return (
            self._change(
                "UPDATE theloop_asks SET outcome = ?, answered_by = ?, answered_how = ?,"
                " closed = ? WHERE id = ? AND outcome = ?",
                (outcome, by, how, at, ask_id, OPEN),
            )
            == 1
        )

    def reopen(self, ask_id: str) -> bool:
        """An answer the relay gave up on: the ask waits again."""
        return (
            self._change(
                "UPDATE theloop_asks SET outcome = ?, answered_by = '', answered_how = '',"
                " closed = 0 WHERE id = ? AND outcome = ?",
                (OPEN, ask_id, ANSWERED),
            )
            == 1
        )

    def take(self, ask_id: str, step: str, at: float) -> bool:
        """Take ``step`` (reminded, escalated) now: True for the one caller whose update
        took it while the ask was open; everyone else sends nothing."""
        if step not in STEPS:
            raise ValueError(f"unknown step {step!r}")
        sql = f"UPDATE theloop_asks SET {step} = ? WHERE id = ? AND outcome = ? AND {step} = 0"
        return self._change(sql, (at, ask_id, OPEN)) == 1

    def take_for(self, ask_id: str, member: str, step: str, at: float) -> bool:
        """Take ``step`` for ``member`` alone (each member's reminder waits for their own
        hours): True for the one caller who took it while the ask was open."""
        sql = (
            "INSERT INTO theloop_ask_steps (ask, member, step, at)"
            " SELECT ?, ?, ?, ? WHERE EXISTS"
            " (SELECT 1 FROM theloop_asks WHERE id = ? AND outcome = ?)"
            " ON CONFLICT (ask, member, step) DO NOTHING"
        )
        taken = self._change(sql, (ask_id, member, step, at, ask_id, OPEN)) == 1
        if taken and step in STEPS:
            self._change(
                f"UPDATE theloop_asks SET {step} = ? WHERE id = ? AND {step} = 0", (at, ask_id)
            )
        return taken

    def steps_of(self, ask_id: str) -> list[tuple[str, str, float]]:
        """Each (member, step, when) taken for one ask, in the order taken."""
        with self._transact() as run:
            rows, _ = run(
                "SELECT member, step, at FROM theloop_ask_steps WHERE ask = ? ORDER BY at, member",
                (ask_id,),
            )
        return [(str(m), str(s), float(a)) for m, s, a in rows]

    def step_at(self, ask_id: str, member: str, step: str) -> float:
        """When ``member``'s ``step`` of the ask was taken (a snooze: until when); 0: never."""
        with self._transact() as run:
            rows, _ = run(
                "SELECT at FROM theloop_ask_steps WHERE ask = ? AND member = ? AND step = ?",
                (ask_id, member, step),
            )
        return float(rows[0][0]) if rows else 0.0

    def open_at(self, channel: str, ts: str) -> Ask | None:
        """The open ask drawn as the message ``channel``/``ts``."""
        found = self._select(
            " WHERE channel = ? AND ts = ? AND outcome = ? ORDER BY opened", (channel, ts, OPEN)
        )
        return found[0] if found else None

    def by_dm(self, channel: str, ts: str) -> Ask | None:
        """The ask whose direct message is ``channel``/``ts``."""
        where = f"{channel}:{ts}"
        found = self._select(" WHERE dms LIKE ? ORDER BY opened", (f'%"{where}"%',))
        return next((ask for ask in found if where in dict(ask.dms).values()), None)

    def claim(self, ask_id: str, member: str, at: float) -> bool:
        """``member`` is on it: the first claim of an open ask wins."""
        sql = (
            "UPDATE theloop_asks SET claimed_by = ?, claimed_at = ?"
            " WHERE id = ? AND outcome = ? AND claimed_by = ''"
        )
        return self._change(sql, (member, at, ask_id, OPEN)) == 1

    def sent_dm(self, ask_id: str, member: str, where: str) -> None:
        """Remember ``member``'s direct message of this ask (``"D…:ts"``)."""
        with self._transact() as run:
            rows, _ = run("SELECT dms FROM theloop_asks WHERE id = ?", (ask_id,))
            if not rows:
                return
            dms = json.loads(rows[0][0] or "{}")
            dms[member] = where
            run("UPDATE theloop_asks SET dms = ? WHERE id = ?", (json.dumps(dms), ask_id))

    def get(self, ask_id: str) -> Ask | None:
        found = self._select(" WHERE id = ?", (ask_id,))
        return found[0] if found else None

    def open_asks(self, limit: int = LIMIT) -> list[Ask]:
        """Every open ask, oldest first."""
        return self._select(" WHERE outcome = ? ORDER BY opened, id LIMIT ?", (OPEN, limit))

    def open_asks_of(self, work_item: str) -> list[Ask]:
        """A work item's open asks, oldest first."""
        return self._select(
            " WHERE work_item = ? AND outcome = ? ORDER BY opened, id", (work_item, OPEN)
        )

    def of_item(self, work_item: str, limit: int = LIMIT) -> list[Ask]:
        """A work item's asks, oldest first."""
        return self._select(" WHERE work_item = ? ORDER BY opened, id LIMIT ?", (work_item, limit))

    def since(self, at: float, limit: int = LIMIT) -> list[Ask]:
        """The asks opened at ``at`` or later, or still open, oldest first."""
        return self._select(
            " WHERE opened >= ? OR outcome = ? ORDER BY opened, id LIMIT ?", (at, OPEN, limit)
        )

    def waiting_on(self, member: str, limit: int = LIMIT * 5) -> list[Ask]:
        """The open asks that ask ``member``, oldest first (the App Home's list)."""
        found = self._select(
            " WHERE outcome = ? AND asked LIKE ? ORDER BY opened, id LIMIT ?",
            (OPEN, f'%"{member}"%', limit),
        )
        return [ask for ask in found if member in ask.asked]

    def waiting_count(self, member: str) -> int:
        """How many open asks ask ``member`` (however many a listing shows)."""
        with self._transact() as run:
            rows, _ = run(
                "SELECT asked FROM theloop_asks WHERE outcome = ? AND asked LIKE ?",
                (OPEN, f'%"{member}"%'),
            )
        return sum(1 for (asked,) in rows if member in json.loads(asked or "[]"))

    def answered_by(self, member: str, limit: int = 5) -> list[Ask]:
        """The asks ``member`` answered, the latest first."""
        return self._select(
            " WHERE outcome = ? AND answered_by = ? ORDER BY closed DESC, id LIMIT ?",
            (ANSWERED, member, limit),
        )

    def oldest_open(self) -> Ask | None:
        found = self.open_asks(1)
        return found[0] if found else None

    def _select(self, where: str, params: tuple[Any, ...]) -> list[Ask]:
        with self._transact() as run:
            rows, _ = run(_SELECT + where, params)
        return [Ask.from_row(dict(zip(COLUMNS, row, strict=True))) for row in rows]

    def _change(self, sql: str, params: tuple[Any, ...]) -> int:
        with self._transact() as run:
            _, count = run(sql, params)
        return count


def sqlite_asks(path: str | Path) -> AskStore:
    """The asks in the SQLite file ``path`` (the queues' file: one place to back up)."""
    opened = transactions(path, SQLITE_TABLE)

    @contextmanager
    def transact() -> Iterator[Run]:
        with opened() as connection:
            yield _runner(connection.execute)

    return AskStore(transact)


def postgres_asks(database: Database) -> AskStore:
    """The asks in the shared database, every replica's."""

    @contextmanager
    def transact() -> Iterator[Run]:
        with database.transaction() as connection:
            yield _runner(lambda sql, params: connection.execute(sql.replace("?", "%s"), params))

    return AskStore(transact)


def _runner(execute: Callable[[str, tuple[Any, ...]], Any]) -> Run:
    def run(sql: str, params: tuple[Any, ...]) -> tuple[list[tuple[Any, ...]], int]:
        cursor = execute(sql, params)
        rows = cursor.fetchall() if sql.lstrip().upper().startswith("SELECT") else []
        return [tuple(row) for row in rows], cursor.rowcount

    return run
