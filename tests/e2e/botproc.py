"""Run a real ``errbot -c config.py`` process for end-to-end tests.

What ``make run`` does, in a temp data dir on a loopback port of its own: one command,
``errbot -c config.py`` (the plugin's own server takes its host and port from the
environment), its output captured to a file; wait until the plugins are active and the port
answers, then stop it gracefully (SIGINT: Errbot deactivates its plugins), kill it (SIGKILL:
the crash case) or restart it on the same data dir and port. The port is reserved
(:mod:`tests.support.ports`): nothing else takes it while the bot starts or restarts.

General on purpose: any backend (``Null``, ``Text``, ``SlackV3`` against a loopback fake),
any extra environment (tokens, API base URLs) and extra ``PYTHONPATH`` entries.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from looproom.durable.queue import DurableQueue
from tests.support import ports
from tests.support.wait import wait_for

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "config.py"
ERRBOT = Path(sys.executable).with_name("errbot")
#: Errbot logs this once every plugin's activation was attempted (errbot/core.py).
ACTIVATION_DONE = "Plugin activation done."
#: The bot's own metrics route, and its gauge of the events accepted but not delivered yet.
METRICS_PATH = "/theloop/metrics"
_INBOX_DEPTH = 'theloop_queue_depth{queue="inbox"'  # then "}", or more labels (a replica's)
_CARDS_OWED = "theloop_cards_owed"  # then " ", or "{" and a replica's label
#: Variables of an operator's shell that would leak into a test bot's configuration.
_SCRUBBED_PREFIXES = ("THELOOP_", "THE_LOOP_")
_SCRUBBED = ("GH_TOKEN", "GITHUB_TOKEN")


class BotProcess:
    """One errbot process with its data dir, port, environment and log file."""

    def __init__(
        self,
        data_dir: Path,
        *,
        backend: str = "Null",
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        host: str = "127.0.0.1",
        extra_pythonpath: Sequence[str | Path] = (),
        console: bool = False,
        config: Path = CONFIG,
    ) -> None:
        """``console``: keep the process's standard input open, for :meth:`type` (the Text
        backend's console reads it; closed, the console ends at once). ``config``: the
        Errbot configuration file to run (the bundle's own by default); the process runs in
        its folder."""
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.backend = backend
        self.host = host
        self.extra_env = dict(env or {})
        # A test that must know the address before the start (a URL the bot hands out
        # naming it) names the port in the environment.
        named = self.extra_env.get("THELOOP_HTTP_PORT", "")
        self.port = port or (int(named) if named.isdigit() else 0)
        # Else one reserved for every start: nothing takes it between starts.
        self._reserved = not self.port
        self.port = self.port or ports.reserve(host)
        self.extra_pythonpath = [str(p) for p in extra_pythonpath]
        self.console = console
        self.config = Path(config)
        self.log_path = self.data_dir / "process.log"
        #: Errbot's own log file (config.py puts it in the data directory).
        self.errbot_log = self.data_dir / "errbot.log"
        self._errbot_log_offset = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    def environment(self) -> dict[str, str]:
        """The process environment: this machine's, minus theloop's, plus the test's."""
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(_SCRUBBED_PREFIXES) and name not in _SCRUBBED
        }
        env.update(
            THELOOP_BACKEND=self.backend,
            THELOOP_DATA_DIR=str(self.data_dir),
            THELOOP_HTTP_HOST=self.host,
            THELOOP_HTTP_PORT=str(self.port),
            # Never the checkout's own theloop.yaml: the test says what it wants.
            THELOOP_CONFIG=str(self.data_dir / "theloop.yaml"),
            PYTHONUNBUFFERED="1",
        )
        if self.extra_pythonpath:
            paths = [*self.extra_pythonpath, env.get("PYTHONPATH", "")]
            env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        env.update(self.extra_env)
        return env

    def url(self, path: str = "/") -> str:
        return f"http://{self.host}:{self.port}{path}"

    @property
    def queue_file(self) -> Path:
        """The plugin's durable queues (the inbox and the relay): one SQLite file."""
        return self.data_dir / "theloop" / "queues.sqlite3"

    @contextmanager
    def inbox(self) -> Iterator[DurableQueue]:
        """The bot's inbox, through the queue's own API. Only while the bot is stopped:
        opening the queue takes any item in flight for one a dead process left behind."""
        queue = DurableQueue(self.queue_file, "inbox")
        try:
            yield queue
        finally:
            queue.close()

    def start(self, *, wait: bool = True, timeout: float = 60.0) -> BotProcess:
        """Start, and (by default) wait until ready."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError("already running")
        settings = self.data_dir / "theloop.yaml"
        if not settings.exists():  # THELOOP_CONFIG names it, so it must exist: no settings
            settings.write_text("", encoding="utf-8")
        self._errbot_log_offset = self.errbot_log.stat().st_size if self.errbot_log.exists() else 0
        with self.log_path.open("ab") as log:
            self._log_offset = log.tell()
            self.process = subprocess.Popen(
                [str(ERRBOT), "-c", str(self.config)],
                cwd=self.config.parent,
                env=self.environment(),
                stdin=subprocess.PIPE if self.console else subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a signal to the test runner is not one to the bot
            )
        if wait:
            try:
                self.wait_ready(timeout)
            except BaseException:
                self.kill()  # never leave a half-started bot behind
                raise
        return self

    def log_text(self, *, since_start: bool = True) -> str:
        """What the process printed (this run only, by default)."""
        data = self.log_path.read_bytes()
        offset = self._log_offset if since_start else 0
        return data[offset:].decode("utf-8", errors="replace")

    def type(self, line: str) -> None:
        """A person types ``line`` at the console (``console=True``)."""
        if self.process is None or self.process.stdin is None:
            raise RuntimeError("no console: start the process with console=True")
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Until Errbot activated its plugins and theloop's server accepts connections."""

        def ready() -> bool:
            self._check_alive()
            return ACTIVATION_DONE in self._errbot_said() and self._port_open()

        wait_for(ready, timeout, lambda: f"errbot to be ready; it said:\n{self.log_text()[-4000:]}")

    def metrics(self) -> str:
        """``GET /theloop/metrics``: the bot's metrics, as Prometheus reads them."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            connection.request("GET", METRICS_PATH)
            response = connection.getresponse()
            status, body = response.status, response.read().decode()
        finally:
            connection.close()
        assert status == 200, f"{METRICS_PATH} answered {status}: {body[:500]}"
        return body

    def undelivered(self) -> int:
        """How many events the bot accepted and has not delivered yet (its inbox's depth,
        as ``GET /theloop/metrics`` reports it)."""
        body = self.metrics()
        for line in body.splitlines():
            if line.startswith(_INBOX_DEPTH) and line[len(_INBOX_DEPTH)] in "},":
                return int(float(line.split()[-1]))
        raise AssertionError(f"no {_INBOX_DEPTH} in {METRICS_PATH}:\n{body[:2000]}")

    def owed_cards(self) -> int:
        """How many parent cards the bot still owes a redraw (``theloop_cards_owed``; 0 on
        a backend without cards)."""
        for line in self.metrics().splitlines():
            if line.startswith(_CARDS_OWED) and line[len(_CARDS_OWED)] in " {":
                return int(float(line.split()[-1]))
        return 0

    def wait_delivered(self, timeout: float = 60.0) -> None:
        """Until every event the bot accepted is delivered. A message is in the room as soon
        as Slack stores it, but the bot learns it posted it — the question a reply answers,
        the thread a reply is in — only from Slack's answer, a moment later. A person takes
        far longer than that to answer; a test answering the bot waits for this first."""
        wait_for(
            lambda: self.undelivered() == 0,
            timeout,
            lambda: f"every event to be delivered; {self.undelivered()} are not",
        )

    def _errbot_said(self) -> str:
        """Errbot's log lines of this run: its output, or on the Text backend (which stops
        logging to the console once the console is up) its log file too."""
        said = self.log_text()
        if self.backend == "Text" and self.errbot_log.exists():
            data = self.errbot_log.read_bytes()[self._errbot_log_offset :]
            said += data.decode("utf-8", errors="replace")
        return said

    def _port_open(self) -> bool:
        try:
            with socket.create_connection((self.host, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def _check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            code = None if self.process is None else self.process.returncode
            raise RuntimeError(f"errbot exited ({code}):\n{self.log_text()[-4000:]}")

    def stop(self, timeout: float = 20.0) -> int | None:
        """Graceful: SIGINT (Errbot deactivates its plugins), SIGKILL if it hangs."""
        return self._signal(signal.SIGINT, timeout)

    def kill(self) -> int | None:
        """The crash: SIGKILL, no cleanup of any kind."""
        return self._signal(signal.SIGKILL, 10.0)

    def _signal(self, sig: int, timeout: float) -> int | None:
        process = self.process
        if process is None or process.poll() is not None:
            return None if process is None else process.returncode
        os.killpg(process.pid, sig)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            return process.wait(10.0)

    def restart(self, *, crash: bool = False, timeout: float = 60.0) -> BotProcess:
        """Stop (or kill, ``crash=True``) and start again on the same data dir and port."""
        self.kill() if crash else self.stop()
        return self.start(timeout=timeout)

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if self._reserved:
            ports.release(self.port)
