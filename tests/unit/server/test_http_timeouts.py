"""The HTTP server's clocks and its connection limit at their edges (docs/security.md): a
connection silent 30 s is kept and one silent longer closed; a request still arriving 10 s
after it began is kept and one a moment later cut off; 2 000 connections are open at once.

No clock is read for a verdict: the server's periodic check is driven with the time the
test chooses, and the connection is then seen closed (or not marked for closing) by its
client. The limit itself is tried at a small figure, where one past it is cheap to open.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from waitress.channel import HTTPChannel

from looproom.server.runner import HttpServer, Limits
from tests.support.wait import wait_for

IDLE, DEADLINE, CONNECTIONS = 30.0, 10.0, 2000
PAST = 0.001  # a millisecond past the edge
PATIENCE = 20.0  # a bound on waiting for the server's loop, never a measure


def _app(_environ: dict[str, Any], reply: Any) -> list[bytes]:
    reply("200 OK", [("Content-Type", "application/json")])
    return [b"{}"]


@pytest.fixture
def server() -> Iterator[HttpServer]:
    served = HttpServer(_app)
    assert served.start("127.0.0.1", 0).address
    yield served
    served.stop()


def _channels(served: HttpServer) -> list[HTTPChannel]:
    return [c for c in list(served._map.values()) if isinstance(c, HTTPChannel)]


def _one_channel(served: HttpServer) -> HTTPChannel:
    (channel,) = wait_for(lambda: _channels(served), PATIENCE, "the connection accepted")
    return channel


def _closed_by_server(client: socket.socket) -> bool:
    """Whether the server closed ``client`` (its end read, or reset) within the patience."""
    client.settimeout(PATIENCE)
    try:
        while client.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True  # reset: closed with bytes unread
    return True


def test_a_connection_silent_30_s_is_kept_and_one_silent_a_moment_longer_closed(
    server: HttpServer,
) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as client:
        channel = _one_channel(server)
        listener = server._servers[0]
        listener.maintenance(channel.last_activity + IDLE)
        assert not channel.will_close
        listener.maintenance(channel.last_activity + IDLE + PAST)
        assert channel.will_close and _closed_by_server(client)


def test_a_request_arriving_10_s_is_kept_and_one_arriving_a_moment_longer_cut_off(
    server: HttpServer,
) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as client:
        client.sendall(b"POST /theloop/events HTTP/1.1\r\nHost: x\r\n")  # and no more
        channel = _one_channel(server)
        wait_for(lambda: channel.request is not None, PATIENCE, "the request begun")
        started = channel.request.started
        listener = server._servers[0]
        listener.clock = lambda: started + DEADLINE
        listener.maintenance(channel.last_activity)  # not idle: only the deadline is tried
        assert not channel.will_close
        listener.clock = lambda: started + DEADLINE + PAST
        listener.maintenance(channel.last_activity)
        assert channel.will_close and _closed_by_server(client)


def test_the_server_is_built_to_hold_2000_connections() -> None:
    assert Limits().connection_limit == CONNECTIONS
    assert Limits().adjustments("127.0.0.1", 0).connection_limit == CONNECTIONS


@pytest.mark.parametrize("limit", [1, 3])
def test_exactly_the_limit_of_connections_is_open_and_one_past_waits_until_one_closes(
    limit: int, caplog: pytest.LogCaptureFixture
) -> None:
    served = HttpServer(_app, Limits(connection_limit=limit))
    assert served.start("127.0.0.1", 0).address
    # One past the limit, all at once: waiting together in the backlog, as in a flood.
    clients = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(limit + 1)]
    try:
        wait_for(lambda: len(_channels(served)) >= limit, PATIENCE, f"{limit} accepted")
        late = clients[-1]
        late.sendall(b"GET /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert not served._servers[0].readable()  # the listener accepts no more
        assert len(_channels(served)) == limit
        assert "open connections at the limit" in caplog.text  # the admin can see why
        clients.pop(0).close()  # one leaves: the one waiting is taken and answered
        late.settimeout(PATIENCE)
        assert late.recv(4096).startswith(b"HTTP/1.1 ")
    finally:
        for client in clients:
            client.close()
        served.stop()
