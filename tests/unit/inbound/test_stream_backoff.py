"""The stream's reconnect backoff at its edges (docs/connect-the-loop.md): a second at
least, doubling on each failed attempt, a minute at most, up to a fifth less at random.

No clock is read: the follower's wait between connections is handed in and records what
it was asked to wait, the random share pinned. The-loop is a loopback server that is not
listening (each attempt refused) or that answers once with a ``retry:`` hint and a frame.
"""

from __future__ import annotations

import http.server
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from looproom.inbound.stream import StreamFollower
from tests.support.wait import wait_for

SECOND, MINUTE = 1.0, 60.0
PATIENCE = 20.0  # a bound on waiting for the follower's thread, never a measure


def _follow(url: str, waits: list[float], jitter: Callable[[float, float], float]) -> Iterator:
    follower = StreamFollower(url, lambda _e: True, {}, pause=waits.append, jitter=jitter)
    follower.start()
    try:
        yield follower
    finally:
        follower.stop()


def _top(low: float, high: float) -> float:
    return high


def _refusing_url() -> str:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/api/v1/stream"


def _waits_of(url: str, count: int, jitter: Callable[[float, float], float] = _top) -> list:
    waits: list[float] = []
    for _ in _follow(url, waits, jitter):
        wait_for(lambda: len(waits) >= count, PATIENCE, f"{count} reconnect waits")
    return waits[:count]


def test_each_failed_attempt_doubles_the_wait_up_to_a_minute_and_never_past() -> None:
    # 2, 4, … 32, then 64 would be past the minute: a minute, and a minute again.
    expected = [2 * SECOND, 4 * SECOND, 8 * SECOND, 16 * SECOND, 32 * SECOND, MINUTE, MINUTE]
    assert _waits_of(_refusing_url(), 7) == pytest.approx(expected)


def test_each_wait_is_between_four_fifths_and_the_whole_drawn_at_random() -> None:
    asked: list[tuple[float, float]] = []

    def bottom(low: float, high: float) -> float:
        asked.append((low, high))
        return low

    waits = _waits_of(_refusing_url(), 6, bottom)
    assert waits == pytest.approx([1.6, 3.2, 6.4, 12.8, 25.6, 48.0])
    assert set(asked) == {(0.8, 1.0)}


class _Hinting(http.server.BaseHTTPRequestHandler):
    """the-loop's stream: the first connection gets ``retry: <hint>`` and one frame, then
    closes; every later one is refused with a 503."""

    hint = 0
    served = 0

    def do_GET(self) -> None:
        type(self).served += 1
        if type(self).served > 1:
            self.send_error(503)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.wfile.write(f"retry: {self.hint}\nid: 1\ndata: hello\n\n".encode())

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def hinting() -> Iterator[Callable[[int], str]]:
    servers: list[http.server.ThreadingHTTPServer] = []

    def serve(hint: int) -> str:
        handler = type("Hint", (_Hinting,), {"hint": hint, "served": 0})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/api/v1/stream"

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("hint_ms", "first"),
    [(999, SECOND), (1000, SECOND), (1001, 1.001), (30_000, 30.0), (30_001, 30.001)],
)
def test_after_a_good_connection_the_loops_hint_is_waited_but_never_under_a_second(
    hinting: Callable[[int], str], hint_ms: int, first: float
) -> None:
    waits = _waits_of(hinting(hint_ms), 3)
    # Then the refused attempts double it, a minute at most (30 s doubles to exactly 60).
    assert waits == pytest.approx([first, min(MINUTE, first * 2), min(MINUTE, first * 4)])
