"""Loopback HTTP servers the network fakes are built on: no test reaches the internet.

:class:`LoopbackHTTP` is the plumbing every fake shares: a threaded server on a loopback
port of its own (:mod:`tests.support.ports`: nothing else takes it while the fake is
down for an outage), started and stopped or used as a context manager,
and :meth:`~LoopbackHTTP.wait_for` a condition re-checked whenever the fake records
something. :class:`LoopbackHandler` answers GET and POST alike, quietly, with JSON or —
for a scripted dropped connection — not at all.

:class:`LoopbackServer` is the JSON fake the GitHub and the-loop fakes are built on. It
records every request, answers through a ``route`` the subclass defines, and plays
scripted faults first: a status (with headers such as ``Retry-After``), a dropped
connection, or ``land_then_drop`` — the request takes effect and the answer is lost,
the case that makes a naive retry post twice.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from tests.support import ports


class LoopbackHandler(BaseHTTPRequestHandler):
    """One request to a fake: GET and POST both go to :meth:`serve`."""

    server: _Server

    def log_message(self, *_: Any) -> None:  # quiet: tests read what the fake recorded
        return

    def do_GET(self) -> None:
        self.serve()

    def do_POST(self) -> None:
        self.serve()

    def serve(self) -> None:
        raise NotImplementedError

    @property
    def fake(self) -> Any:
        """The fake this request reached (a :class:`LoopbackHTTP` subclass)."""
        return self.server.fake

    def raw_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def hang_up(self) -> None:
        """A scripted disconnect: no answer at all."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def send_json(self, status: int, headers: dict[str, str], body: Any) -> None:
        payload = json.dumps(body).encode()
        with contextlib.suppress(OSError):  # the caller may have died waiting (a crash test)
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)


_Fake = TypeVar("_Fake", bound="LoopbackHTTP")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: LoopbackHTTP) -> None:
        self.fake = fake
        super().__init__((fake.host, fake.port), fake.handler)


class LoopbackHTTP:
    """A fake's server; subclasses set :attr:`handler` and record under ``_changed``."""

    handler: type[LoopbackHandler]

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host, self.port = host, 0
        self._changed = threading.Condition()
        self._server: _Server | None = None

    def start(self: _Fake) -> _Fake:
        """Listen on a loopback port of its own (the same one again after a :meth:`stop`)."""
        if not self.port:
            self.port = ports.reserve(self.host)
        server = _Server(self)
        self._server = server
        threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop listening: new connections are refused."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self: _Fake) -> _Fake:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()
        ports.release(self.port)  # for a later fake: this one is done

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def wait_for(self, condition: Callable[[], bool], timeout: float = 10.0) -> bool:
        """Wait until ``condition()`` holds (re-checked on every request), at most ``timeout``.

        For the fake's own waits (an envelope's ack) and the benches; a test waits with
        :func:`tests.support.wait.wait_for`, which fails naming what it waited for."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.2))
        return True


def flat(query: str) -> dict[str, str]:
    """A query string (or a form body) as a dict: the last value of each key wins."""
    return {key: values[-1] for key, values in parse_qs(query).items()}


@dataclass
class Request:
    """One request as the fake saw it, and the status it answered (0: none)."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    status: int = 0
    #: Answered a byte at a time (a ``trickle`` fault) rather than at once.
    trickle: bool = False


@dataclass
class Fault:
    """A scripted answer for the next ``times`` requests whose path contains ``match``."""

    match: str
    status: int = 500
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    #: "status" | "drop" | "land_then_drop" | "trickle" (the route's own answer, its body sent
    #: a byte at a time until :meth:`LoopbackServer.release_trickles`: a peer slow, not dead)
    kind: str = "status"
    body: Any = None  # the scripted answer's JSON body; None: ``{"message": "scripted"}``


class _JSONHandler(LoopbackHandler):
    def serve(self) -> None:
        parts = urlsplit(self.path)
        raw = self.raw_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        request = Request(self.command, parts.path, flat(parts.query), dict(self.headers), body)
        status, headers, answer = self.fake.handle(request)
        if status == 0:
            self.hang_up()
        elif request.trickle:
            self.send_trickled(status, headers, answer)
        else:
            self.send_json(status, headers, answer)

    def send_trickled(self, status: int, headers: dict[str, str], body: Any) -> None:
        """The answer's head at once, its body a byte every 50 ms until let go."""
        payload = json.dumps(body).encode()
        with contextlib.suppress(OSError):
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.flush()
            sent = 0
            while sent < len(payload) and not self.fake.let_go.wait(0.05):
                self.wfile.write(payload[sent : sent + 1])
                self.wfile.flush()
                sent += 1
            self.wfile.write(payload[sent:])


class LoopbackServer(LoopbackHTTP):
    """A JSON fake. Subclasses implement :meth:`route` → ``(status, headers, body)``."""

    handler = _JSONHandler

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        self.requests: list[Request] = []
        self.faults: list[Fault] = []
        #: Called with each request before it is answered, the fake's lock not held: a
        #: test may hold requests there (e.g. until several are in flight at once).
        self.before: Callable[[Request], None] = lambda _request: None
        #: Set: every trickling answer sends the rest of its body at once.
        self.let_go = threading.Event()

    def release_trickles(self) -> None:
        """Let every ``trickle`` answer finish at once."""
        self.let_go.set()

    def start(self) -> LoopbackServer:
        self.let_go.clear()  # trickling again once back
        return super().start()

    def stop(self) -> None:
        self.let_go.set()  # no handler thread left trickling after the fake is down
        super().stop()

    def fail(self, match: str, status: int = 500, **options: Any) -> None:
        with self._changed:
            self.faults.append(Fault(match, status, **options))

    def route(self, request: Request) -> tuple[int, dict[str, str], Any]:
        raise NotImplementedError

    def handle(self, request: Request) -> tuple[int, dict[str, str], Any]:
        self.before(request)
        with self._changed:
            fault = next((f for f in self.faults if f.match in request.path and f.times > 0), None)
            if fault is not None:
                fault.times -= 1
            if fault is None or fault.kind in ("land_then_drop", "trickle"):
                status, headers, body = self.route(request)
            if fault is not None and fault.kind == "trickle":
                request.trickle = True
            elif fault is not None and fault.kind != "status":
                status, headers, body = 0, {}, None
            elif fault is not None:
                status, headers = fault.status, fault.headers
                body = {"message": "scripted"} if fault.body is None else fault.body
            request.status = status
            self.requests.append(request)
            self._changed.notify_all()
        return status, headers, body
