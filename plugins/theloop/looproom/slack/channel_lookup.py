"""A room found by its name or id: the bot's own rooms first, then the workspace's.

``users.conversations`` lists the rooms the bot is in, private ones included, which a
workspace listing may not show; only then ``conversations.list``, which also finds a room
the bot is not in yet. Each reads at most ``max_pages`` pages of 1000. A name a recent
listing gave is not looked up again (:mod:`looproom.slack.directory`), so rooms starting at
once read one listing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from looproom.slack.responses import Response, is_channel_id, next_cursor
from looproom.slack.transport import SlackTransport

MINE, LISTED = "users.conversations", "conversations.list"


@dataclass(frozen=True)
class ChannelLookup:
    """Where a room name led: its id (``""``: not found), whether the bot is in it, and
    whether a listing was cut short before it was found (then use the room's id)."""

    id: str = ""
    member: bool = False
    truncated: bool = False
    response: Response = field(default_factory=lambda: Response("", True))


def find_channel(slack: SlackTransport, name: str, *, max_pages: int = 10) -> tuple[str, Response]:
    """The id of the room called ``name`` (``#`` optional), or ``""``; and the last response,
    ``listing_truncated`` when a listing was cut short before it was found."""
    with slack.directory.looking:  # one look-up at a time: the next finds what it read
        known = slack.directory.get(name)
        if known:
            return known, Response(MINE, True)
        found = lookup_channel(slack, name, max_pages=max_pages, seen=slack.directory.learn)
    if found.id or not found.truncated:
        return found.id, found.response
    return "", Response(found.response.method, False, error="listing_truncated")


def lookup_channel(
    slack: SlackTransport,
    room: str,
    *,
    max_pages: int = 10,
    seen: Callable[[list], None] | None = None,
) -> ChannelLookup:
    """Find ``room`` (a name, ``#`` optional, or an id); ``seen`` is told every page of
    rooms read on the way."""
    mine = _scan(slack, MINE, room, max_pages, seen)
    if mine.id:
        return mine
    listed = _scan(slack, LISTED, room, max_pages, seen)
    truncated = mine.truncated or listed.truncated
    return ChannelLookup(listed.id, listed.member, truncated, listed.response)


def _scan(
    slack: SlackTransport,
    method: str,
    room: str,
    max_pages: int,
    seen: Callable[[list], None] | None,
) -> ChannelLookup:
    by_id, cursor = is_channel_id(room), ""
    wanted = room if by_id else room.lstrip("#").lower()
    response = Response(method, True)
    for _ in range(max_pages):
        response = slack.rooms_page(method, cursor)
        if not response.ok:
            return ChannelLookup(response=response)
        channels = [c for c in response.data.get("channels") or [] if isinstance(c, dict)]
        if seen is not None:
            seen(channels)
        for channel in channels:
            key = str(channel.get("id", "")) if by_id else str(channel.get("name", "")).lower()
            if key == wanted:
                member = method == MINE or bool(channel.get("is_member"))
                return ChannelLookup(str(channel.get("id", "")), member, response=response)
        cursor = next_cursor(response)
        if not cursor:
            return ChannelLookup(response=response)
    return ChannelLookup(truncated=True, response=response)
