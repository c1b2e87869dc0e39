"""One download a credential may ride on: the host checked before every request and hop.

A Slack file's private URL opens with the bot token, so the token must go nowhere else.
The destination is checked against an allow-list of origins **before** any request, and
a redirect to another origin is never followed by the shared HTTP client
(:mod:`looproom.http.client`): each such hop's ``Location`` is checked the same way before it
is requested. The body is read one byte past the cap, so an oversized file
is refused rather than cut; a stalled host is given up after the timeout. Every failure
is a :class:`FetchError` with a fixed reason — never a URL in a log line or a message,
since a private URL is a capability.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Sequence

from looproom.http.client import REDIRECTS, bearer, http
from looproom.http.origins import Origin, origin_of

__all__ = ["SLACK_ORIGINS", "FetchError", "Origin", "fetch", "origin_of"]

#: At most this many bytes per file.
MAX_BYTES = 25 * 1024 * 1024
#: Per request, in seconds.
TIMEOUT = 30.0
#: Redirect hops to another origin followed before giving up.
MOST_REDIRECTS = 5
USER_AGENT = "theloop-files"

#: The words each failure is told in, to the session and on the ticket.
REASONS = {
    "off-host": "its address is not on the file host",
    "over-cap": f"over the {MAX_BYTES // (1024 * 1024)} MiB cap",
    "transfer-failed": "the transfer failed",
    "no-token": "the bot holds no token for it",
    "too-many": "past the number of files fetched for one message",
}

#: Where Slack keeps a file's private URL and its captions.
SLACK_ORIGINS = (Origin("https", "files.slack.com"), Origin("https", "*.slack.com"))


class FetchError(Exception):
    """A download that produced no file; ``reason`` is a key of :data:`REASONS`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def fetch(
    url: str,
    *,
    token: str,
    allowed: Sequence[Origin],
    max_bytes: int = MAX_BYTES,
    timeout: float = TIMEOUT,
) -> tuple[str, bytes]:
    """``(content type, body)`` of ``url``; :class:`FetchError` otherwise. ``token`` goes as
    a bearer token, and only to an origin in ``allowed``."""
    current = url
    for _hop in range(MOST_REDIRECTS + 1):
        if not any(origin.admits(current) for origin in allowed):
            raise FetchError("off-host")
        headers = {"User-Agent": USER_AGENT, **bearer(token)}
        answer = http("GET", current, headers, None, timeout, max_bytes=max_bytes)
        if answer.over_cap:
            raise FetchError("over-cap")
        if answer.status in REDIRECTS and answer.moved_to:
            current = urllib.parse.urljoin(current, answer.moved_to)
            continue
        if answer.status != 200:
            raise FetchError("transfer-failed")
        kind = answer.header("content-type").split(";")[0].strip()
        return kind.lower(), answer.body
    raise FetchError("transfer-failed")
