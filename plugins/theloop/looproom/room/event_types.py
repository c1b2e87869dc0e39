"""Every kind of moment the room shows, one row each: how it is said and how it is treated.

A row holds the voice's words for the kind (:mod:`looproom.room.voice` draws them), its
family in the delivery policy (:mod:`looproom.room.policy`), whether it opens a gate, and
the few behaviours the room's memory (:mod:`looproom.room.memory`), the buttons and the
outlets key on. Those modules read the row; none of them names an event type. A new event
type the room should say in its own words is one row here; a type without a row is still
posted, with :data:`UNKNOWN`'s words.

A *kind* is the event type, except for the-loop's mirrored ticket comment: the
phase-selection checklist and the confirmation that it was recorded are kinds of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from looproom.events import Event
from looproom.room import checklist as checklists

#: The policy's families.
GATE = "gate"  # a question a person answers at a node: posted with its controls
ASK = "ask"  # the agent's question in a session, perhaps with a default
SELECTION = "selection"  # the phase-selection checklist and its confirmation
PHASE = "phase"  # a node's lifecycle: started, progress, completed
ENDING = "ending"  # ends every open question of the work item
NOTICE = "notice"  # said, and nothing else follows from it

#: A phase's lifecycle steps.
STARTED, PROGRESS, COMPLETED = "started", "progress", "completed"

#: The confirmation the-loop posts on the ticket once a selection is frozen.
RECORDED_MARK = "**phase selection recorded**"


@dataclass(frozen=True)
class Wording:
    """How the room says one kind: the emoji, the line for a message, the line for the
    parent (``{what}`` = the node or phase in words; ``state`` ``""`` = the parent's state
    is left as it was)."""

    emoji: str
    says: str
    state: str = ""


@dataclass(frozen=True)
class EventType:
    """One kind of moment: its words and how the room treats it.

    ``approval``: answered with Approve / Request changes (the room's open gate).
    ``step``: where in its phase a lifecycle event is. ``final``: said once for good.
    ``done``: the "everything is through" message the close edits (``edits_done``).
    ``acknowledges``: the family whose message it answers under (a gate, the selection).
    ``mirror``: the-loop's copy of its own ticket comment — templated words, perhaps the
    operator's cheat-sheet or a gate restated. ``reads_pull``: names a pull request whose
    title and size GitHub can tell. ``ends_work_item``: the work item is over here (its
    roster and its room move end with it).
    """

    name: str
    wording: Wording
    family: str = NOTICE
    approval: bool = False
    step: str = ""
    final: bool = False
    done: bool = False
    edits_done: bool = False
    acknowledges: str = ""
    mirror: bool = False
    reads_pull: bool = False
    ends_work_item: bool = False

    @property
    def opens_gate(self) -> bool:
        """A question the room keeps open at its node until the phase moves on."""
        return self.family == GATE

    @property
    def opens_selection(self) -> bool:
        """The checklist itself (not its confirmation)."""
        return self.family == SELECTION and not self.acknowledges

    @property
    def said_once(self) -> bool:
        """A repeat is dropped while it is current (a gate until it closes)."""
        return self.opens_gate or self.step == STARTED or self.final

    @property
    def templated(self) -> bool:
        """The runtime's words, which the agent's own words for the same node make moot."""
        return self.family == PHASE or self.mirror


def _rows(*rows: EventType) -> Mapping[str, EventType]:
    return {row.name: row for row in rows}


_MIRROR = {"mirror": True}

#: Kind → its row. One emoji a moment: kickoff 🚀, question 🤔, artifact ready 📋,
#: locked ✅, progress 🔨, PR ready 👀, done 🎉, warning ⚠️.
EVENT_TYPES: Mapping[str, EventType] = _rows(
    EventType(
        "selection",
        Wording("🚀", "Which phases does this work item need?", "🚀 Choosing the phases"),
        SELECTION,
        **_MIRROR,
    ),
    EventType(
        "selection-recorded",
        Wording("✅", "The phase selection is locked in", "✅ Phases chosen"),
        SELECTION,
        acknowledges=SELECTION,
        **_MIRROR,
    ),
    EventType("standing.started", Wording("🚀", "I'm up and listening", "🚀 Listening")),
    EventType(
        "session.awaiting_input",
        Wording("🤔", "I have a question for you", "🤔 Waiting for your answer"),
        ASK,
    ),
    EventType(
        "decision-pending",
        Wording("🤔", "I need your decision on {what}", "🤔 Waiting for your decision"),
        GATE,
    ),
    EventType(
        "phase-approval-pending",
        Wording("📋", "{What} ready for your review", "📋 Waiting for your review of {what}"),
        GATE,
        approval=True,
    ),
    EventType(
        "security-sign-off-pending",
        Wording(
            "📋",
            "The security review is ready for your sign-off",
            "📋 Waiting for security sign-off",
        ),
        GATE,
        approval=True,
    ),
    EventType(
        "pr-review-pending",
        Wording(
            "👀",
            "The pull request is ready for your review",
            "👀 Waiting for your review of the PR",
        ),
        GATE,
        approval=True,
        reads_pull=True,
    ),
    EventType(
        "phase.started",
        Wording("🔨", "Working on {what}", "🔨 Working on {what}"),
        PHASE,
        step=STARTED,
    ),
    EventType(
        "phase.progress",
        Wording("🔨", "Working on {what}", "🔨 Working on {what}"),
        PHASE,
        step=PROGRESS,
    ),
    EventType(
        "phase.completed",
        Wording("✅", "Finished {what}", "✅ Finished {what}"),
        PHASE,
        step=COMPLETED,
    ),
    EventType(
        "gate.acknowledged", Wording("✅", "Got it — {what} is locked in"), acknowledges=GATE
    ),
    EventType(
        "conflict-escalated",
        Wording("⚠️", "I'm stuck and need a person to step in", "⚠️ Needs a person"),
        ENDING,
    ),
    EventType(
        "work-item-complete",
        Wording("🎉", "Done — everything is through", "🎉 Done"),
        ENDING,
        final=True,
        done=True,
    ),
    EventType(
        "work-item.closed",
        Wording("🎉", "Closed{by}", "🎉 Closed"),
        ENDING,
        final=True,
        edits_done=True,
        ends_work_item=True,
    ),
    EventType("comment.agent", Wording("💬", "I wrote on the ticket"), **_MIRROR),
    EventType("comment.human", Wording("💬", "New comment on the ticket")),
    EventType("control.rejected", Wording("⚠️", "That did not go through")),
)

#: A kind without a row: posted, named as sent (``{what}`` = the event type).
UNKNOWN = EventType("", Wording("💬", "Update ({what})"))


def kind_of(event: Event) -> str:
    """The row's name for ``event``: its type, or the selection checklist and its
    confirmation among the-loop's mirrored comments."""
    if EVENT_TYPES.get(event.event_type, UNKNOWN).mirror:
        if checklists.is_checklist(event.text):
            return "selection"
        if RECORDED_MARK in event.text:
            return "selection-recorded"
    return event.event_type


def of(event: Event) -> EventType:
    """``event``'s row (:data:`UNKNOWN` for a kind the table does not know)."""
    return EVENT_TYPES.get(kind_of(event), UNKNOWN)


def named(where: Callable[[EventType], bool]) -> tuple[str, ...]:
    """The kinds whose rows ``where`` holds for."""
    return tuple(name for name, row in EVENT_TYPES.items() if where(row))


def known(kind: str) -> bool:
    """Whether ``kind`` has a row of its own."""
    return kind in EVENT_TYPES
