"""A signed, expiring link to one file attached on one work item, for its session to fetch.

the-loop's session may run where the bot's disk is not: in another container, on another
machine. So the session is handed a link to the bot's own HTTP server rather than a path.
The link names the Slack file, the work item it was attached on and when it stops working,
and carries an HMAC over the three: nobody can make one for another file, another work item
or a later time, and a link that is tampered with or out of date is refused before any file
is read. The key is derived from the bot token, which every replica of the bot holds, so a
link made by one replica is honoured by another.
"""

from __future__ import annotations

import hashlib
import hmac
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

#: The route the links point at.
PATH = "/theloop/files"
#: A link works this long (seconds): as long as the bot keeps a fetched file.
LIFETIME = 7 * 24 * 3600.0
_CONTEXT = b"theloop attached-file links v1"
_MOST_QUERY = 2048


def key_from(secret: str) -> bytes:
    """The links' key: derived from ``secret`` (the bot token), never the token itself;
    empty without one (then no link is made or honoured)."""
    if not secret:
        return b""
    return hmac.new(secret.encode(), _CONTEXT, hashlib.sha256).digest()


@dataclass(frozen=True)
class Linked:
    """What a valid link names: the Slack file and the work item it was attached on."""

    file_id: str
    work_item: str


@dataclass(frozen=True)
class Refused:
    """Why a link is not honoured: the HTTP status and the words."""

    status: int
    error: str


class FileLinks:
    """Makes and checks the links at ``base`` (the bot's address as the-loop reaches it)."""

    def __init__(
        self,
        base: str,
        key: Callable[[], bytes],
        *,
        lifetime: float = LIFETIME,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``key`` is asked each time: the bot token may be set after the links are made."""
        self.base, self._key, self._lifetime, self._clock = base.rstrip("/"), key, lifetime, clock

    def link(self, file_id: str, work_item: str, name: str) -> tuple[str, float]:
        """The link to ``file_id`` as attached on ``work_item``, and when it stops working.
        ``name`` is only shown (the file is served under its own name)."""
        until = int(self._clock() + self._lifetime)
        query = {"f": file_id, "w": work_item, "e": str(until)}
        query["s"] = self._signature(file_id, work_item, until)
        query["n"] = name
        return f"{self.base}{PATH}?{urllib.parse.urlencode(query)}", float(until)

    def check(self, query: str) -> Linked | Refused:
        """The file a link's query names, when its signature holds and it has not expired."""
        if len(query) > _MOST_QUERY:
            return Refused(400, "the link is too long to be one of ours")
        fields = urllib.parse.parse_qs(query, keep_blank_values=True)
        got = {name: fields.get(name, []) for name in ("f", "w", "e", "s")}
        if any(len(values) != 1 for values in got.values()):
            return Refused(400, "a file link names f, w, e and s once each")
        file_id, work_item, until, signature = (got[n][0] for n in ("f", "w", "e", "s"))
        if not until.isdigit() or not file_id or not work_item:
            return Refused(400, "the link's file, work item or expiry is not readable")
        if not self._key():
            return Refused(503, "the bot holds no token to check the link with")
        expected = self._signature(file_id, work_item, int(until))
        if not hmac.compare_digest(expected, signature):
            return Refused(403, "the link's signature does not hold")
        if int(until) < self._clock():
            return Refused(410, "the link has expired")
        return Linked(file_id, work_item)

    def _signature(self, file_id: str, work_item: str, until: int) -> str:
        message = f"{file_id}\n{work_item}\n{until}".encode()
        return hmac.new(self._key(), message, hashlib.sha256).hexdigest()
