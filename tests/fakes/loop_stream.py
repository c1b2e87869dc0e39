"""the-loop's REAL control plane on loopback, and a TCP proxy a test can cut.

Not a fake: ``LoopAPI`` serves the-loop's own FastAPI app (``the_loop.api.app.create_app``)
with uvicorn over a state root in a temp dir, and appends to its event log with the-loop's
own ``EventLog`` writer, exactly as ``the-loop ask`` does; ``GET /api/v1/stream`` is
the-loop's code. ``Proxy`` sits between a follower and that app: ``cut`` drops every open
connection and clearing ``accepting`` refuses new ones — a dropped link, as the bot sees it.
Shared by the contract test (the follower in-process) and the e2e test (the follower in a
real errbot process).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from pathlib import Path
from typing import Any

import uvicorn
import yaml
from the_loop import eventlog
from the_loop.api.app import create_app
from the_loop.cli_config import load_cli_config
from the_loop.core.collaborators import manage_collaborators
from the_loop.eventlog import EventLog
from the_loop.state import layout_from_config

from tests.support.wait import wait_for

WORK_ITEM = "github:acme/api#7"
WAIT = 20.0  # a bound on waiting for a condition, never an expectation of speed


class LoopAPI:
    """the-loop's control plane on loopback, with its event log under a temp state root."""

    def __init__(self, root: Path) -> None:
        config_path = root / "cli-config.yaml"
        config = {
            "state": {"root": str(root / "state")},
            "service": {"hostIngresses": False, "mcp": {"enabled": False}},
        }
        root.mkdir(parents=True, exist_ok=True)
        config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
        cli_config = self.cli_config = load_cli_config(config_path)
        self.log_path = Path(layout_from_config(cli_config).event_log)
        self.log = EventLog(self.log_path, source="ask")
        app = create_app(cli_config, config_path=config_path)
        settings = uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", timeout_graceful_shutdown=2
        )
        self.server = uvicorn.Server(settings)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> int:
        """Serve; the port it listens on.

        As ``the-loop serve`` does, the service's own records (``stream.subscribed`` with
        the cursor a client sent, ``stream.disconnected``) go to the same event log.
        """
        eventlog.configure("service", path=self.log_path)
        self.thread.start()
        wait_for(lambda: self.server.started, WAIT, "the-loop's API to start")
        return int(self.server.servers[0].sockets[0].getsockname()[1])

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)
        eventlog.reset()  # the process-wide log: the next test configures its own

    def ask(self, question: str, work_item: str = WORK_ITEM) -> None:
        """The record ``the-loop ask`` writes (``core.sessions.ask_session``)."""
        self.log.emit(
            "session.awaiting_input",
            work_item=work_item,
            question=question,
            actor="dev",
            comment_url=f"https://github.com/acme/api/issues/7#issuecomment-{len(question)}",
            comment_posted=True,
            channels_posted=0,
        )

    def collaborator(self, verb: str, member: str, work_item: str = WORK_ITEM) -> None:
        """``the-loop add-collaborator|remove-collaborator --slack <member>``: the-loop's own
        code writes its roster and logs the grant (no ticket comment: no GitHub here)."""
        manage_collaborators(
            work_item, verb, [], comment=False, config=self.cli_config, slack=[member]
        )

    def noise(self) -> None:
        """A record the room does not show."""
        self.log.emit("poll.cycle", items=3)

    def records(self, event: str) -> list[dict[str, Any]]:
        """Every record of type ``event`` in the log so far, oldest first."""
        if not self.log.path.exists():
            return []
        lines = self.log.path.read_text(encoding="utf-8").splitlines()
        return [r for r in map(json.loads, filter(None, lines)) if r.get("event") == event]


class Proxy:
    """A loopback TCP proxy: ``cut`` drops open connections; clear ``accepting`` to refuse."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.05)
        self.port = self.listener.getsockname()[1]
        self.accepting = threading.Event()
        self.accepting.set()
        #: Connections passed through to the upstream so far.
        self.connections = 0
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if not self.accepting.is_set():
                client.close()
                continue
            server = socket.create_connection(("127.0.0.1", self.upstream))
            with self._lock:
                self._sockets += [client, server]
                self.connections += 1
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _shutdown(sock)
            sock.close()

    def close(self) -> None:
        self._closed.set()
        self._thread.join(5)
        self.listener.close()
        self.cut()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
