"""Where a credential may go, and a URL as it may be shown.

An :class:`Origin` is a scheme, a host (or a ``*.`` pattern) and a port: a bearer token is
sent only to the origin it was configured for, so a redirect elsewhere never carries it.
:func:`redact_url` is every URL as a log line, a finding or a status may show it: without
its user and password, however they are written, and without query or fragment.
"""

from __future__ import annotations

import fnmatch
import urllib.parse
from dataclasses import dataclass

_DEFAULT_PORTS = {"http": 80, "https": 443}
#: What stands for an address no part of which can be shown safely.
_HIDDEN = "(address hidden)"


@dataclass(frozen=True)
class Origin:
    """Where a credential may go: a scheme and a host pattern (``*.slack.com``), and a
    port when not the scheme's own."""

    scheme: str
    host: str
    port: int | None = None

    def admits(self, url: str) -> bool:
        found = origin_of(url)
        if found is None or found.scheme != self.scheme or found.port != self.port:
            return False
        if self.host.startswith("*."):
            return fnmatch.fnmatchcase(found.host, self.host)
        return found.host == self.host


def origin_of(url: str) -> Origin | None:
    """The origin of an http(s) URL (the scheme's own port as ``None``); ``None`` when it
    is not one."""
    parts = urllib.parse.urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower().rstrip(".")
    if parts.scheme not in _DEFAULT_PORTS or not host:
        return None
    return Origin(parts.scheme, host, None if port == _DEFAULT_PORTS[parts.scheme] else port)


def same_origin(url: str, other: str) -> bool:
    """Both URLs on one scheme, host and port."""
    first = origin_of(url)
    return first is not None and first == origin_of(other)


def redact_url(url: str) -> str:
    """``url`` without user, password, query or fragment, which may carry credentials.

    Scheme, host, port and path stay, so an admin can still tell which server it is. A
    password may hold any character, even the ``/``, ``?``, ``#`` and ``@`` that end an
    address's parts (people paste them unencoded), so everything up to the **last** ``@``
    is taken as the user and password: a query holding an ``@`` then shows less than it
    could, never a password. Where nothing is left for a host after that ``@``, nothing
    after the scheme is shown at all: a part of a password could be anywhere in it.
    """
    if not url:
        return ""
    scheme, found, rest = url.partition("://") if "://" in url else ("", "", url)
    _userinfo, at, rest = rest.rpartition("@")
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    if at and cut == 0:
        return f"{scheme}{found}{_HIDDEN}"
    cut = min((i for i in (rest.find(c) for c in "?#") if i >= 0), default=len(rest))
    return f"{scheme}{found}{rest[:cut]}"
