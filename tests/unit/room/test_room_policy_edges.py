"""The delivery policy at its edges: the flags the-loop sets, a detail naming only a phase or
only a node, the "ready for review" mirror's forms, and what the room remembers after each
decision (docs/rooms.md, "What the room says"). Each test here fails on a one-token slip in
``looproom/room/policy.py`` that the rule-by-rule tests let through."""

from __future__ import annotations

from typing import Any

import pytest

from looproom.events import Event
from looproom.room.policy import Drop, Edit, InThread, Post, Told, decide, remember
from tests.support import messages

ITEM = "github:acme/api#7"
GATE_NODE = "requirements-approval"  # the gate message 06 opens


def wire(stem: str, **fields: Any) -> Event:
    return Event.from_wire(messages.event(stem, **fields))


def told_after(*events: Event) -> Told:
    """What the room was told after ``events``, each decided and carried out in turn."""
    told = Told()
    for n, event in enumerate(events):
        decision = decide(event, told)
        told = remember(told, event, decision, "" if isinstance(decision, Drop) else f"{n}.0")
    return told


def mirror(text: str, **detail: Any) -> Event:
    """the-loop's copy of its own ticket comment."""
    return Event("comment.agent", ITEM, text=text, detail=detail)


# -- the flags the-loop sets in an event's detail -------------------------------------------


@pytest.mark.parametrize("flag", [True, "1", "true", "True", "yes", "YES"])
def test_an_operator_doc_or_terminal_flag_is_read_in_each_form_it_may_come(flag: Any) -> None:
    doc = Event("comment.agent", ITEM, text="notes", detail={"operatorDoc": flag})
    assert decide(doc, Told()) == Drop("operator-docs")
    done = Event("phase.completed", ITEM, detail={"node": "complete", "terminal": flag})
    assert not isinstance(decide(done, Told()), Drop)  # the room should hear this one


@pytest.mark.parametrize("flag", [False, "", "0", "no", "false", None])
def test_a_flag_that_says_no_is_no_flag(flag: Any) -> None:
    doc = Event("comment.agent", ITEM, text="notes", detail={"operatorDoc": flag})
    assert decide(doc, Told()) == Post()
    done = Event("phase.completed", ITEM, detail={"node": "complete", "terminal": flag})
    assert decide(done, Told()) == Drop("endgame")


def test_the_terminal_node_is_dropped_whichever_phase_it_sits_in() -> None:
    late = Event("phase.started", ITEM, detail={"phase": "delivery", "node": "complete"})
    assert decide(late, Told()) == Drop("endgame")


# -- a detail naming only a phase, or only a node --------------------------------------------


def test_a_line_naming_only_its_phase_is_at_the_node_of_that_name() -> None:
    # At the open gate's node, named as a phase only, a progress line is still the gate's noise.
    progress = Event("phase.progress", ITEM, detail={"phase": GATE_NODE})
    assert decide(progress, told_after(wire("06"))) == Drop("gate-collapse")


def test_lines_naming_only_their_node_keep_each_phase_to_its_own_message() -> None:
    told = told_after(Event("phase.started", ITEM, detail={"node": "design"}))
    same = Event("phase.progress", ITEM, detail={"node": "design"})
    other = Event("phase.progress", ITEM, detail={"node": "tasks"})
    assert decide(same, told) == Edit("0.0", "progress-edit")
    assert decide(other, told) == Post("progress-open")


def test_progress_naming_no_phase_is_never_stitched_to_another() -> None:
    nowhere = Event("phase.progress", ITEM)
    assert decide(nowhere, told_after(nowhere)) == Post("progress-open")


def test_a_progress_kind_the_table_does_not_know_edits_its_phases_message() -> None:
    told = told_after(Event("phase.started", ITEM, detail={"phase": "design"}))
    step = Event("design.progress", ITEM, detail={"phase": "design"})
    assert decide(step, told) == Edit("0.0", "progress-edit")


