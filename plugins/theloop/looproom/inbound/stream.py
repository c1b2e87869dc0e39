"""Follow the-loop's event stream (``GET /api/v1/stream``) into the bot's inbox.

The asks (``session.awaiting_input``) and a few other records never pass through a graph
hook, so the hook cannot send them; the-loop's control plane serves its event log as
Server-Sent Events instead. This module is that second ingress: :class:`StreamFollower`, a
thread that connects with ``Last-Event-ID`` from the cursor it is given, reads the frames
(:mod:`looproom.inbound.sse`), maps each record (:mod:`looproom.inbound.loop_records`) and
hands each mapped event to ``accept`` (the durable inbox ``put``) *before* advancing the
cursor, reconnects with backoff, and reports itself for ``!theloop status``.

Its address and each connection's headers are the-loop client's
(:class:`~looproom.clients.the_loop.EventStream`); the connection is the standard
library's ``http.client``, read a chunk at a time as frames arrive, which follows no
redirect (a 3xx is a failed connection, retried) and reads at most 2 KB of a refusal.
"""

from __future__ import annotations

import codecs
import http.client
import json
import logging
import random
import ssl
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from looproom.clients.the_loop import EventStream
from looproom.events import Event
from looproom.http.origins import redact_url
from looproom.inbound.loop_records import to_event
from looproom.inbound.sse import SSEEvent, SSEParser
from looproom.slack.text import defang

log = logging.getLogger(__name__)

#: The key under which the last stream id is kept in the cursor mapping.
CURSOR_KEY = "loop_stream.last_id"
#: the-loop sends a keep-alive comment every 15 s by default; three missed is a dead link.
READ_TIMEOUT = 45.0
MIN_BACKOFF, MAX_BACKOFF = 1.0, 60.0
#: Cursor writes for records we skip are batched (the log is chatty); an accepted
#: record's id is written at once.
CURSOR_FLUSH_SECONDS = 5.0

# -- the follower -----------------------------------------------------------------------


@dataclass(frozen=True)
class FollowerStatus:
    """What ``!theloop status`` shows about the stream ingress."""

    url: str
    state: str = "stopped"  # stopped | connecting | connected | waiting
    last_id: str = ""
    accepted: int = 0
    duplicates: int = 0
    connects: int = 0
    desyncs: int = 0
    last_error: str = ""

    def describe(self) -> str:
        """One line for the status command."""
        parts = [f"loop stream {self.url}: {self.state}"]
        parts.append(f"{self.accepted} accepted, {self.duplicates} duplicate(s)")
        # The id and the error are the peer's words (an SSE id, an HTTP body): inert them.
        parts.append(f"last id {defang(self.last_id) if self.last_id else 'none'}")
        if self.desyncs:
            parts.append(f"{self.desyncs} gap(s) reported by the-loop")
        if self.last_error:
            parts.append(f"last error: {defang(self.last_error)}")
        return "; ".join(parts)


