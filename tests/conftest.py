"""Fixtures every test directory may use: a real PostgreSQL server for the shared mode, and
a port another program already listens on; and hypothesis's settings for every test (no
deadline per example).

``postgres`` is one server for the whole session — for each test worker (``make test``
runs one a core), on its own port in its own directory — started the first time a test
asks for it (tests that never do never start it); ``database_url`` is a fresh, empty
database on it.
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
# The example database stays hypothesis's own (.hypothesis/ where pytest runs), shared by
# the test workers: a failing example saved on one worker is replayed next run on whichever
# runs that test. Sharing is safe: a test runs on one worker only, each example is a file of
# its own written to a temp file and renamed into place, and an entry hypothesis cannot read
# or decode is skipped and dropped, never a failure (it treats the database as a cache).
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
