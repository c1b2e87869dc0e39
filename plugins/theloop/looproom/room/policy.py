"""The room's delivery policy: does an event become a message, an edit, or nothing — and why.

the-loop tells its channels everything that happens; a person needs to hear far less. For
one work item that was a started and a completed line seconds apart for every phase, a
progress line per step, each gate announced three times (its pending message, its node's
lifecycle line, the mirrored "ready for review" comment) and the tmux cheat-sheet for
operators. This is the one place that decides, over an event and what the room was already
told of its work item (:class:`Told`), and it changes nothing: :mod:`looproom.room.slack_outlet`
applies the decision and records it. The ticket keeps the whole story either way: these
are rules for the room, not for what happened.

The rules, in the order they are consulted:

* **operator-docs** — the tmux cheat-sheet and shell blocks are for the ticket.
* **dedupe** — the same kind for the same node already delivered while it is current,
  such as a gate re-sent while it is still open.
* **session-wins** — once the agent spoke for a node (its summary or question), the
  templates for that node's moment say nothing more.
* **endgame** — the terminal node's lifecycle pair says nothing "done" does not, and the
  close after "done" edits that message.
* **gate-collapse** — once a gate's message is posted, its node's lifecycle and progress
  lines and the mirrored "ready for review" comment are noise.
* **ack-thread** — an acknowledgement of an answered gate replies under that gate.
* **progress-edit** — progress within a phase edits the phase's one message.
* **transition-collapse** — a completed phase edits its own message to say so; the next
  phase's start is the one new line of the transition.

Whatever no rule claims is posted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from looproom.events import Event
from looproom.room import event_types
from looproom.room.event_types import COMPLETED, PHASE, PROGRESS, STARTED

TERMINAL_NODES = ("complete", "done")
#: Who speaks for the agent itself, rather than the runtime's templates.
SESSION_SOURCES = ("session", "cli")

#: The session-started announcement's lead and its attach line: operator documentation.
_OPERATOR_LEAD = "started an interactive session for"
_TMUX = re.compile(r"tmux attach(?:-session)? -t")
#: "**requirements-approval** is ready for review", as the gate's hook writes it.
_READY = re.compile(r"\*{1,2}([A-Za-z0-9][\w-]*)\*{1,2}\s+is ready for review", re.IGNORECASE)


@dataclass(frozen=True)
class Told:
    """What the room was told of one work item: what the next decision reads.

    ``gates``: node → the message of its open gate. ``phases``: phase → its one message.
    ``delivered``: the ``kind|node`` keys still current (a gate until it closes, the
    terminal events for good). ``spoke_for``: nodes the agent itself spoke for.
    ``done``: the "done" message, once posted.
    """

    gates: Mapping[str, str] = field(default_factory=dict)
    phases: Mapping[str, str] = field(default_factory=dict)
    delivered: frozenset[str] = frozenset()
    spoke_for: frozenset[str] = frozenset()
    done: str = ""
    selection: str = ""


@dataclass(frozen=True)
class Post:
    """A new message in the work item's thread."""

    action: ClassVar[str] = "post"  # what `!theloop why` calls it
    rule: str = "post"


@dataclass(frozen=True)
class Drop:
    """Nothing in the room; ``rule`` says which rule claimed it."""

    action: ClassVar[str] = "drop"  # what `!theloop why` calls it
    rule: str


@dataclass(frozen=True)
class Edit:
    """Edit the message at ``ts`` to draw this event instead."""

    action: ClassVar[str] = "edit"  # what `!theloop why` calls it
    ts: str
    rule: str


@dataclass(frozen=True)
class InThread:
    """A reply under the message at ``ts``."""

    action: ClassVar[str] = "thread"  # what `!theloop why` calls it
    ts: str
    rule: str


Decision = Post | Drop | Edit | InThread


def node_of(event: Event) -> str:
    return str(event.detail.get("node") or event.detail.get("phase") or "").strip()


def phase_of(event: Event) -> str:
    return str(event.detail.get("phase") or event.detail.get("node") or "").strip()


def key_of(event: Event) -> str:
    """What dedupe compares: the kind and its node."""
    return f"{event_types.kind_of(event)}|{node_of(event)}"


def is_operator_doc(event: Event) -> bool:
    """The tmux cheat-sheet (its lead and its attach line), or anything flagged as such."""
    if str(event.detail.get("operatorDoc") or "").lower() in ("1", "true", "yes"):
        return True
    text = event.text
    return event_types.of(event).mirror and _OPERATOR_LEAD in text and bool(_TMUX.search(text))


def ready_for_review_node(event: Event) -> str:
    """The gate a mirrored "ready for review" comment restates, or ``""``."""
    if not event_types.of(event).mirror:
        return ""
    match = _READY.search(event.text)
    if match:
        return match[1]
    lowered = event.text.lower()
    if "ready for review" in lowered or "reply with an approval" in lowered:
        return node_of(event) or "*"
    return ""


