"""A member, directly: the bot's direct message with them, their own time zone, their Home.

``conversations.open`` (``im:write``) gives the direct message's channel, the same each
time, so it is asked once per member and kept; ``users.info`` gives the member's time zone
as Slack knows it (``tz_offset``, seconds east of UTC), kept for an hour, since people
travel; ``views.publish`` draws their App Home tab. Every call goes through the transport,
in its turn, and comes back as its typed response.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from looproom.slack.responses import Response
from looproom.slack.transport import SlackTransport

#: How long a member's time zone is trusted before it is asked again.
ZONE_SECONDS = 3600.0


class Direct:
    """Direct messages, time zones and Home views, over one transport."""

    def __init__(self, slack: SlackTransport, clock: Callable[[], float] = time.monotonic) -> None:
        self.slack, self._clock = slack, clock
        self._lock = threading.Lock()
        self._ims: dict[str, str] = {}
        self._zones: dict[str, tuple[float, int]] = {}

    def dm(self, member: str) -> tuple[str, Response | None]:
        """The direct message's channel id, or ``""`` and Slack's answer saying why not."""
        with self._lock:
            known = self._ims.get(member)
        if known:
            return known, None
        # The transport's one way to call any method in its turn (limits, retries).
        response = self.slack._call("conversations.open", {"users": member})
        channel = response.data.get("channel") if response.ok else None
        found = str(channel.get("id") or "") if isinstance(channel, Mapping) else ""
        if not found:
            return "", response
        with self._lock:
            self._ims[member] = found
        return found, None

    def offset(self, member: str) -> int | None:
        """The member's offset from UTC in seconds; None when Slack cannot say now."""
        now = self._clock()
        with self._lock:
            known = self._zones.get(member)
        if known is not None and now - known[0] < ZONE_SECONDS:
            return known[1]
        response = self.slack._call("users.info", {"user": member})
        user = response.data.get("user") if response.ok else None
        raw = user.get("tz_offset") if isinstance(user, Mapping) else None
        if isinstance(raw, bool) or not isinstance(raw, int):
            return known[1] if known is not None else None
        with self._lock:
            self._zones[member] = (now, raw)
        return raw

    def publish_home(self, member: str, view: Mapping[str, Any]) -> Response:
        """``views.publish``: ``member``'s App Home tab drawn anew."""
        return self.slack._call("views.publish", {"user_id": member, "view": dict(view)})
