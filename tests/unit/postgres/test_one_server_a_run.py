"""The one PostgreSQL server of a test run with several workers (tests/support/shared_postgres.py).

Workers asking at once get one server, each test a database of its own on it; a worker
that failed to start it does not keep the next from trying; the controller's stop at the
end of the run leaves no server and no folder behind.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest

from tests.support import shared_postgres
from tests.support.postgres import PostgresServer


def test_workers_asking_at_once_share_one_server_which_the_run_s_end_stops() -> None:
    place = shared_postgres.new_place()
    try:
        with ThreadPoolExecutor(3) as workers:  # each asks as a worker would, all at once
            servers = list(workers.map(lambda _: shared_postgres.attach_or_start(place), "abc"))
        assert len({server.port for server in servers}) == 1
        urls = [server.new_database() for server in servers]
        assert len(set(urls)) == 3  # a database each, on the one server
        for url in urls:
            psycopg.connect(url).close()
    finally:
        shared_postgres.stop(place)
    assert not place.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(servers[0].url(), connect_timeout=5).close()


def test_a_run_whose_tests_never_asked_stops_nothing_and_leaves_no_folder() -> None:
    place = shared_postgres.new_place()
    shared_postgres.stop(place)
    assert not place.exists()


def test_a_worker_whose_start_failed_leaves_the_next_one_a_server_to_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    place = shared_postgres.new_place()
    try:
        with monkeypatch.context() as broken:
            broken.setattr(PostgresServer, "start", _refuse)
            with pytest.raises(RuntimeError, match="did not start"):
                shared_postgres.attach_or_start(place)
        server = shared_postgres.attach_or_start(place)  # the next worker to ask
        psycopg.connect(server.new_database()).close()
    finally:
        shared_postgres.stop(place)
    assert not place.exists()


def _refuse(self: PostgresServer) -> None:
    raise RuntimeError("postgres did not start: the port is taken")
