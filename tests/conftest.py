"""Fixtures every test directory may use: a real PostgreSQL server for the shared mode, and
a port another program already listens on; and hypothesis's settings for every test (no
deadline per example).

``postgres`` is one server for the whole run, started the first time a test asks for it
(tests that never do never start it): with pytest-xdist's workers (``make test`` runs one a
core) the same server for all of them (tests/support/shared_postgres.py), stopped by the
controller when the run ends. ``database_url`` is a fresh, empty database on it. No
PostgreSQL binaries fails the asking test with what to install (tests/support/postgres.py).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.support import shared_postgres
from tests.support.postgres import PostgresAt, PostgresMissing, PostgresServer

_RUN_POSTGRES = pytest.StashKey[Path]()

# No generated example has a deadline, in every test directory: hypothesis fails a test one
# of whose examples once took over 200 ms, and a loaded machine must not fail a correct one.
# The example database stays hypothesis's own (.hypothesis/ where pytest runs), shared by
# the test workers: a failing example saved on one worker is replayed next run on whichever
# runs that test. Sharing is safe: a test runs on one worker only, each example is a file of
# its own written to a temp file and renamed into place, and an entry hypothesis cannot read
# or decode is skipped and dropped, never a failure (it treats the database as a cache).
settings.register_profile("theloop", deadline=None)
settings.load_profile("theloop")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller, for each worker it starts: where the run's server lives."""
    if _RUN_POSTGRES not in node.config.stash:
        node.config.stash[_RUN_POSTGRES] = shared_postgres.new_place()
    node.workerinput[shared_postgres.KEY] = str(node.config.stash[_RUN_POSTGRES])


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's default (``-n`` alone) with one worker for a module's shared setup."""
    if config.getvalue("dist") != "load":
        return None  # a --dist the caller chose
    from tests.support.scheduling import OneSetupOneWorker  # only where xdist is

    return OneSetupOneWorker(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first, so none is left to run alone at the end of a run."""
    from tests.support.scheduling import longest_first

    longest_first(items)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _RUN_POSTGRES in config.stash:  # the controller, once every worker is done
        shared_postgres.stop(config.stash[_RUN_POSTGRES])


@pytest.fixture(scope="session")
def postgres(request: pytest.FixtureRequest) -> Iterator[PostgresAt]:
    place = getattr(request.config, "workerinput", {}).get(shared_postgres.KEY)
    try:
        if place:  # a worker: the run's one server, which the controller stops
            yield shared_postgres.attach_or_start(Path(place))
            return
        server = PostgresServer()
    except PostgresMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        server.start()
        yield server
    finally:
        server.close()


@pytest.fixture
def database_url(postgres: PostgresAt) -> str:
    return postgres.new_database()


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on, for as long as the test runs."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]
