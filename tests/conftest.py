"""Fixtures every test directory may use: a real PostgreSQL server for the shared mode, and
a port another program already listens on; and hypothesis's settings for every test (no
deadline per example).

``postgres`` is one server for the whole session, started the first time a test asks for
it (tests that never do never start it); ``database_url`` is a fresh, empty database on it.
No PostgreSQL binaries fails the asking test with what to install (tests/support/postgres.py).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from hypothesis import settings

from tests.support.postgres import PostgresMissing, PostgresServer

# No generated example has a deadline, in every test directory: hypothesis fails a test one
# of whose examples once took over 200 ms, and a loaded machine must not fail a correct one.
settings.register_profile("theloop", deadline=None)
settings.load_profile("theloop")


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


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on, for as long as the test runs."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]
