"""Ports for the tests' servers that stay theirs from the moment they are chosen.

A server a test starts and stops again on the same port (a bot restarted, a fake taken
down for an outage, PostgreSQL stopped and started) leaves its port unbound in between, and
so does a port chosen before the process that listens on it has started. A port the OS
picked (``bind(0)``) is one it hands out again to whatever asks next — another test
worker's ``bind(0)``, or the source port of any outgoing connection — so a test running
beside another one could find its port taken.

:func:`reserve` picks outside the OS's ephemeral range, where neither ever lands, and
locks the port for this process in a file every test process of this account shares, so
no other worker (or another checkout's suite) picks it while this process lives; the lock
goes with the process, however it ends. :func:`release` gives a port back to this process
for a later test.
"""

from __future__ import annotations

import fcntl
import functools
import os
import random
import socket
import tempfile
import threading
from pathlib import Path

#: The lowest port handed out: below it live the well-known services.
LOWEST = 10000
#: The ephemeral range where the OS says nothing (IANA's, which macOS and Windows use).
_DEFAULT_EPHEMERAL = (49152, 65535)
_ATTEMPTS = 2000

_lock = threading.Lock()
# A generator of its own: hypothesis seeds the global one alike in every process during its
# tests, and two workers drawing the same ports would only meet each other's locks.
_draw = random.Random()
_lock_file: int | None = None
_held: set[int] = set()  # locked by this process: given out, or given back
_given_back: list[int] = []


class NoFreePort(RuntimeError):
    """No port outside the ephemeral range was free to reserve."""


def ephemeral_range() -> tuple[int, int]:
    """The ports the OS hands out for ``bind(0)`` and outgoing connections."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return _DEFAULT_EPHEMERAL


@functools.cache
def _candidates() -> list[int]:
    low, high = ephemeral_range()
    return [p for p in range(LOWEST, 65536) if not low <= p <= high]


def _locks() -> int:
    global _lock_file
    if _lock_file is None:
        path = Path(tempfile.gettempdir()) / f"theloop-test-ports-{os.getuid()}.lock"
        _lock_file = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    return _lock_file


def _lock_port(port: int) -> bool:
    """Lock byte ``port`` of the shared file: False when another process holds it."""
    try:
        fcntl.lockf(_locks(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, port, os.SEEK_SET)
    except OSError:
        return False
    return True


def _bindable(port: int, host: str) -> bool:
    """Nothing is bound to ``port`` now (not even a connection lingering in TIME_WAIT)."""
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def reserve(host: str = "127.0.0.1") -> int:
    """A port nothing listens on, which no other test process and no ``bind(0)`` will
    take while this process lives (or until :func:`release`)."""
    with _lock:
        for port in list(_given_back):
            if _bindable(port, host):
                _given_back.remove(port)
                return port
        candidates = _candidates()
        for _ in range(_ATTEMPTS):
            port = _draw.choice(candidates)
            if port in _held or not _lock_port(port):
                continue
            if _bindable(port, host):
                _held.add(port)
                return port
            fcntl.lockf(_locks(), fcntl.LOCK_UN, 1, port, os.SEEK_SET)
    raise NoFreePort(f"no free port from {LOWEST} outside the ephemeral range {ephemeral_range()}")


def release(port: int) -> None:
    """``port`` is no longer used by whoever reserved it: this process may hand it out
    again. Kept locked, so no other process takes it meanwhile."""
    with _lock:
        if port in _held and port not in _given_back:
            _given_back.append(port)