class StreamFollower:
    """Follow the-loop's SSE stream on a daemon thread until :meth:`stop`.

    ``accept(event) -> bool`` stores the event durably (False: already stored); the
    cursor under :data:`CURSOR_KEY` is advanced only after it returns, so a crash
    between the two replays one record, which the inbox then refuses as a duplicate.
    If ``accept`` raises, the connection is dropped and the record is read again later.
    """

    def __init__(
        self,
        url: str,
        accept: Callable[[Event], bool],
        cursor: MutableMapping[str, Any],
        *,
        read_timeout: float = READ_TIMEOUT,
        min_backoff: float = MIN_BACKOFF,
        max_backoff: float = MAX_BACKOFF,
        token: str = "",
        pause: Callable[[float], object] | None = None,
        jitter: Callable[[float, float], float] = random.uniform,
    ) -> None:
        """``token`` goes with each request as a bearer token (a proxy may ask one).
        ``pause(seconds)`` waits between connections (by default until :meth:`stop`);
        ``jitter(low, high)`` draws the share of the backoff waited (tests pin both)."""
        self._stream = EventStream(url, token)
        self.url = self._stream.url
        self._accept = accept
        self._cursor = cursor
        self._read_timeout = read_timeout
        self._backoff = (min_backoff, max_backoff)
        self._pause = pause if pause is not None else self._wait
        self._jitter = jitter
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._connection: http.client.HTTPConnection | None = None
        self._status = FollowerStatus(url=redact_url(self.url), last_id=self._stored_id())
        self._pending_id = ""
        self._flushed_at = 0.0
        self._server_retry: int | None = None  # the last ``retry:`` the-loop sent, in ms

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> None:
        """Start following (idempotent while running)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="theloop-stream", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop, closing the open connection so a blocked read returns at once."""
        self._stop.set()
        self._close_connection()
        if self._thread is not None:
            self._thread.join(timeout)
        self._flush_cursor(force=True)
        self._set(state="stopped")

    def status(self) -> FollowerStatus:
        """A snapshot for ``!theloop status``."""
        with self._lock:
            return self._status

    # -- the loop ------------------------------------------------------------------------

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self._set(state="connecting")
            try:
                delivered = self._follow_once()
                error = "the-loop closed the stream"
            except Exception as exc:  # every failure is a reconnect, never a dead thread
                delivered, error = False, _describe(exc)
            self._flush_cursor(force=True)
            if self._stop.is_set():
                break
            failures = 0 if delivered else failures + 1
            if failures <= 1:  # once per outage, not once per retry
                log.warning("loop stream %s: %s; reconnecting", self._status.url, error)
            self._set(state="waiting", last_error=error)
            self._pause(self._delay(failures))

    def _delay(self, failures: int) -> float:
        """Backoff: the server's ``retry:`` after a good connection, doubling on failures."""
        low, high = self._backoff
        base = max(low, (self._server_retry or 0) / 1000)
        # Up to a fifth less at random: replicas dropped together do not return together.
        return min(high, base * 2 ** min(failures, 10)) * self._jitter(0.8, 1.0)

    def _wait(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def _follow_once(self) -> bool:
        """One connection, read until it ends; True if it delivered any frame."""
        response = self._open()
        self._set(state="connected", connects=self._status.connects + 1, last_error="")
        parser, decoder = SSEParser(), codecs.getincrementaldecoder("utf-8")("replace")
        parser.last_event_id = self._status.last_id
        seen = False
        while not self._stop.is_set():
            chunk = response.read1(64 * 1024)
            if not chunk:
                return seen
            for event in parser.feed(decoder.decode(chunk)):
                seen = True
                self._handle(event)
            self._server_retry = parser.retry
            self._flush_cursor()
        return seen

    def _open(self) -> http.client.HTTPResponse:
        target = urlsplit(self.url)
        connection = _connection(target, self._read_timeout)
        headers = self._stream.headers(self._status.last_id)
        path = target.path + (f"?{target.query}" if target.query else "")
        with self._lock:
            self._connection = connection
        if self._stop.is_set():
            raise ConnectionAbortedError("stopping")
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        if response.status != 200:
            body = response.read(2048).decode("utf-8", "replace")
            raise ConnectionError(f"HTTP {response.status}: {' '.join(body.split())[:200]}")
        return response

    def _handle(self, event: SSEEvent) -> None:
        if event.type == "desync":
            # the-loop could not replay from our id (too old, or its log was rotated).
            log.warning("loop stream: the-loop reports a gap (%s)", event.data[:200])
            self._set(desyncs=self._status.desyncs + 1)
        elif event.type == "log":
            self._take(event.data)
        if event.id:
            self._advance(event.id)

    def _take(self, data: str) -> None:
        try:
            record = json.loads(data)
        except ValueError:
            log.warning("loop stream: a frame that is not JSON was skipped")
            return
        mapped = to_event(record)
        if mapped is None:
            return
        if self._accept(mapped):  # raises: the id is not advanced, the record is re-read
            self._set(accepted=self._status.accepted + 1)
        else:
            self._set(duplicates=self._status.duplicates + 1)
        self._flushed_at = 0.0  # an accepted record's id is stored at once

    # -- the cursor ----------------------------------------------------------------------

    def _stored_id(self) -> str:
        try:
            return str(self._cursor.get(CURSOR_KEY) or "")
        except Exception as exc:  # an unreadable cursor: start from "now", say so
            log.warning("loop stream: could not read the stored id: %s", _describe(exc))
            return ""

    def _advance(self, event_id: str) -> None:
        self._pending_id = event_id
        self._set(last_id=event_id)

    def _flush_cursor(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self._pending_id or (not force and now - self._flushed_at < CURSOR_FLUSH_SECONDS):
            return
        try:
            self._cursor[CURSOR_KEY] = self._pending_id
        except Exception as exc:
            log.warning("loop stream: could not store the stream id: %s", _describe(exc))
            return
        self._pending_id, self._flushed_at = "", now

    # -- small helpers -------------------------------------------------------------------

    def _set(self, **changes: Any) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)

    def _close_connection(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
        if connection is None:
            return
        sock = connection.sock
        try:
            if sock is not None:
                sock.shutdown(2)  # SHUT_RDWR: wakes a thread blocked in recv
        except OSError:
            pass
        connection.close()


def _connection(target: Any, timeout: float) -> http.client.HTTPConnection:
    if target.scheme == "https":
        context = ssl.create_default_context()
        return http.client.HTTPSConnection(
            target.hostname, target.port, timeout=timeout, context=context
        )
    return http.client.HTTPConnection(target.hostname, target.port, timeout=timeout)


def _describe(exc: BaseException) -> str:
    """An error for the status line: its kind and message, never a URL's credentials."""
    if isinstance(exc, TimeoutError):
        return "no data or keep-alive within the read timeout"
    text = str(exc) or type(exc).__name__
    return text[:200]
