"""Who may read about a work item: a member of a room it lives in, or an admin.

``!theloop records``, ``!theloop why`` and ``/the-loop status`` show what a work item's
rooms show — the records quoted from its ticket (read with the operator's token), its
rationale, what it waits on — so they answer only someone who could read it in Slack: a
member of a room the work item has a thread in or is bound to (Slack's own
``conversations.members``), or an admin. Where the answer is said matters too: an answer
said in a room is read by everyone there, so it is said only in a DM with the bot or in a
room the work item lives in. When Slack cannot say who is in a room, nobody but an admin
is answered (fail closed). A plain chat (the Text console) has one room and no
membership to ask: everyone in it may read.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from looproom import people
from looproom.room.routing import BindingBook
from looproom.slack.text import defang

#: A room's members as Slack says now; ``None`` when it cannot say.
Members = Callable[[str], "frozenset[str] | None"]


@dataclass(frozen=True)
class Asker:
    """Who asks, and where the answer is said: ``channel`` ``""`` when only the asker
    sees it (an ephemeral answer)."""

    member: str
    channel: str = ""


class Readers:
    """The rooms each work item lives in, and whether an asker is in one of them."""

    def __init__(
        self,
        book: BindingBook,
        room_id: Callable[[str], str],
        members: Members | None,
        admins: Iterable[str] = (),
    ) -> None:
        """``room_id`` turns a bound room's name into its id; ``members`` is ``None``
        without Slack; ``admins`` as the operator wrote them (ids, mentions, globs)."""
        self._book, self._room_id, self._members = book, room_id, members
        self._admins = tuple(people.admin_id(a) for a in admins)

    def rooms_of(self, work_item: str) -> set[str]:
        """The ids of the rooms ``work_item`` has a thread in or is bound to."""
        rooms = {thread.channel for thread in self._book.threads() if thread.work_item == work_item}
        bound = self._book.room_bindings().get(work_item)
        if bound:
            rooms.add(self._room_id(bound))
        return {room for room in rooms if room}

    def is_admin(self, member: str) -> bool:
        """Errbot's own rule: the member id matches an admin as written (globs allowed)."""
        return bool(member) and any(fnmatch.fnmatchcase(member, a) for a in self._admins)

    def refusal(self, work_item: str, asker: Asker) -> str:
        """Why ``asker`` is not shown ``work_item`` here, ``""`` when they are."""
        if self._members is None:
            return ""
        rooms = self.rooms_of(work_item)
        shown = f"`{defang(work_item)}`"
        if asker.channel and not asker.channel.startswith("D") and asker.channel not in rooms:
            return (
                f"What the room knows of {shown} is said only in a DM with the bot or in a "
                "room it lives in — everyone here would read it. Ask me in a DM."
            )
        if self.is_admin(asker.member):
            return ""
        unknown = False
        for room in sorted(rooms):
            members = self._members(room)
            unknown = unknown or members is None
            if members is not None and asker.member in members:
                return ""
        if unknown:
            return f"Slack cannot say now who may read {shown}, so nothing is shown; try again."
        return (
            f"{shown} is shown only to members of a room it lives in, and you are in none "
            "of them — so nothing is shown. Ask someone there, or an admin."
        )

    def readable(self, asker: Asker) -> Callable[[str], bool]:
        """Whether each work item may be shown to ``asker``, each room asked of Slack once."""
        cache: dict[str, frozenset[str] | None] = {}
        members = self._members
        if members is None:
            return lambda _ref: True

        def once(room: str) -> frozenset[str] | None:
            if room not in cache:
                cache[room] = members(room)
            return cache[room]

        remembered = Readers(self._book, self._room_id, once, self._admins)
        return lambda ref: not remembered.refusal(ref, asker)
