"""A real PostgreSQL server for the tests of the shared mode: started, emptied, stopped.

The machine's own binaries run it (``/usr/lib/postgresql/<n>/bin``, else ``pg_config
--bindir``, else ``PATH``; ``.ci/run`` installs the distribution's package when none is
there). ``initdb`` refuses to run as root, so as root the cluster belongs to the
``postgres`` account (or ``nobody``), in a fresh temporary directory that account owns.
Missing binaries fail the test with a message saying what to install — never a skip: a
shared mode that was not tested is not known to work.

Each test gets a database of its own (``CREATE DATABASE``, named for its process), so one
server serves a whole test run, all its workers at once (tests/support/shared_postgres.py);
the server runs with ``fsync=off`` because its durability is not what the tests check (a
SIGKILLed *bot* is; the server is never killed mid-write). :class:`PostgresAt` is what a
test needs of a server that is running; :class:`PostgresServer` runs one.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

from tests.support import ports

SUPERUSER = "theloop"
_NAMES = itertools.count()


class PostgresMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def bin_dir() -> Path:
    """Where ``initdb`` and ``postgres`` are: the newest versioned directory first."""
    versioned = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/postgres"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if versioned:
        return Path(versioned[-1]).parent
    for found in (_pg_config_bindir(), shutil.which("postgres")):
        if found and (Path(found).parent / "initdb").exists():
            return Path(found).parent
        if found and (Path(found) / "initdb").exists():
            return Path(found)
    raise PostgresMissing(
        "the shared-mode tests need a PostgreSQL server (initdb, postgres): install it "
        "(apt-get install -y postgresql) or run .ci/run, which does"
    )


def _pg_config_bindir() -> str:
    try:
        done = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return ""
    return done.stdout.strip()


def _owner() -> pwd.struct_passwd | None:
    """The account the cluster runs as: None when not root (then it is ours)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise PostgresMissing("running as root with neither a postgres nor a nobody account")


class PostgresAt:
    """A running server on this machine's loopback, by its port: a fresh database on it."""

    def __init__(self, port: int) -> None:
        self.port = port

    def url(self, database: str = "postgres", password: str = "") -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{SUPERUSER}{secret}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        name = f"t{os.getpid()}_{next(_NAMES)}"
        with psycopg.connect(self.url(), autocommit=True) as admin:
            admin.execute(f"CREATE DATABASE {name}")  # name is ours: digits and a prefix
        return self.url(name)


class PostgresServer(PostgresAt):
    """One throwaway cluster on a loopback port of its own (:mod:`tests.support.ports`:
    nothing takes it while the server is stopped for an outage), trust authentication."""

    def __init__(self, *, durable: bool = False, place: Path | None = None) -> None:
        """``durable``: fsync as a production server does (the benches); else off.
        ``place``: an empty directory for it (else a fresh temporary one)."""
        super().__init__(ports.reserve())  # its own while it lives, stopped or not
        self._durable = durable
        self._bin = bin_dir()
        self._owner = _owner()
        self.dir = place or Path(tempfile.mkdtemp(prefix="theloop-pg-"))
        self._process: subprocess.Popen[bytes] | None = None
        if self._owner is not None:
            os.chown(self.dir, self._owner.pw_uid, self._owner.pw_gid)
        # --no-sync: initdb's closing flush to disk guards the new cluster against the machine
        # crashing, which no test or bench survives anyway; under load it took 0.5-1 s.
        self._run(
            "initdb",
            *("-D", str(self.dir / "data"), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8"),
            "--no-sync",
        )

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run(
            [str(self._bin / tool), *args],
            capture_output=True,
            text=True,
            user=self._owner.pw_uid if self._owner else None,
            cwd=self.dir,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        """Start (or start again, after :meth:`stop`) and wait until it takes connections."""
        self._process = subprocess.Popen(
            [
                str(self._bin / "postgres"),
                *("-D", str(self.dir / "data"), "-p", str(self.port), "-k", str(self.dir)),
                *("-c", "listen_addresses=127.0.0.1", "-c", "max_connections=400"),  # every worker
                *(() if self._durable else ("-c", "fsync=off", "-c", "full_page_writes=off")),
            ],
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "server.log").open("ab"),
            user=self._owner.pw_uid if self._owner else None,
            cwd=self.dir,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.url(), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    log = (self.dir / "server.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"postgres did not start:\n{log}") from None
                time.sleep(0.05)

    def stop(self) -> None:
        """A fast shutdown (SIGINT): open connections are cut, as in an outage."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(2)
            self._process.wait(60)
        self._process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        ports.release(self.port)
