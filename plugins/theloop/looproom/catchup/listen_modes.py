"""Which rooms hear every message: a room an admin switched to "listen to everything".

By default a room's plain messages are people talking among themselves: only words that
mention the bot reach a work item's session (``looproom.decide.talk``). An admin may switch
a room to **all** — the-loop's own ``--listen all`` — and then every message said in a work
item's thread there (or in a room bound to one work item) is a reply to its session, as if
it mentioned the bot. **addressed** switches it back. The switch is kept in the plugin's
storage, so it outlives a restart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, MutableMapping
from typing import Any

from looproom.durable.state import lock_for

ALL, ADDRESSED = "all", "addressed"
MODES = (ALL, ADDRESSED)
#: The storage key: the rooms (conversation ids) that listen to everything.
KEY = "listen_all"
#: At most this many rooms listen to everything; a room more is refused with a message.
MOST_ROOMS = 500
#: A room as Slack writes it in a message: ``<#C0123|name>``.
_LINKED = re.compile(r"^<#([CG][A-Z0-9]+)(?:\|[^>]*)?>$")
USAGE = (
    "usage: `!theloop listen all [room]` (every message in a work item's thread is a reply "
    "to its session) · `!theloop listen addressed [room]` (only words to the bot, the "
    "default) · `!theloop listen` (which rooms listen to everything)"
)


class ListenAll:
    """The rooms that listen to everything, in the plugin's storage."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store = store
        self._lock = lock_for(store)

    def hears_all(self, channel: str) -> bool:
        """Whether plain messages in ``channel`` count as words to the bot."""
        return bool(channel) and channel in self.rooms()

    def rooms(self) -> list[str]:
        """The rooms listening to everything, in the order they were switched."""
        try:
            return list(self._store.get(KEY) or ())
        except KeyError:  # Errbot's storage raises instead of answering the default
            return []

    def switch(self, channel: str, mode: str) -> bool:
        """Set ``channel``'s mode; False when :data:`MOST_ROOMS` already listen to all."""
        with self._lock:
            rooms = [room for room in self.rooms() if room != channel]
            if mode == ALL:
                if len(rooms) >= MOST_ROOMS:
                    return False
                rooms.append(channel)
            self._store[KEY] = rooms
            return True


def command(
    listening: ListenAll, args: str, here: str, room_id: Callable[[str], str], *, direct: bool
) -> str:
    """``!theloop listen [all|addressed] [room]``'s answer, the switch made. ``here`` is the
    conversation it was typed in (``direct``: a direct message, which is no room);
    ``room_id`` turns a named room into its id (``""``: no such room)."""
    words = args.split()
    if not words:
        return _listing(listening)
    mode, named = words[0].lower(), " ".join(words[1:])
    if mode not in MODES or len(words) > 2:
        return USAGE
    if named:
        linked = _LINKED.match(named)
        channel = linked.group(1) if linked else room_id(named)
        if not channel:
            return f"No room `{named}` that the bot can see; nothing was switched."
    elif direct or not here:
        return "Say which room: `!theloop listen all #room`. Nothing was switched."
    else:
        channel, named = here, "This room"
    if not listening.switch(channel, mode):
        return f"{MOST_ROOMS} rooms already listen to everything; switch one back first."
    where = named if named == "This room" else f"`{named}`"
    if mode == ALL:
        return (
            f"{where} now listens to everything: a plain message in a work item's thread "
            "there is a reply to its session, no mention needed."
        )
    return f"{where} now hears only words addressed to the bot (a mention), as by default."


def status_line(listening: ListenAll) -> str:
    """``!theloop status``'s line: the rooms that listen to everything."""
    rooms = listening.rooms()
    shown = ", ".join(_shown(room) for room in rooms) if rooms else "none (every room: addressed)"
    return f"listening to everything: {shown}"


def _listing(listening: ListenAll) -> str:
    rooms = listening.rooms()
    if not rooms:
        return "Every room hears only words addressed to the bot (the default).\n" + USAGE
    return "Listening to everything: " + ", ".join(_shown(room) for room in rooms)


def _shown(room: str) -> str:
    """A Slack conversation id as Slack links it; another backend's room as it is."""
    return f"<#{room}>" if room[:1] in ("C", "G") and room.isalnum() and room.isupper() else room
