"""The doctor's look at the shared database (``THELOOP_DATABASE_URL``): does it answer?

While it does not, the webhook answers 503 (the-loop's sender retries) and nothing is
delivered or relayed; the finding says so, naming the server without its password.
"""

from __future__ import annotations

import psycopg

from looproom.doctor.findings import OK, PROBLEM, Finding
from looproom.http.origins import redact_url
from looproom.postgres import schema
from looproom.settings import Environment

SUBJECT = "shared database"
#: Seconds to wait for the server before it counts as not answering.
TIMEOUT = 5


def shared_database(env: Environment, timeout: int = TIMEOUT) -> Finding | None:
    """None on the embedded store; else whether the database answers, and its schema."""
    if not env.database_url:
        return None
    shown = redact_url(env.database_url)
    try:
        with psycopg.connect(env.database_url, connect_timeout=timeout) as db:
            made = db.execute("SELECT to_regclass('theloop_schema') IS NOT NULL").fetchone()
            row = (
                db.execute("SELECT max(version) FROM theloop_schema").fetchone()
                if made and made[0]
                else None
            )
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Finding(
            PROBLEM,
            SUBJECT,
            f"{shown} does not answer ({first.replace(env.database_url, shown)})",
            "until it does the webhook answers 503 (the-loop's sender retries) and nothing is "
            "delivered or relayed: check THELOOP_DATABASE_URL and that PostgreSQL runs",
        )
    version = int(row[0]) if row and row[0] is not None else 0
    if version == 0:
        return Finding(OK, SUBJECT, f"{shown} answers; the first replica to start makes its tables")
    if version > schema.VERSION:
        return Finding(
            PROBLEM,
            SUBJECT,
            f"{shown} was migrated by a newer theloop (schema {version}, this one knows "
            f"{schema.VERSION})",
            "run the newer theloop on every replica",
        )
    return Finding(OK, SUBJECT, f"{shown} answers (schema {version})")
