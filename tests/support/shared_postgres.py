"""One PostgreSQL server for every worker of a test run (``make test`` runs one a core).

The run's controller names a folder for it (:func:`new_place`); the first worker whose test
asks for a database starts the server there, under a lock, and says its port in the folder;
the other workers find the port and use the same server. Each test still gets a database of
its own, so the workers share nothing but the server. The server outlives the worker that
started it: the controller stops it when the run ends (:func:`stop`).

One server a run, not one a worker, because it measured faster: two workers running the 76
tests of the five files that use PostgreSQL finished first on one server in each of eight
alternated pairs of runs (on a machine loaded by other work), in 37 s on average against 46 s
with a server each.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

from tests.support.postgres import PostgresAt, PostgresServer

#: The key under which the controller hands each worker the folder.
KEY = "theloop_postgres"
_LOCK, _PORT = "lock", "port"


def new_place() -> Path:
    """A fresh folder for the run's server (the controller's: started by no one yet)."""
    place = Path(tempfile.mkdtemp(prefix="theloop-pg-run-"))
    place.chmod(0o755)  # the server's own account, when not ours, reaches its cluster below
    return place


def attach_or_start(place: Path) -> PostgresAt:
    """The run's server: started now by the first worker to ask, else the one running."""
    with (place / _LOCK).open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # until the first asker has it up and says its port
        said = place / _PORT
        if said.exists():
            return PostgresAt(int(said.read_text()))
        # A folder of its own: a worker whose start failed leaves the next one a clean slate.
        server = PostgresServer(place=Path(tempfile.mkdtemp(prefix="cluster-", dir=place)))
        server.start()
        said.write_text(str(server.port))
        return server


def stop(place: Path, timeout: float = 60.0) -> None:
    """Stop the run's server if a worker started it (a fast shutdown), then remove it all."""
    pid_files = list(place.glob("cluster-*/data/postmaster.pid"))
    for pid_file in pid_files:
        with contextlib.suppress(OSError, ValueError, IndexError):  # already gone
            os.kill(int(pid_file.read_text().split()[0]), signal.SIGINT)
    deadline = time.monotonic() + timeout
    while any(f.exists() for f in pid_files) and time.monotonic() < deadline:
        time.sleep(0.05)  # a server removes its pid file last thing when it stops
    shutil.rmtree(place, ignore_errors=True)
