"""The room's own caps on what it draws, each at its edge and one past: the lead line's 300
characters, the verbose detail's 2000, a listed question's 150 (docs/rooms.md)."""

from __future__ import annotations

import pytest

from looproom.events import Event
from looproom.room.render import cut_questions, lead, render
from looproom.settings import Settings

LEAD = 300
DETAIL = 2000
QUESTION = 150


@pytest.mark.parametrize("length", [LEAD, LEAD + 1])
def test_a_lead_of_300_characters_is_whole_and_one_of_301_is_cut_to_300(length: int) -> None:
    # An event type the room does not know is named in its lead: "💬 *Update (<type>)*",
    # 13 characters around the type.
    kind = "x" * (length - 13)
    whole = f"💬 *Update ({kind})*"
    assert len(whole) == length
    drawn = lead(Event(kind, "github:acme/api#7"))
    assert drawn == whole[:LEAD]
    assert (drawn == whole) is (length == LEAD)


def _detail(total: int) -> dict[str, str]:
    """Detail whose context lines (``*kN:* value``, one a line) come to ``total`` characters."""
    detail: dict[str, str] = {}
    left = total
    while left > 0:
        key = f"k{len(detail)}"
        room = left - len(f"*{key}:* ") - (1 if detail else 0)
        detail[key] = "v" * min(300, room)
        left -= len(f"*{key}:* ") + len(detail[key]) + (1 if len(detail) > 1 else 0)
    return detail


@pytest.mark.parametrize("length", [DETAIL, DETAIL + 1])
def test_detail_lines_of_2000_characters_are_whole_and_2001_cut_with_an_ellipsis(
    length: int,
) -> None:
    detail = _detail(length)
    whole = "\n".join(f"*{key}:* {value}" for key, value in detail.items())
    assert len(whole) == length and all(len(v) <= 300 for v in detail.values())
    event = Event("decision-pending", "github:a/b#1", text="Which?", detail=detail)
    blocks = render(event, Settings(verbosity="verbose")).blocks
    (context,) = [b for b in blocks if b["type"] == "context"]
    shown = context["elements"][0]["text"]
    if length == DETAIL:
        assert shown == whole
    else:
        assert shown == whole[: DETAIL - 1] + "…" and len(shown) == DETAIL


def _question(length: int) -> str:
    words = "Should the retry budget cover the deploy step as well "
    return (words * (length // len(words) + 1))[: length - 1].rstrip() + "?"


@pytest.mark.parametrize("length", [QUESTION, QUESTION + 1])
def test_a_question_left_out_of_150_characters_is_listed_whole_and_151_cut_to_150(
    length: int,
) -> None:
    question = _question(length)
    question = question[:-1] + "x" * (length - len(question)) + "?"
    assert len(question) == length
    listed = cut_questions(f"{question}\n\nThe rest.", "The rest.", "").splitlines()[1]
    assert listed == f"• {question[:QUESTION]}"
    assert (listed == f"• {question}") is (length == QUESTION)
