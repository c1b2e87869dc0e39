"""What a recorded decision changes in the room at once, and how a parked one is undone.

the-loop applies ``add-collaborator`` and ``add-channel`` when it reads them on the ticket;
the room applies them as soon as they are recorded, so the person just added may reply at
once and the next event goes to the new room. Each kind that changes anything names its
:class:`Change` in its row (:mod:`looproom.decide.kinds`); :class:`looproom.decide.effects.
Effects` only looks it up. A change that the relay later parks for good is undone, so the
room never lets in more than the-loop was told of (a removal is left applied).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from looproom.decide import subjects
from looproom.relay.decision import Decision
from looproom.room.channel_moves import ChannelMoves, shown
from looproom.room.roster import Roster


class Changed(Protocol):
    """The parts of the room a change touches."""

    roster: Roster
    moves: ChannelMoves

    def members(self, tokens: tuple[str, ...]) -> set[str]: ...
    def listen(self, room: str, mode: str) -> bool: ...
    def end(self, work_item: str) -> None: ...


def _nothing(changed: Changed, decision: Decision) -> None:
    del changed, decision


def _allowed(changed: Changed, decision: Decision) -> str:
    del changed, decision
    return ""


@dataclass(frozen=True)
class Change:
    """What recording a decision does here, what parking it for good undoes, and why it
    must not be recorded as the room stands (``""`` when it may)."""

    recorded: Callable[[Changed, Decision], None]
    given_up: Callable[[Changed, Decision], None] = _nothing
    refusal: Callable[[Changed, Decision], str] = _allowed


def _where(decision: Decision) -> tuple[str, str]:
    return decision.channel, decision.thread or decision.ts


def _grant(changed: Changed, decision: Decision) -> None:
    changed.roster.add(decision.work_item, changed.members(decision.subjects))


def _revoke(changed: Changed, decision: Decision) -> None:
    changed.roster.remove(decision.work_item, changed.members(decision.subjects))


def _move(changed: Changed, decision: Decision) -> None:
    room = subjects.slack_room(decision.subjects)
    if not room:
        return  # a Jira ticket's channel: the-loop's own, nothing moves in Slack
    changed.moves.move(decision.work_item, room, _where(decision))
    mode = subjects.listen_of(decision.subjects)
    if mode:
        changed.listen(room, mode)


def _unmove(changed: Changed, decision: Decision) -> None:
    room = subjects.slack_room(decision.subjects)
    if room:
        changed.moves.back(decision.work_item, room, ("", ""))


def _move_back(changed: Changed, decision: Decision) -> None:
    room = subjects.slack_room(decision.subjects)
    if room:
        changed.moves.back(decision.work_item, room, _where(decision))


def _one_work_item_a_room(changed: Changed, decision: Decision) -> str:
    """A room backs one work item at most, as in the-loop."""
    room = subjects.slack_room(decision.subjects)
    if not room:
        return ""
    other = changed.moves.backer(room, decision.work_item)
    if not other:
        return ""
    return (
        f"{shown(room)} is already the room of `{other}`, and a room backs one work item "
        f"— `remove-channel` there first. Nothing was recorded."
    )


def _end(changed: Changed, decision: Decision) -> None:
    changed.end(decision.work_item)


#: A collaborator may reply and add context at once; taken back if the-loop never hears.
GRANT = Change(_grant, given_up=_revoke)
REVOKE = Change(_revoke)
#: The work item's events go to the room named; taken back if the-loop never hears.
MOVE = Change(_move, given_up=_unmove, refusal=_one_work_item_a_room)
MOVE_BACK = Change(_move_back)
#: ``cleanup`` ends the roster and the move, as the-loop clears its own.
END = Change(_end)