def decide(event: Event, told: Told) -> Decision:
    """The room's decision for ``event``, given what it was ``told``. Pure."""
    for rule in _RULES:
        decision = rule(event, told)
        if decision is not None:
            return decision
    return Post()


def _operator_docs(event: Event, told: Told) -> Decision | None:
    del told
    return Drop("operator-docs") if is_operator_doc(event) else None


def _dedupe(event: Event, told: Told) -> Decision | None:
    if event_types.of(event).said_once:
        return Drop("dedupe") if key_of(event) in told.delivered else None
    return None


def _session_wins(event: Event, told: Told) -> Decision | None:
    if event.source in SESSION_SOURCES:
        return None  # the agent's own words are the ones that win
    if event_types.of(event).templated and node_of(event) and node_of(event) in told.spoke_for:
        return Drop("session-wins")
    return None


def _flagged_terminal(event: Event) -> bool:
    """the-loop's own "the room should hear this completion" flag."""
    return str(event.detail.get("terminal") or "").lower() in ("1", "true", "yes")


def _endgame(event: Event, told: Told) -> Decision | None:
    row = event_types.of(event)
    if row.family == PHASE and not _flagged_terminal(event):
        if node_of(event) in TERMINAL_NODES or phase_of(event) in TERMINAL_NODES:
            return Drop("endgame")
        if told.done:
            return Drop("endgame")
    if row.edits_done and told.done:
        return Edit(told.done, "endgame")
    return None


def _gate_collapse(event: Event, told: Told) -> Decision | None:
    step = event_types.of(event).step
    if step in (STARTED, PROGRESS) and told.gates.get(node_of(event)):
        return Drop("gate-collapse")
    # A phase that starts by waiting on a person is announced by its question (the
    # checklist, the gate): "started, waiting on a person" adds nothing to it.
    if step == STARTED and event.detail.get("actor") == "human":
        return Drop("gate-collapse")
    named = ready_for_review_node(event)
    if named and (told.gates.get(named) or (named == "*" and told.gates)):
        return Drop("gate-collapse")
    return None


def _ack_thread(event: Event, told: Told) -> Decision | None:
    answers = event_types.of(event).acknowledges
    acked = answers == event_types.GATE or bool(event.detail.get("ack"))
    gate = told.gates.get(node_of(event)) if acked else ""
    if gate:
        return InThread(gate, "ack-thread")
    if answers == event_types.SELECTION and told.selection:
        return InThread(told.selection, "ack-thread")
    return None


def _progress_edit(event: Event, told: Told) -> Decision | None:
    progress = event_types.of(event).step == PROGRESS
    if not progress and not event.event_type.endswith(".progress"):
        return None
    ts = told.phases.get(phase_of(event))
    return Edit(ts, "progress-edit") if ts else Post("progress-open")


def _transition(event: Event, told: Told) -> Decision | None:
    if event_types.of(event).step != COMPLETED or _flagged_terminal(event):
        return None
    ts = told.phases.get(phase_of(event))
    return Edit(ts, "transition-collapse") if ts else Drop("transition-collapse")


_RULES = (
    _operator_docs,
    _dedupe,
    _session_wins,
    _endgame,
    _gate_collapse,
    _ack_thread,
    _progress_edit,
    _transition,
)


def _opens_gate(row: event_types.EventType) -> bool:
    return row.opens_gate


def _starts(row: event_types.EventType) -> bool:
    return row.step == STARTED


def remember(told: Told, event: Event, decision: Decision, ts: str = "") -> Told:
    """What the room was told once ``decision`` was carried out (``ts``: the message it
    posted or edited). Dropped events still move the story on: a completed phase closes
    its gate, so a later gate at the same node is a new question, not a repeat."""
    gates, phases = dict(told.gates), dict(told.phases)
    delivered, spoke_for = set(told.delivered), set(told.spoke_for)
    row, node, phase = event_types.of(event), node_of(event), phase_of(event)
    if row.family == PHASE and node:
        moved_on = row.step == COMPLETED
        for gate in [g for g in gates if moved_on or g != node]:
            gates.pop(gate)
            delivered -= {f"{kind}|{gate}" for kind in event_types.named(_opens_gate)}
        if moved_on:
            phases.pop(phase, None)
            delivered -= {f"{kind}|{phase}" for kind in event_types.named(_starts)}
    if row.family == event_types.ENDING:
        gates.clear()
    posted = not isinstance(decision, Drop) and bool(ts)
    if posted and row.opens_gate and node:
        gates[node] = ts
    if posted and row.step in (STARTED, PROGRESS) and phase:
        phases.setdefault(phase, ts)
    if not isinstance(decision, Drop) and row.said_once:
        delivered.add(key_of(event))
    if event.source in SESSION_SOURCES and node:
        spoke_for.add(node)
    return Told(
        gates=gates,
        phases=phases,
        delivered=frozenset(delivered),
        spoke_for=frozenset(spoke_for),
        done=ts if posted and row.done else told.done,
        selection=ts if posted and row.opens_selection else told.selection,
    )
