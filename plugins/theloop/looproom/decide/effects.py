"""What a recorded collaborator or channel command changes in the room, at once, and what
a work item's end takes away.

the-loop applies ``add-collaborator`` and ``add-channel`` when it reads them on the ticket;
the room applies them as soon as they are recorded, so the person just added may reply at
once and the next event goes to the new room. A GitHub login (``@dana``) counts here only
where ``people`` maps a member to it — a name alone authorizes nobody. Closure and
``cleanup`` end the roster and the move, as the-loop clears its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from looproom.decide import kinds, subjects
from looproom.events import Event
from looproom.relay.decision import Decision
from looproom.room import event_types
from looproom.room.channel_moves import ChannelMoves, shown
from looproom.room.roster import Roster


class Effects:
    """Applies recorded decisions to the roster and the moves; ends both with the item."""

    def __init__(
        self,
        roster: Roster,
        moves: ChannelMoves,
        people: Mapping[str, str] | None = None,
        *,
        listen: Callable[[str, str], bool] = lambda _room, _mode: True,
    ) -> None:
        """``listen(room, mode)`` switches what a room hears (``add-channel --listen``)."""
        self.roster, self.moves, self._listen = roster, moves, listen
        self._members_of_login = {login.lower(): m for m, login in (people or {}).items()}

    def refusal(self, decision: Decision) -> str:
        """Why ``decision`` must not be recorded as the room stands, ``""`` when it may:
        a room backs one work item at most, as in the-loop."""
        if decision.kind != kinds.ADD_CHANNEL or not decision.subjects:
            return ""
        room = subjects.room_of(decision.subjects[0])
        other = self.moves.backer(room, decision.work_item)
        if not other:
            return ""
        return (
            f"{shown(room)} is already the room of `{other}`, and a room backs one work item "
            f"— `remove-channel` there first. Nothing was recorded."
        )

    def recorded(self, decision: Decision) -> None:
        """A decision was just stored: apply what it changes here."""
        item, where = decision.work_item, (decision.channel, decision.thread or decision.ts)
        if decision.kind == kinds.ADD_COLLABORATOR:
            self.roster.add(item, self._members(decision.subjects))
        elif decision.kind == kinds.REMOVE_COLLABORATOR:
            self.roster.remove(item, self._members(decision.subjects))
        elif decision.kind == kinds.ADD_CHANNEL and decision.subjects:
            room = subjects.room_of(decision.subjects[0])
            self.moves.move(item, room, where)
            mode = subjects.listen_of(decision.subjects)
            if mode:
                self._listen(room, mode)
        elif decision.kind == kinds.REMOVE_CHANNEL and decision.subjects:
            self.moves.back(item, subjects.room_of(decision.subjects[0]), where)
        elif decision.kind == kinds.CLEANUP:
            self.end(item)

    def given_up(self, decision: Decision) -> None:
        """The relay parked a decision for good: what it granted here is taken back, so the
        room never lets in more than the-loop was told of (a removal is left applied)."""
        item = decision.work_item
        if decision.kind == kinds.ADD_COLLABORATOR:
            self.roster.remove(item, self._members(decision.subjects))
        elif decision.kind == kinds.ADD_CHANNEL and decision.subjects:
            self.moves.back(item, subjects.room_of(decision.subjects[0]), ("", ""))

    def observe(self, event: Event, channel: str = "", ts: str = "", thread_ts: str = "") -> None:
        """An event the room consumed (after it was posted): a closure ends the work item."""
        del channel, ts, thread_ts
        if event_types.of(event).ends_work_item:
            self.end(event.work_item)

    def end(self, work_item: str) -> None:
        self.roster.end(work_item)
        self.moves.end(work_item)

    def _members(self, tokens: tuple[str, ...]) -> set[str]:
        found = set(subjects.members_of(tokens))
        for login in subjects.logins_of(tokens):
            member = self._members_of_login.get(login.lower())
            if member:
                found.add(member)
        return found
