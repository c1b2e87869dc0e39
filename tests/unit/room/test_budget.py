"""One heavy message never stalls the room: a drawing over its budget gives way to plain text."""

from __future__ import annotations

import threading

import pytest

from looproom.events import Event
from looproom.room import budget as budget_module
from looproom.room.budget import Budget
from looproom.room.render import plain_fit, render
from looproom.settings import Settings
from tests.support.wait import wait_for


def test_a_drawing_within_its_budget_is_what_is_posted() -> None:
    assert Budget(30).run(lambda: "drawn", lambda: "plain") == "drawn"


def test_a_drawing_over_its_budget_gives_way_and_only_one_runs_late() -> None:
    release = threading.Event()
    late = Budget(0.05)

    def stuck() -> str:
        release.wait(30)
        return "drawn late"

    assert late.run(stuck, lambda: "plain") == "plain"
    # While it still runs, the next message does not wait at all, and nothing piles up.
    assert late.run(lambda: "drawn", lambda: "plain, at once") == "plain, at once"
    release.set()
    wait_for(lambda: late.run(lambda: "drawn", lambda: "plain") == "drawn", 30, "a free budget")


def test_an_error_while_drawing_is_raised_as_without_a_budget() -> None:
    def broken() -> str:
        raise ValueError("bad markdown")

    with pytest.raises(ValueError, match="bad markdown"):
        Budget(30).run(broken, lambda: "plain")


def test_the_plain_fallback_is_inert_escaped_and_within_the_limit() -> None:
    text = "<!channel> & <@U123|bob> " + "&" * 5000
    shown = plain_fit(text, 200)
    assert len(shown) <= 200 and shown.endswith("…")
    assert "<!channel>" not in shown and "<@U123" not in shown
    assert "&amp;" in shown and not shown.rstrip("…").endswith(("&", "&a", "&am", "&amp"))


def test_a_heavy_comment_over_the_budget_is_posted_as_its_plain_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A budget no drawing can meet: the message is the plain text, at once.
    monkeypatch.setattr(budget_module, "ROOM", Budget(0.0))
    text = "![" * 8192
    event = Event(event_type="comment.human", work_item="github:acme/api#1", text=text)
    drawn = render(event, Settings(long_messages="truncate"))
    sections = [b["text"]["text"] for b in drawn.blocks if b["type"] == "section"]
    assert sections[1] == plain_fit(text, Settings().max_chars)
