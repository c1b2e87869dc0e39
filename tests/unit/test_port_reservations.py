"""The test servers' ports (tests/support/ports.py): what lets the suite run on every core.

A port a test reserved stays its own while the test process lives, even while nothing
listens on it (a bot between two starts, a fake down for an outage): another test worker
never gets it, and neither does the OS's ``bind(0)``, since it lies outside that range.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ports

ROOT = Path(__file__).resolve().parents[2]

# Another test process: it reserves from the ports it is given and says which it got.
_OTHER_WORKER = """
import sys
from tests.support import ports
ports._candidates = lambda: [int(p) for p in sys.argv[1:]]
try:
    print(ports.reserve())
except ports.NoFreePort:
    print("none")
"""


def _other_worker_reserves(*among: int) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _OTHER_WORKER, *map(str, among)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has given no port back yet (earlier tests' fakes have)."""
    monkeypatch.setattr(ports, "_given_back", [])


def test_a_reserved_port_is_outside_the_range_bind_zero_draws_from_and_free() -> None:
    low, high = ports.ephemeral_range()
    port = ports.reserve()
    try:
        assert ports.LOWEST <= port <= 65535 and not low <= port <= high
        with socket.socket() as server:
            server.bind(("127.0.0.1", port))  # nothing listens there: ours to bind
    finally:
        ports.release(port)


def test_another_test_process_never_gets_a_port_this_one_holds_even_unbound() -> None:
    held = ports.reserve()  # reserved, nothing bound: as a bot between two starts
    try:
        assert _other_worker_reserves(held) == "none"
    finally:
        ports.release(held)
    assert _other_worker_reserves(held) == "none"  # given back to this process only


def test_the_other_process_takes_a_port_no_one_holds_instead() -> None:
    held = ports.reserve()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    try:
        assert _other_worker_reserves(held, free) == str(free)
    finally:
        ports.release(held)


def test_a_port_something_listens_on_is_never_handed_out(
    monkeypatch: pytest.MonkeyPatch, taken_port: int, given_back: None
) -> None:
    monkeypatch.setattr(ports, "_candidates", lambda: [taken_port])
    with pytest.raises(ports.NoFreePort, match="no free port"):
        ports.reserve()


def test_a_port_given_back_is_this_process_s_again_once_free(given_back: None) -> None:
    port = ports.reserve()
    with socket.socket() as squatter:  # a server still on it after its test let it go
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        ports.release(port)
        other = ports.reserve()
        assert other != port
        ports.release(other)
    assert ports.reserve() == port  # the first given back, free again
    ports.release(port)
