"""What waitress does before the application sees a request, tightened for a hostile network.

waitress parses the request line, headers and body itself, and refuses what it cannot parse
with a plain-text page. What is tightened here, each by a subclass of one waitress class
(its parser, its error task, its channel, its TCP server):

- a request with both ``Content-Length`` and ``Transfer-Encoding`` is refused (400): behind a
  proxy that reads the other header, it is a request-smuggling surface;
- a refused request is never told ``100 Continue`` first (a client would send its body);
- a chunked body is held to the body limit by its own bytes, not its framing's too;
- every refusal waitress makes is JSON, like every answer of the application;
- a request must arrive whole within a deadline, however slowly it trickles: waitress's own
  ``channel_timeout`` counts from the last byte received, so one byte a second keeps a
  connection forever;
- the connection limit counts client connections, not waitress's listeners and trigger too;
- connections waiting to be accepted are accepted in batches: waitress takes one per turn
  of its loop, and each turn looks at every open connection, so a flood of a thousand
  would keep an honest sender waiting behind it for seconds.
"""

from __future__ import annotations

import json
import time
from typing import Any

from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError
from waitress.server import TcpWSGIServer
from waitress.task import ErrorTask
from waitress.utilities import RequestEntityTooLarge

#: Connections accepted in one turn of the loop at most.
ACCEPT_BATCH = 64
#: Said for a body over the limit, whichever side (waitress or the application) finds it.
TOO_LARGE = "body over {limit} bytes"


def _header_names(header_plus: bytes) -> set[bytes]:
    lines = header_plus.split(b"\r\n")[1:]
    return {line.split(b":", 1)[0].strip().lower() for line in lines if b":" in line}


class StrictParser(HTTPRequestParser):
    """waitress's parser, refusing ambiguous framing and timing how long a request takes."""

    def __init__(self, adj: Any) -> None:
        super().__init__(adj)
        self.started = StrictServer.clock()

    def parse_header(self, header_plus: bytes) -> None:
        names = _header_names(header_plus)
        if b"content-length" in names and b"transfer-encoding" in names:
            raise ParsingError("Content-Length and Transfer-Encoding together are ambiguous")
        super().parse_header(header_plus)

    def received(self, data: bytes) -> int:
        consumed = super().received(data)
        if self.chunked and self.body_rcv is not None:
            self._count_the_body_not_its_framing()
        if self.error is not None:
            self.expect_continue = False  # refused: the client must not send its body
        return consumed

    def _count_the_body_not_its_framing(self) -> None:
        """waitress counts a chunked body's wire bytes (sizes, line ends) against the limit,
        so a body of exactly the limit would be refused: the limit is the body's own."""
        body = self.body_rcv
        self.body_bytes_received = len(body)
        if (
            isinstance(self.error, RequestEntityTooLarge)
            and len(body) < self.adj.max_request_body_size
        ):
            self.error, self.completed = body.error, body.completed or body.error is not None
            if body.completed and body.error is None:
                self.headers["CONTENT_LENGTH"] = str(len(body))


class JsonErrorTask(ErrorTask):
    """waitress's refusal of a request it could not parse, as JSON, closing the connection."""

    def execute(self) -> None:
        error = self.request.error
        if isinstance(error, RequestEntityTooLarge):
            message = TOO_LARGE.format(limit=self.channel.server.adj.max_request_body_size - 1)
        else:
            message = f"{error.reason}: {error.body}"
        body = json.dumps({"error": message}).encode()
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class StrictChannel(HTTPChannel):
    """One client connection, parsed by :class:`StrictParser`, refused in JSON."""

    parser_class = StrictParser
    error_task_class = JsonErrorTask


class StrictServer(TcpWSGIServer):
    """waitress's TCP server with the channel above and a whole-request read deadline."""

    channel_class = StrictChannel
    #: Seconds a request may take to arrive, headers and body (set per server).
    request_deadline = 10.0
    #: What the request deadline is counted on (a test drives it).
    clock = staticmethod(time.monotonic)

    def open_connections(self) -> int:
        """Client connections open on every listener: waitress's own limit counts its map,
        where the listeners and its wake-up trigger sit too, so the limit was two short."""
        return sum(isinstance(entry, HTTPChannel) for entry in self._map.values())

    def readable(self) -> bool:
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        if not self.accepting:
            return False
        full = self.open_connections() >= self.adj.connection_limit
        if full != self.in_connection_overflow:  # said once each way, as waitress says it
            self.in_connection_overflow = full
            if full:
                self.logger.warning("open connections at the limit: accepting no more for now")
            else:
                self.logger.info("open connections under the limit: accepting again")
        return not full

    def handle_accept(self) -> None:
        for _ in range(ACCEPT_BATCH):
            if self.open_connections() >= self.adj.connection_limit:
                return  # the limit holds: the rest wait in the backlog
            before = len(self._map)
            super().handle_accept()
            if len(self._map) == before:
                return  # nothing more was waiting

    def maintenance(self, now: float) -> None:
        super().maintenance(now)
        late = self.clock() - self.request_deadline
        for channel in list(self.active_channels.values()):
            started = getattr(channel.request, "started", None)
            if not channel.requests and started is not None and started < late:
                channel.will_close = True
