"""Applies what a recorded decision changes (its row's :class:`~looproom.decide.changes.
Change`), undoes it when the relay parks the decision for good, ends a work item's
roster and move when it closes, and follows the collaborators the-loop itself granted or
revoked (read from its event log). A GitHub login (``@dana``) counts here only where
``people`` maps a member to it — a name alone authorizes nobody.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from looproom.decide import kinds, subjects
from looproom.decide.changes import Change
from looproom.events import COLLABORATOR_ADDED, COLLABORATOR_REMOVED, Event
from looproom.relay.decision import Decision
from looproom.room import event_types
from looproom.room.channel_moves import ChannelMoves
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
        """Why ``decision`` must not be recorded as the room stands, ``""`` when it may."""
        change = _change_of(decision)
        return change.refusal(self, decision) if change else ""

    def recorded(self, decision: Decision) -> None:
        """A decision was just stored: apply what it changes here."""
        change = _change_of(decision)
        if change:
            change.recorded(self, decision)

    def given_up(self, decision: Decision) -> None:
        """The relay parked a decision for good: what it granted here is taken back."""
        change = _change_of(decision)
        if change:
            change.given_up(self, decision)

    def listen(self, room: str, mode: str) -> bool:
        return self._listen(room, mode)

    def observe(self, event: Event, channel: str = "", ts: str = "", thread_ts: str = "") -> None:
        """An event the room consumed (after it was posted): a closure ends the work item;
        a collaborator the-loop granted or revoked (ticket, CLI) changes its roster here."""
        del channel, ts, thread_ts
        if event_types.of(event).ends_work_item:
            self.end(event.work_item)
        elif event.event_type in (COLLABORATOR_ADDED, COLLABORATOR_REMOVED):
            self._follow_roster(event)

    def _follow_roster(self, event: Event) -> None:
        member, login = event.detail.get("member", ""), event.detail.get("login", "")
        named = (f"slack:{member}" if member else "", f"@{login}" if login else "")
        members = self.members(tuple(t for t in named if t))
        if event.event_type == COLLABORATOR_ADDED:
            self.roster.add(event.work_item, members)
        else:
            self.roster.remove(event.work_item, members)

    def end(self, work_item: str) -> None:
        self.roster.end(work_item)
        self.moves.end(work_item)

    def members(self, tokens: tuple[str, ...]) -> set[str]:
        """The members ``tokens`` name: mentions, and logins ``people`` maps."""
        found = set(subjects.members_of(tokens))
        for login in subjects.logins_of(tokens):
            member = self._members_of_login.get(login.lower())
            if member:
                found.add(member)
        return found


def _change_of(decision: Decision) -> Change | None:
    row = kinds.BY_NAME.get(decision.kind)
    return row.change if row else None
