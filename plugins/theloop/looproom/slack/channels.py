"""A room's Slack id: as written, as learnt, else asked of Slack once and learnt.

Settings and people name rooms (``#the-loop``); Slack's events carry ids (``C0…``). The
delivery outlet and the decision side both need the one from the other, so both ask here
and teach the same book.
"""

from __future__ import annotations

import logging
from typing import Protocol

from looproom.slack.channel_lookup import find_channel
from looproom.slack.responses import is_channel_id
from looproom.slack.transport import SlackTransport

log = logging.getLogger(__name__)


class Learnt(Protocol):
    """Where the ids found are kept (the binding book)."""

    def channel_id(self, room: str) -> str: ...

    def learn_channel_id(self, room: str, channel_id: str) -> None: ...


class ChannelIds:
    """Room names to ids, through ``learnt``; asks Slack only when ``slack`` is given."""

    def __init__(self, learnt: Learnt, slack: SlackTransport | None) -> None:
        self._learnt, self._slack = learnt, slack

    def of(self, room: str) -> str:
        """The room's id: as configured, learnt earlier, or looked up; ``""`` if unknown yet."""
        if is_channel_id(room):
            return room
        known = self._learnt.channel_id(room)
        if known or self._slack is None:
            return known
        found, response = find_channel(self._slack, room)
        if found:
            self._learnt.learn_channel_id(room, found)
        elif not response.ok:
            # e.g. missing channels:read — posting by name still works and teaches the id.
            log.info("room %s: cannot list channels (%s); posting by name", room, response.error)
        return found

    def find(self, room: str) -> tuple[str, str]:
        """The id of the room called ``room`` (``#`` optional), asked of Slack unless known:
        ``(id, "")``, or ``("", why)`` — Slack's error, ``channel_not_found`` when the rooms
        the bot can list were read to the end without it."""
        if is_channel_id(room):
            return room, ""
        name = "#" + room.lstrip("#").lower()
        known = self._learnt.channel_id(name)
        if known:
            return known, ""
        if self._slack is None:
            return "", "no_slack"
        found, response = find_channel(self._slack, name)
        if found:
            self._learnt.learn_channel_id(name, found)
            return found, ""
        return "", response.error if not response.ok else "channel_not_found"

    def known(self, room: str) -> str:
        """The room's id as written or as learnt, without asking Slack; else the room."""
        return room if is_channel_id(room) else self._learnt.channel_id(room) or room
