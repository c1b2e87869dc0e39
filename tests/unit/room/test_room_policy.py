"""The room's delivery policy, rule by rule, with no Slack: what becomes a message."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.events import Event
from looproom.room.policy import Drop, Edit, InThread, Post, Told, decide, remember
from tests.support import messages, timeline

ITEM = "github:acme/api#7"


def wire(stem: str, **fields: Any) -> Event:
    return Event.from_wire(messages.event(stem, **fields))


def lifecycle(kind: str, phase: str, node: str = "", **detail: str) -> Event:
    return Event(kind, ITEM, detail={"phase": phase, "node": node or phase, **detail})


def told_after(*events: Event) -> Told:
    """What the room was told after ``events``, each decided and carried out in turn."""
    told = Told()
    for n, event in enumerate(events):
        decision = decide(event, told)
        told = remember(told, event, decision, "" if isinstance(decision, Drop) else f"{n}.0")
    return told


def test_anything_no_rule_claims_is_posted() -> None:
    assert decide(wire("15"), Told()) == Post()
    assert decide(wire("12"), Told()) == Post()


def test_operator_docs_the_tmux_cheat_sheet_stays_on_the_ticket() -> None:
    (tmux,) = [e for e in timeline.work_item() if e["id"] == "tl-tmux"]
    assert decide(Event.from_wire(tmux), Told()) == Drop("operator-docs")
    flagged = Event("comment.agent", ITEM, text="notes", detail={"operatorDoc": "true"})
    assert decide(flagged, Told()) == Drop("operator-docs")
    # A comment that only mentions tmux is a comment.
    assert decide(Event("comment.agent", ITEM, text="I use tmux attach -t x"), Told()) == Post()


def test_dedupe_a_gate_re_sent_while_open_is_posted_once() -> None:
    gate = wire("06")
    told = told_after(gate)
    assert decide(wire("06", id="resent"), told) == Drop("dedupe")


def test_dedupe_ends_when_the_gate_closes_so_a_gate_asked_again_is_posted() -> None:
    gate = wire("06")
    back = lifecycle("phase.started", "requirements-definition")  # changes were requested
    told = told_after(gate, back, lifecycle("phase.progress", "requirements-definition", "x"))
    assert decide(wire("06", id="again"), told) == Post()


def test_session_wins_the_agents_words_stand_for_its_node() -> None:
    said = Event("comment.agent", ITEM, text="Design ready: I chose X", source="session")
    said = Event(**{**said.__dict__, "detail": {"node": "design"}})
    told = told_after(said)
    assert decide(lifecycle("phase.started", "design"), told) == Drop("session-wins")
    assert decide(wire("06"), told) == Post()  # a gate is never a template to drop


def test_endgame_the_terminal_nodes_lifecycle_says_nothing_done_does_not() -> None:
    assert decide(lifecycle("phase.started", "complete"), Told()) == Drop("endgame")
    assert decide(lifecycle("phase.completed", "complete"), Told()) == Drop("endgame")
    flagged = lifecycle("phase.completed", "complete", terminal="true")
    assert not isinstance(decide(flagged, Told()), Drop)


def test_endgame_the_close_after_done_edits_the_done_message() -> None:
    told = told_after(wire("13"))
    assert decide(wire("14"), told) == Edit("0.0", "endgame")
    assert decide(wire("14"), Told()) == Post()  # closed without being done: said


def test_endgame_a_phase_heard_after_done_says_nothing() -> None:
    # A late lifecycle line (a retried hook, a re-sent event) would reopen a finished story.
    late = [
        lifecycle("phase.started", "pr-review"),
        lifecycle("phase.progress", "pr-review", "critic-review"),
        lifecycle("phase.completed", "pr-review"),
    ]
    done = told_after(wire("13"))
    assert [decide(event, done) for event in late] == [Drop("endgame")] * 3
    # The same lines before the work item is done are heard.
    assert decide(late[0], Told()) == Post()
    assert decide(late[1], Told()) == Post("progress-open")


def test_gate_collapse_the_gate_message_is_its_one_announcement() -> None:
    told = told_after(wire("06"))
    at_gate = lifecycle("phase.progress", "requirements-definition", "requirements-approval")
    assert decide(at_gate, told) == Drop("gate-collapse")
    (ready,) = [e for e in timeline.work_item() if e["id"] == "tl-requirements-ready"]
    assert decide(Event.from_wire(ready), told) == Drop("gate-collapse")
    # The same comment for a gate that is not open is news.
    assert decide(Event.from_wire(ready), Told()) == Post()


def test_gate_collapse_a_phase_that_starts_waiting_on_a_person_is_announced_by_its_question() -> (
    None
):
    assert decide(wire("03"), Told()) == Drop("gate-collapse")
    assert decide(wire("04"), Told()) == Post()


def test_ack_thread_an_acknowledgement_replies_under_its_gate() -> None:
    told = told_after(wire("06"))
    ack = Event("gate.acknowledged", ITEM, detail={"node": "requirements-approval"})
    assert decide(ack, told) == InThread("0.0", "ack-thread")
    told = told_after(wire("01"))
    assert decide(wire("02"), told) == InThread("0.0", "ack-thread")


def test_progress_edit_a_phases_progress_edits_its_one_message() -> None:
    started = lifecycle("phase.started", "design")
    told = told_after(started)
    assert decide(lifecycle("phase.progress", "design", "design-review"), told) == Edit(
        "0.0", "progress-edit"
    )
    assert decide(lifecycle("phase.progress", "tasks", "t1"), Told()) == Post("progress-open")


def test_transition_collapse_a_completed_phase_edits_its_message_and_the_next_posts() -> None:
    told = told_after(lifecycle("phase.started", "design"))
    assert decide(lifecycle("phase.completed", "design"), told) == Edit(
        "0.0", "transition-collapse"
    )
    assert decide(lifecycle("phase.completed", "design"), Told()) == Drop("transition-collapse")
    after = told_after(lifecycle("phase.started", "design"), lifecycle("phase.completed", "design"))
    assert decide(lifecycle("phase.started", "tasks"), after) == Post()


def test_every_question_of_the_timeline_is_posted_and_each_phase_is_said() -> None:
    told, shown, edits = Told(), [], []
    for n, raw in enumerate(timeline.work_item()):
        event = Event.from_wire(raw)
        decision = decide(event, told)
        if isinstance(decision, (Post, InThread)):
            shown.append(raw["id"])
        if isinstance(decision, Edit):
            edits.append(raw["id"])
        told = remember(told, event, decision, "" if isinstance(decision, Drop) else f"{n}.0")
    assert set(timeline.GATES) <= set(shown)
    assert "tl-requirements-gate-again" not in shown and "tl-tmux" not in shown
    started = {f"tl-{p}-started" for p in ("requirements", "design", "implementation", "review")}
    assert started <= set(shown)
    assert {"tl-requirements-done", "tl-design-done", "tl-closed"} <= set(edits)


KINDS = st.sampled_from(
    [
        "phase.started",
        "phase.progress",
        "phase.completed",
        "phase-approval-pending",
        "pr-review-pending",
        "decision-pending",
        "session.awaiting_input",
        "comment.agent",
        "work-item-complete",
        "work-item.closed",
        "custom.thing",
    ]
)
NODES = st.sampled_from(["", "design", "design-approval", "complete", "implementation"])


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(st.lists(st.tuples(KINDS, NODES, st.text(max_size=30)), max_size=30))
def test_a_question_is_never_dropped_whatever_came_before(
    history: list[tuple[str, str, str]],
) -> None:
    told = Told()
    for n, (kind, node, text) in enumerate(history):
        event = Event(kind, ITEM, text=text, detail={"node": node, "phase": node})
        decision = decide(event, told)
        told = remember(told, event, decision, "" if isinstance(decision, Drop) else f"{n}.0")
    question = Event("session.awaiting_input", ITEM, text="Which one?")
    assert not isinstance(decide(question, told), Drop)
