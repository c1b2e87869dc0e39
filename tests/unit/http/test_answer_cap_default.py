"""The shared HTTP client's default answer cap, against a loopback peer answering exactly
that much and one byte more — with a declared length and streamed without one.

The figure is the one `docs/security.md` gives (at most 32 MiB of an answer is read;
GitHub's largest page is under 27 MiB), not the module's constant: the client is called
with no cap of its own. The peer streams its body a mebibyte at a time, so only the
client's reading holds it whole.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from looproom.durable.outcome import RetryLater
from looproom.http.client import http, outcome_of
from tests.fakes.loopback import LoopbackHandler, LoopbackHTTP

MIB = 1024 * 1024
DOCUMENTED_CAP = 32 * MIB
_BLOCK = b"x" * MIB


class _Sized(LoopbackHandler):
    """``GET /<n>`` answers 200 with ``n`` bytes; ``/chunked/<n>`` without a length."""

    def serve(self) -> None:
        chunked = self.path.startswith("/chunked/")
        size = int(self.path.rsplit("/", 1)[1])
        with contextlib.suppress(OSError):  # the client stops reading past its cap
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(size))
            self.end_headers()
            left = size
            while left:
                piece = _BLOCK[: min(left, MIB)]
                left -= len(piece)
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                else:
                    self.wfile.write(piece)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")


class SizedPeer(LoopbackHTTP):
    handler = _Sized


@pytest.fixture
def peer() -> Iterator[SizedPeer]:
    with SizedPeer() as fake:
        yield fake


@pytest.mark.parametrize("how", ["", "chunked/"])
def test_an_answer_of_exactly_32_mib_is_read_whole(peer, how) -> None:
    answer = http("GET", f"{peer.url}/{how}{DOCUMENTED_CAP}", {}, None, 30.0)
    assert (answer.status, answer.over_cap, answer.error) == (200, False, "")
    assert len(answer.body) == DOCUMENTED_CAP


@pytest.mark.parametrize("how", ["", "chunked/"])
def test_an_answer_one_byte_over_32_mib_is_refused_as_over_the_cap(peer, how) -> None:
    answer = http("GET", f"{peer.url}/{how}{DOCUMENTED_CAP + 1}", {}, None, 30.0)
    assert (answer.status, answer.over_cap, answer.sent, answer.body) == (0, True, True, b"")
    assert "over the 32 MiB the bot reads" in answer.error
    retry = outcome_of(answer, "GitHub", 0.0)  # the peer answered: it may have acted
    assert isinstance(retry, RetryLater) and "may have acted" in retry.reason
