"""The bot's HTTP server: waitress in a thread of its own, bounded, and honest about listening.

:class:`HttpServer` binds when it starts, so a taken port or a host that does not resolve is
known at once and kept as :class:`Listening` (the address, or the error), which
``!theloop status`` shows. Its :class:`Limits` are the ones ``docs/security.md`` lists.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from waitress import wasyncore
from waitress.adjustments import Adjustments
from waitress.task import ThreadedTaskDispatcher

from looproom.http.rules import MAX_BODY_BYTES
from looproom.server.waitress_rules import StrictServer

log = logging.getLogger(__name__)

#: A WSGI application (PEP 3333).
App = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclass(frozen=True)
class Limits:
    """How much any one client may hold of the server, and for how long."""

    #: Worker threads running the application; the rest of waitress is one event loop.
    threads: int = 4
    #: Open connections at most; past it the server stops accepting until one closes.
    connection_limit: int = 2000
    #: Connections the kernel queues before the server accepts them.
    backlog: int = 2048
    #: Seconds a connection may stay silent (no byte received) before it is closed.
    channel_timeout: float = 30.0
    #: Seconds a request may take to arrive whole, however slowly it trickles.
    request_deadline: float = 10.0
    #: Bytes of request line and headers at most.
    max_header_bytes: int = 16 * 1024
    #: Bytes of body at most, refused from its declared length before it is read.
    max_body_bytes: int = MAX_BODY_BYTES

    def adjustments(self, host: str, port: int) -> Adjustments:
        return Adjustments(
            host=host,
            port=port,
            threads=self.threads,
            connection_limit=self.connection_limit,
            backlog=self.backlog,
            channel_timeout=int(self.channel_timeout),
            cleanup_interval=1,
            # waitress refuses a body whose length is at or over this: one past ours.
            max_request_body_size=self.max_body_bytes + 1,
            # The same for the request line and headers (their closing blank line counted).
            max_request_header_size=self.max_header_bytes + 1,
            expose_tracebacks=False,
            # poll, not select: select cannot watch past 1 024 descriptors.
            asyncore_use_poll=True,
            ident="theloop",
        )


@dataclass(frozen=True)
class Listening:
    """Where the server listens, or why it does not."""

    address: str = ""
    error: str = ""

    def describe(self) -> str:
        if self.address:
            return f"listening on {self.address}"
        return f"NOT LISTENING: {self.error or 'not started'}"


class HttpServer:
    """One waitress server for ``app``: :meth:`start` binds and serves, :meth:`stop` ends it."""

    def __init__(self, app: App, limits: Limits | None = None) -> None:
        self._app = app
        self.limits = limits or Limits()
        self.listening = Listening()
        self._map: dict[int, Any] = {}
        self._servers: list[StrictServer] = []
        self._dispatcher: ThreadedTaskDispatcher | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The port bound (the one the OS picked for port 0); 0 when not listening."""
        return self._servers[0].effective_port if self._servers else 0

    def start(self, host: str, port: int) -> Listening:
        """Bind ``host:port`` and serve in a daemon thread; the outcome, never a raise."""
        try:
            self._bind(self.limits.adjustments(host, port))
        except (OSError, ValueError) as exc:
            self._close_sockets()
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            self.listening = Listening(error=f"cannot listen on {host}:{port}: {reason}")
            return self.listening
        addresses = [f"{s.effective_host}:{s.effective_port}" for s in self._servers]
        self.listening = Listening(address=", ".join(addresses))
        self._thread = threading.Thread(target=self._run, name="theloop-http", daemon=True)
        self._thread.start()
        return self.listening

    def _bind(self, adj: Adjustments) -> None:
        self._dispatcher = ThreadedTaskDispatcher()
        self._dispatcher.set_thread_count(adj.threads)
        for sockinfo in adj.listen:
            server = StrictServer(
                self._app, self._map, dispatcher=self._dispatcher, adj=adj, sockinfo=sockinfo
            )
            server.request_deadline = self.limits.request_deadline
            self._servers.append(server)

    def _run(self) -> None:
        while not self._stopping.is_set():
            wasyncore.loop(timeout=1.0, map=self._map, use_poll=True, count=1)
        wasyncore.close_all(self._map)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting, close every connection, and let running requests finish; again:
        nothing."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._thread is not None:
            with contextlib.suppress(OSError):  # the loop may have closed it already
                self._servers[0].pull_trigger()  # wakes the loop at once
            self._thread.join(timeout)
        else:
            self._close_sockets()
        if self._dispatcher is not None:
            self._dispatcher.shutdown(timeout=timeout)
        self.listening = Listening(error="stopped")

    def _close_sockets(self) -> None:
        wasyncore.close_all(self._map)
        if self._dispatcher is not None:
            self._dispatcher.shutdown()
        self._servers, self._dispatcher = [], None
