"""The shared database's tables, created and migrated by the bot itself at start.

Each step in :data:`STEPS` moves the schema one version up; the version reached is kept in
``theloop_schema``. A database a newer bot has migrated past what this code knows is refused
(:class:`SchemaTooNew`): an older replica must not write rows it does not understand. The
steps run under one advisory lock, so replicas starting together migrate once.
"""

from __future__ import annotations

import psycopg

#: Held while migrating: the number is arbitrary, only constant (shared with no one else).
MIGRATION_LOCK = 7_311_402_023

STEPS: tuple[str, ...] = (
    # 1: the durable queues, the plugin's key-value state, the replicas' heartbeats.
    """
    CREATE TABLE theloop_items (
        seq             BIGSERIAL PRIMARY KEY,
        queue           TEXT             NOT NULL,
        key             TEXT             NOT NULL,
        payload         TEXT             NOT NULL,
        state           TEXT             NOT NULL,
        attempts        INTEGER          NOT NULL DEFAULT 0,
        maybe_delivered BOOLEAN          NOT NULL DEFAULT FALSE,
        due             DOUBLE PRECISION NOT NULL,
        created         DOUBLE PRECISION NOT NULL,
        updated         DOUBLE PRECISION NOT NULL,
        last_error      TEXT             NOT NULL DEFAULT '',
        grp             TEXT             NOT NULL DEFAULT '',
        first_try       DOUBLE PRECISION NOT NULL DEFAULT 0,
        owner           TEXT             NOT NULL DEFAULT '',
        lease_until     DOUBLE PRECISION NOT NULL DEFAULT 0,
        UNIQUE (queue, key)
    );
    CREATE INDEX theloop_items_due ON theloop_items (queue, state, due, seq);
    CREATE INDEX theloop_items_group_open ON theloop_items (queue, grp, state, seq);
    CREATE INDEX theloop_items_owner ON theloop_items (owner) WHERE state = 'inflight';
    CREATE TABLE theloop_state (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE theloop_replicas (
        id      TEXT PRIMARY KEY,
        name    TEXT             NOT NULL,
        started DOUBLE PRECISION NOT NULL,
        seen    DOUBLE PRECISION NOT NULL
    );
    """,
    # 2: the asks on record (looproom.attention.store): one row per message that asked.
    """
    CREATE TABLE theloop_asks (
        id           TEXT PRIMARY KEY,
        work_item    TEXT             NOT NULL,
        kind         TEXT             NOT NULL,
        channel      TEXT             NOT NULL,
        ts           TEXT             NOT NULL,
        thread       TEXT             NOT NULL,
        asked        TEXT             NOT NULL,
        basis        TEXT             NOT NULL DEFAULT '',
        opened       DOUBLE PRECISION NOT NULL,
        reminded     DOUBLE PRECISION NOT NULL DEFAULT 0,
        escalated    DOUBLE PRECISION NOT NULL DEFAULT 0,
        claimed_by   TEXT             NOT NULL DEFAULT '',
        claimed_at   DOUBLE PRECISION NOT NULL DEFAULT 0,
        outcome      TEXT             NOT NULL,
        answered_by  TEXT             NOT NULL DEFAULT '',
        answered_how TEXT             NOT NULL DEFAULT '',
        closed       DOUBLE PRECISION NOT NULL DEFAULT 0,
        dms          TEXT             NOT NULL DEFAULT '{}'
    );
    CREATE INDEX theloop_asks_item ON theloop_asks (work_item, opened);
    CREATE INDEX theloop_asks_open ON theloop_asks (outcome, opened);
    """,
    # 3: Slack's budgets, kept by every replica together (looproom.postgres.slack_budgets).
    """
    CREATE TABLE theloop_slack_budgets (
        key  TEXT PRIMARY KEY,
        kept TEXT NOT NULL
    );
    """,
    # 4: each step an ask took for one member (reminded), once: its key is the guard.
    """
    CREATE TABLE theloop_ask_steps (
        ask    TEXT             NOT NULL,
        member TEXT             NOT NULL,
        step   TEXT             NOT NULL,
        at     DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (ask, member, step)
    );
    """,
    # 5: the room's records for the-loop's event log (looproom.loop_log.book), in order.
    """
    CREATE TABLE theloop_room_records (
        seq       BIGSERIAL PRIMARY KEY,
        id        TEXT NOT NULL UNIQUE,
        work_item TEXT NOT NULL DEFAULT '',
        record    TEXT NOT NULL
    );
    """,
)
VERSION = len(STEPS)


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer theloop than this one."""


def migrate(connection: psycopg.Connection) -> int:
    """Bring the schema up to :data:`VERSION`; the version found before (0: a new database)."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        connection.execute("CREATE TABLE IF NOT EXISTS theloop_schema (version INTEGER NOT NULL)")
        row = connection.execute("SELECT max(version) FROM theloop_schema").fetchone()
        found = int(row[0]) if row and row[0] is not None else 0
        if found > VERSION:
            raise SchemaTooNew(
                f"the database's schema is version {found}, newer than this theloop knows "
                f"({VERSION}): run the newer theloop, or a database of this version"
            )
        for version in range(found + 1, VERSION + 1):
            connection.execute(STEPS[version - 1])
            connection.execute("INSERT INTO theloop_schema (version) VALUES (%s)", (version,))
    return found