# -- the "ready for review" mirror ------------------------------------------------------------


def test_a_ready_for_review_mirror_naming_another_gate_is_news() -> None:
    other = mirror("🤖 _the-loop_ — **design-approval** is ready for review.")
    assert decide(other, told_after(wire("06"))) == Post()


@pytest.mark.parametrize(
    "text",
    [
        "The requirements are Ready For Review.",
        "Please REPLY WITH AN APPROVAL or request changes.",
    ],
)
def test_a_ready_for_review_mirror_naming_no_node_restates_the_open_gate(text: str) -> None:
    assert decide(mirror(text), told_after(wire("06"))) == Drop("gate-collapse")
    assert decide(mirror(text), Told()) == Post()  # no gate is open: it is news


def test_a_ready_for_review_mirror_carrying_a_node_is_that_nodes() -> None:
    told = told_after(wire("06"))
    assert decide(mirror("ready for review", node=GATE_NODE), told) == Drop("gate-collapse")
    assert decide(mirror("ready for review", node="design-approval"), told) == Post()


# -- acknowledgements ------------------------------------------------------------------------


def test_an_event_flagged_ack_replies_under_its_nodes_gate() -> None:
    said = Event("comment.agent", ITEM, text="Recorded.", detail={"node": GATE_NODE, "ack": True})
    assert decide(said, told_after(wire("06"))) == InThread("0.0", "ack-thread")


# -- what the room remembers ------------------------------------------------------------------

ACK = Event("gate.acknowledged", ITEM, detail={"node": GATE_NODE})


def test_a_comment_at_another_node_leaves_the_gate_open_and_an_ending_closes_it() -> None:
    elsewhere = Event("comment.agent", ITEM, text="A note.", detail={"node": "design"})
    assert decide(ACK, told_after(wire("06"), elsewhere)) == InThread("0.0", "ack-thread")
    assert decide(ACK, told_after(wire("06"), wire("12"))) == Post()


def test_a_phase_started_again_after_it_completed_is_heard() -> None:
    design = {"phase": "design", "node": "design"}
    started = Event("phase.started", ITEM, detail=design)
    completed = Event("phase.completed", ITEM, detail=design)
    told = told_after(started, completed)
    assert decide(started, told) == Post()
    # … and its progress opens a message of its own, not the finished one's.
    assert decide(Event("phase.progress", ITEM, detail=design), told) == Post("progress-open")


def test_a_dropped_start_is_not_remembered_as_said() -> None:
    # 03 starts by waiting on a person: dropped for its question. Said later without the
    # person, it is heard once, and the progress after it edits that message.
    told = told_after(wire("03"))
    started = Event("phase.started", ITEM, detail={"phase": "phase-selection"})
    assert decide(started, told) == Post()
    told = told_after(wire("03"), started)
    step = Event("phase.progress", ITEM, detail={"phase": "phase-selection", "node": "x"})
    assert decide(step, told) == Edit("1.0", "progress-edit")


def test_a_gate_naming_a_phase_is_not_that_phases_progress_message() -> None:
    gate = Event("decision-pending", ITEM, detail={"node": "spec-quiz", "phase": "design"})
    step = Event("phase.progress", ITEM, detail={"phase": "design", "node": "critic"})
    assert decide(step, told_after(gate)) == Post("progress-open")


def test_nothing_is_pointed_at_without_a_message_or_for_a_drop() -> None:
    gate = wire("06")
    for told in (remember(Told(), gate, Post()), remember(Told(), gate, Drop("x"), "5.0")):
        assert told.gates == {} and told.phases == {}
        assert decide(ACK, told) == Post()


def test_the_checklists_confirmation_replies_under_the_checklist_not_the_latest_post() -> None:
    told = told_after(wire("01"), wire("15"))
    assert decide(wire("02"), told) == InThread("0.0", "ack-thread")
