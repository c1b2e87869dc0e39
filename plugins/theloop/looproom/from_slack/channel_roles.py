"""The rooms as the decision side sees them: what a room stands for, and which are read.

A message says only its channel's id; the settings and the bindings name rooms. Here the
one is matched to the other: the work item and repository a room stands for (so a command
there need not name them), the kickoff a room runs, the rooms whose top-level messages
the catch-up reads, and the link to a work item's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from looproom import workitem
from looproom.decide import talk
from looproom.decide.desk import room_facts
from looproom.room.routing import BindingBook
from looproom.settings import KickoffSettings
from looproom.slack.channels import ChannelIds


class Places:
    """One activation's rooms: the configured ones, the bound ones, the listening ones."""

    def __init__(
        self,
        book: BindingBook,
        ids: ChannelIds,
        *,
        default_room: str,
        rooms: Sequence[tuple[str, str]],
        kickoffs: Sequence[tuple[str, KickoffSettings]],
        listening: Callable[[], list[str]] = list,
    ) -> None:
        """``rooms``: (repository or work item, room) as configured; ``listening``: the rooms
        an admin switched to hear every message."""
        self._book, self.ids = book, ids
        self._default, self._rooms, self._kickoffs = default_room, rooms, kickoffs
        self._listening = listening

    def facts(self, channel: str) -> tuple[str, str]:
        """(the one work item bound to ``channel``, its one repository), ``""`` for none."""
        return room_facts(channel, self._book.room_bindings(), self._rooms, self.ids.known)

    def command_facts(self, channel: str) -> tuple[str, str]:
        """:meth:`facts`, for a command typed in ``channel`` that may name ``#7`` alone
        (``/the-loop``): without a repository of its own, the room's kickoff repository
        when it has one, else the default room's — as the-loop resolves ``#N`` against its
        kickoff repository. A kickoff with several names none: the command must say."""
        item, repository = self.facts(channel)
        if repository:
            return item, repository
        kickoff = self.kickoff_for(channel) or self.kickoff_for("")
        one = kickoff.repos[0] if kickoff is not None and len(kickoff.repos) == 1 else ""
        return item, one if workitem.is_repository(one) else ""

    def kickoff_for(self, channel: str) -> KickoffSettings | None:
        """The kickoff of the room ``channel`` is (``""``: the default room's)."""
        for room, kickoff in self._kickoffs:
            if not channel and room == self._default:
                return kickoff
            if channel and self.ids.of(room) == channel:
                return kickoff
        return None

    def read(self) -> list[str]:
        """The rooms whose top-level messages are for the bot too: kickoff rooms, rooms
        bound to a work item, and rooms that listen to everything."""
        rooms = [room for room, _kickoff in self._kickoffs]
        rooms += list(self._book.room_bindings().values()) + self._listening()
        return [found for found in map(self.ids.of, rooms) if found]

    def thread_link(self, work_item: str) -> str:
        """A link to the room's thread for ``work_item`` (a standing session's), ``""``."""
        found = [t for t in self._book.recent_threads() if workitem.same(t.work_item, work_item)]
        return talk.thread_link(found[0].channel, found[0].ts) if found else ""
