"""An event type is one row: the room's words and treatment of it come from that row alone."""

from __future__ import annotations

import pytest

from looproom.events import KNOWN_EVENTS, Event
from looproom.room import buttons, event_types, memory, voice
from looproom.room.event_types import GATE, EventType, Wording
from looproom.room.policy import Drop, Post, Told, decide, remember

ITEM = "github:acme/api#7"


@pytest.mark.parametrize("kind", KNOWN_EVENTS)
def test_every_event_in_the_loops_catalog_is_said_in_the_rooms_own_words(kind: str) -> None:
    said = voice.line(Event(kind, ITEM, detail={"node": "design", "phase": "design"}))
    assert kind not in said  # never the machine's own name, as an unknown kind is
    assert event_types.known(kind)


def test_a_kind_without_a_row_is_posted_and_named_as_sent() -> None:
    event = Event("custom.thing", ITEM)
    assert voice.line(event) == "💬 Update (custom.thing)"
    assert decide(event, Told()) == Post()


def test_one_new_row_makes_a_gate_of_a_new_event_type(monkeypatch: pytest.MonkeyPatch) -> None:
    row = EventType(
        "budget-approval-pending",
        Wording("💸", "{What} needs your approval", "💸 Waiting for your approval"),
        GATE,
        approval=True,
    )
    monkeypatch.setitem(event_types.EVENT_TYPES, row.name, row)  # type: ignore[index]
    gate = Event(row.name, ITEM, url="https://example.test/7", detail={"node": "design"})

    assert voice.line(gate) == "💸 The design needs your approval"
    assert voice.state(gate) == "💸 Waiting for your approval"
    # Answered with Approve / Request changes, and the room remembers it as the open gate.
    drawn = buttons.blocks_for(gate, interactive=True)
    pressed = {element["action_id"] for element in drawn[0]["elements"]}
    assert {buttons.APPROVE, buttons.CHANGES} <= pressed
    state = memory.observe(memory.ItemState(), gate, "C1", "1.0")
    assert state.gate is not None and state.gate.node == "design"
    # Posted once while it is open; a phase that moves on closes it, so it may ask again.
    told = remember(Told(), gate, decide(gate, Told()), "1.0")
    assert decide(gate, told) == Drop("dedupe")
    moved = Event("phase.completed", ITEM, detail={"phase": "design", "node": "design"})
    told = remember(told, moved, decide(moved, told), "")
    assert decide(gate, told) == Post()
