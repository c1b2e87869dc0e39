"""Fixtures every test directory may use: a real PostgreSQL server for the shared mode.

``postgres`` is one server for the whole session, started the first time a test asks for
it (tests that never do never start it); ``database_url`` is a fresh, empty database on it.
No PostgreSQL binaries fails the asking test with what to install (tests/support/postgres.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres import PostgresMissing, PostgresServer


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    try:
        server = PostgresServer()
    except PostgresMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def database_url(postgres: PostgresServer) -> str:
    return postgres.new_database()
