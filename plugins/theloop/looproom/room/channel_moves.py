"""A work item's collaboration channel: ``add-channel #room`` moves its conversation there.

A decider's ``add-channel`` binds the work item to that room (the binding book's binding,
as an admin's ``bind`` does): its next event opens a parent there, and decisions typed
there — in that thread, or plainly in a room bound to that one work item — count. The
old thread is told where the conversation went. ``remove-channel`` and the work item's
end (closure, ``cleanup``) undo the move, but only a move made here: an admin's binding
is the admin's. The moves survive restarts in the plugin's storage, beside the bindings.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for, stored_mapping
from looproom.room.routing import ROOM_BINDING_CAP, BindingBook, BindingError

_KEY = "rooms.moves"

#: ``say(channel, thread_ts, text)``: a line in a thread, said for everyone.
Say = Callable[[str, str, str], None]


def shown(room: str) -> str:
    """A room as Slack links it in a message: ``<#C…>`` for an id, else its name."""
    return f"<#{room}>" if room[:1] in ("C", "G") and not room.startswith("#") else room


class ChannelMoves:
    """Work item → the room its conversation was moved to; one per activation."""

    def __init__(
        self,
        store: MutableMapping[str, Any],
        book: BindingBook,
        say: Say,
        id_of: Callable[[str], str] = lambda room: room,
    ) -> None:
        """``id_of(room)`` is a room's id where it is known (a name as learnt), so a room
        named one way and typed in another is the same room."""
        self._store, self._book, self._say, self._id_of = store, book, say, id_of
        self._lock = lock_for(store)

    def move(self, work_item: str, room: str, said_in: tuple[str, str]) -> None:
        """Send ``work_item``'s events to ``room``; tell the thread it was said in."""
        try:
            self._book.bind_room(work_item, room)
        except BindingError as exc:
            self._tell(said_in, f"⚠️ I could not move this work item to {shown(room)}: {exc}.")
            return
        with self._lock:
            moves = self._all()
            self._store[_KEY] = touched(moves, work_item, room, ROOM_BINDING_CAP)
        self._tell(
            said_in,
            f"➡️ Moved to {shown(room)}: this work item's updates go there from the next one, "
            "and decisions typed there count.",
        )

    def back(self, work_item: str, room: str, said_in: tuple[str, str]) -> bool:
        """Undo the move to ``room`` (any move, when ``room`` is ``""``); False when there
        was none of ours."""
        with self._lock:
            moves = self._all()
            moved = moves.get(work_item)
            if moved is None or (room and not self._same(moved, room)):
                return False
            del moves[work_item]
            self._store[_KEY] = moves
        if self._book.room_bindings().get(work_item) == moved:
            self._book.unbind_room(work_item)
        self._tell(said_in, f"⬅️ {shown(moved)} is no longer this work item's room.")
        return True

    def end(self, work_item: str) -> bool:
        """The work item ended: its move is undone quietly."""
        return self.back(work_item, "", ("", ""))

    def backer(self, room: str, other_than: str) -> str:
        """The work item other than ``other_than`` whose room ``room`` is (moved there, or
        bound by an admin); ``""`` when none: a room backs one work item at most."""
        for work_item, bound in self._book.room_bindings().items():
            if work_item != other_than and self._same(bound, room):
                return work_item
        return ""

    def moved(self) -> dict[str, str]:
        """Every move in force, work item → room."""
        return self._all()

    def _same(self, one: str, other: str) -> bool:
        return one.lower() == other.lower() or self._id_of(one) == self._id_of(other)

    def _tell(self, said_in: tuple[str, str], text: str) -> None:
        channel, thread = said_in
        if channel:
            self._say(channel, thread, text)

    def _all(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in stored_mapping(self._store, _KEY).items()}
