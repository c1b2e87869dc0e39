"""One download a credential may ride on: the host checked before every request and hop.

A Slack file's private URL opens with the bot token, so the token must go nowhere else.
The destination is checked against an allow-list of origins **before** any request, and
redirects are never followed by the library: each hop's ``Location`` is checked the same
way before it is requested. The body is read one byte past the cap, so an oversized file
is refused rather than cut; a stalled host is given up after the timeout. Every failure
is a :class:`FetchError` with a fixed reason — never a URL in a log line or a message,
since a private URL is a capability.
"""

from __future__ import annotations

import fnmatch
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from http.client import HTTPException

#: At most this many bytes per file.
MAX_BYTES = 25 * 1024 * 1024
#: Per request, in seconds.
TIMEOUT = 30.0
#: Redirect hops followed before giving up.
MOST_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "theloop-files"

#: The words each failure is told in, to the session and on the ticket.
REASONS = {
    "off-host": "its address is not on the file host",
    "over-cap": f"over the {MAX_BYTES // (1024 * 1024)} MiB cap",
    "transfer-failed": "the transfer failed",
    "no-token": "the bot holds no token for it",
    "too-many": "past the number of files fetched for one message",
}


@dataclass(frozen=True)
class Origin:
    """Where a credential may go: a scheme and a host pattern (``*.slack.com``), and a
    port when not the scheme's own."""

    scheme: str
    host: str
    port: int | None = None

    def admits(self, url: str) -> bool:
        parts = urllib.parse.urlsplit(url)
        try:
            port = parts.port
        except ValueError:
            return False
        host = (parts.hostname or "").lower().rstrip(".")
        if parts.scheme != self.scheme or not host or port != self.port:
            return False
        if self.host.startswith("*."):
            return fnmatch.fnmatchcase(host, self.host)
        return host == self.host


#: Where Slack keeps a file's private URL and its captions.
SLACK_ORIGINS = (Origin("https", "files.slack.com"), Origin("https", "*.slack.com"))


def origin_of(url: str) -> Origin | None:
    """The origin of a configured base URL (a proxy, GovSlack, a loopback fake)."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return Origin(parts.scheme, parts.hostname.lower(), port)


class FetchError(Exception):
    """A download that produced no file; ``reason`` is a key of :data:`REASONS`."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Hand every redirect back: :func:`fetch` checks each hop itself."""

    def redirect_request(self, *_args: object, **_kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect())


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
        request = urllib.request.Request(current, method="GET")
        request.add_header("User-Agent", USER_AGENT)
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with _OPENER.open(request, timeout=timeout) as answer:
                kind = str(answer.headers.get("Content-Type") or "").split(";")[0].strip()
                body = answer.read(max_bytes + 1)
        except urllib.error.HTTPError as exc:
            location = exc.headers.get("Location") if exc.headers else None
            exc.close()
            if exc.code in _REDIRECTS and location:
                current = urllib.parse.urljoin(current, location)
                continue
            raise FetchError("transfer-failed") from None
        except (urllib.error.URLError, HTTPException, OSError, ValueError):
            raise FetchError("transfer-failed") from None
        if len(body) > max_bytes:
            raise FetchError("over-cap")
        return kind.lower(), body
    raise FetchError("transfer-failed")
