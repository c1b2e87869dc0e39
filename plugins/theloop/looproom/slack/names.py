"""Member ids → the names people know them by, as Slack's ``users.info`` tells them.

A recorded thread names who said what (``**@alice**``), as the-loop's own snapshot does,
not ``<@U0123>``, which reads as nothing on a ticket. Each member is asked once and kept
(bounded: the least recently asked go first); a member Slack cannot describe now is named
by id, and asked again the next time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping

from looproom.slack.transport import SlackTransport

#: At most this many names are kept.
MOST_NAMES = 2000


class Names:
    """``name(member)``: the member's display name, else real name, else handle."""

    def __init__(self, slack: SlackTransport) -> None:
        self._slack = slack
        self._known: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def name(self, member: str) -> str:
        """The name ``member`` goes by; the id itself when Slack cannot say."""
        with self._lock:
            if member in self._known:
                self._known.move_to_end(member)
                return self._known[member]
        response = self._slack._call("users.info", {"user": member})
        user = response.data.get("user") if response.ok else None
        found = _name_of(user) if isinstance(user, Mapping) else ""
        if not found:
            return member
        with self._lock:
            self._known[member] = found
            while len(self._known) > MOST_NAMES:
                self._known.popitem(last=False)
        return found


def _name_of(user: Mapping[str, object]) -> str:
    profile = user.get("profile")
    profile = profile if isinstance(profile, Mapping) else {}
    for found in (profile.get("display_name"), profile.get("real_name"), user.get("name")):
        if isinstance(found, str) and found.strip():
            return found.strip()
    return ""
