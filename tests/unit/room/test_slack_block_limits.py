"""Slack's Block Kit limits, each at its edge and one past it: a message Slack would refuse
(``invalid_blocks``) is a message the room never sees. The figures are Slack's own (Block Kit
reference: a checkboxes element holds 10 options, an option's description 75 characters, a
button's value 2000), written out here rather than read from ``looproom/room/buttons.py``."""

from __future__ import annotations

from typing import Any

import pytest

from looproom.events import Event
from looproom.room import buttons
from looproom.room.checklist import Checklist, Row

ITEM = "github:acme/api#7"


def _checkboxes(blocks: list[Any]) -> list[list[dict[str, Any]]]:
    """Each checkboxes element's options, in order, as Slack's JSON."""
    found = []
    for block in blocks:
        for element in block.to_dict().get("elements", []):
            if element["type"] == "checkboxes":
                found.append(element["options"])
    return found


def _phases(count: int, about: str = "") -> Checklist:
    return Checklist(tuple(Row(f"phase-{n}", True, about) for n in range(1, count + 1)))


@pytest.mark.parametrize(("phases", "groups"), [(10, [10]), (11, [10, 1]), (20, [10, 10])])
def test_a_checklist_is_drawn_ten_boxes_to_an_element_numbered_throughout(
    phases: int, groups: list[int]
) -> None:
    drawn = _checkboxes(buttons.selection_blocks(_phases(phases)))
    assert [len(options) for options in drawn] == groups
    numbers = [option["text"]["text"].split(".")[0] for options in drawn for option in options]
    assert numbers == [str(n) for n in range(1, phases + 1)]


@pytest.mark.parametrize(("length", "drawn"), [(75, 75), (76, 75), (200, 75)])
def test_an_options_description_is_at_most_75_characters(length: int, drawn: int) -> None:
    about = "d" * length
    (options,) = _checkboxes(buttons.selection_blocks(_phases(1, about)))
    assert options[0]["description"]["text"] == about[:drawn]


@pytest.mark.parametrize(("length", "drawn"), [(1, 1), (2000, 2000), (2001, 2000)])
def test_a_default_answers_button_value_is_at_most_2000_characters(length: int, drawn: int) -> None:
    default = "a" * length
    ask = Event("session.awaiting_input", ITEM, text="Which?", detail={"default": default})
    (actions,) = buttons.blocks_for(ask, interactive=True)
    (button,) = [e for e in actions["elements"] if e.get("value")]
    assert button["value"] == default[:drawn]
