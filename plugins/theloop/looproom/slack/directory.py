"""Room names and ids from the listings the transport read lately, for every room at once.

Finding a room by name costs a workspace listing (``users.conversations``, then
``conversations.list``), each a tier-limited method. A listing names every room on its
page, so many rooms that start at once would otherwise each read the same listing in turn
and spend the budget their posts and edits need. The directory keeps what the last
listings said for a few minutes (a room made or renamed since is looked up afresh when not
found), and lets one look-up run at a time so the next finds what it read.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

#: How long what a listing said is taken as true.
FRESH_FOR = 300.0
#: Names kept at most: ten pages of a thousand rooms from each of the two listings.
MOST = 20_000


class ChannelDirectory:
    """Room name (lower case, no ``#``) → id, from recent listings; thread-safe, bounded."""

    def __init__(
        self, fresh_for: float = FRESH_FOR, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._fresh_for, self._clock = fresh_for, clock
        self._ids: dict[str, str] = {}
        self._since = 0.0
        self._lock = threading.Lock()
        #: Held around a look-up that reads listings: one at a time.
        self.looking = threading.Lock()

    def get(self, room: str) -> str:
        """The id a recent listing gave ``room`` (a name, ``#`` optional), or ``""``."""
        with self._lock:
            if self._clock() - self._since > self._fresh_for:
                self._ids.clear()
            return self._ids.get(room.lstrip("#").lower(), "")

    def learn(self, channels: Iterable[Mapping[str, Any]]) -> None:
        """Remember each room a listing page named."""
        with self._lock:
            now = self._clock()
            if not self._ids or now - self._since > self._fresh_for:
                self._ids.clear()
                self._since = now
            for channel in channels:
                name, id_ = str(channel.get("name") or "").lower(), str(channel.get("id") or "")
                if name and id_ and len(self._ids) < MOST:
                    self._ids[name] = id_
