"""The doctor on the shared mode: a database that answers, one that does not, one too new."""

from __future__ import annotations

import psycopg

from looproom.doctor.findings import OK, PROBLEM
from looproom.doctor.shared_store import shared_database
from looproom.postgres import schema
from looproom.postgres.database import Database
from looproom.settings import Environment
from tests.support.postgres import PostgresServer


def _with_password(url: str) -> str:
    return url.replace("theloop@", "theloop:hunter2-password@")


def test_on_the_embedded_store_there_is_nothing_to_say() -> None:
    assert shared_database(Environment()) is None


def test_a_database_that_answers_is_in_order_and_says_its_schema(database_url: str) -> None:
    env = Environment(database_url=_with_password(database_url))
    fresh = shared_database(env)
    assert fresh is not None and fresh.level == OK and "makes its tables" in fresh.says
    Database(database_url).close()  # a replica started: the tables are made
    made = shared_database(env)
    assert made is not None and made.level == OK and f"schema {schema.VERSION}" in made.says
    assert "hunter2" not in made.says


def test_a_database_that_does_not_answer_is_a_problem_saying_what_it_stops() -> None:
    server = PostgresServer()
    server.start()
    url = _with_password(server.new_database())
    server.stop()
    try:
        found = shared_database(Environment(database_url=url), timeout=1)
    finally:
        server.close()
    assert found is not None and found.level == PROBLEM
    assert f"127.0.0.1:{server.port}" in found.says and "does not answer" in found.says
    assert "503" in found.remedy and "THELOOP_DATABASE_URL" in found.remedy
    assert "hunter2" not in found.says + found.remedy


def test_a_database_a_newer_theloop_migrated_is_a_problem(database_url: str) -> None:
    Database(database_url).close()
    with psycopg.connect(database_url, autocommit=True) as db:
        db.execute("INSERT INTO theloop_schema (version) VALUES (%s)", (schema.VERSION + 1,))
    found = shared_database(Environment(database_url=database_url))
    assert found is not None and found.level == PROBLEM and "newer theloop" in found.says
