"""``!theloop bind``: a room named as people type it is bound by the id Slack's events carry."""

from __future__ import annotations

import pytest

from looproom.admin.bind import bind_command
from looproom.room.routing import BindingBook

ITEM = "github:acme/api#7"


def slack_with(rooms: dict[str, str]):
    """``find`` as the channel directory answers: an id as given; a name (``#`` optional,
    any case) looked up among the rooms the bot can see."""

    def find(room: str) -> tuple[str, str]:
        if room.startswith(("C", "G")) and room.isupper():
            return room, ""
        found = rooms.get(room.lstrip("#").lower())
        return (found, "") if found else ("", "channel_not_found")

    return find


@pytest.mark.parametrize("typed", ["#war-room", "war-room", "#War-Room", "<#C0WAR0001|war-room>"])
def test_a_room_typed_as_people_type_it_is_bound_by_its_id(typed: str) -> None:
    book = BindingBook({})
    answer = bind_command(book, f"{ITEM} {typed}", slack_with({"war-room": "C0WAR0001"}))
    assert "now posts to <#C0WAR0001>" in answer
    assert book.room_bindings() == {ITEM: "C0WAR0001"}
    assert "<#C0WAR0001>" in bind_command(book, "", slack_with({}))


def test_a_room_that_cannot_be_found_or_seen_is_refused_and_nothing_bound() -> None:
    book = BindingBook({})
    answer = bind_command(book, f"{ITEM} #war-rom", slack_with({"war-room": "C0WAR0001"}))
    assert "cannot find or see the room `#war-rom`" in answer
    assert "channel_not_found" in answer and "Nothing was bound" in answer
    assert book.room_bindings() == {}


def test_without_slack_to_ask_the_name_is_kept_as_typed() -> None:
    book = BindingBook({})
    answer = bind_command(book, f"{ITEM} #war-room", lambda room: ("", "no_slack"))
    assert "now posts to #war-room" in answer
    assert book.room_bindings() == {ITEM: "#war-room"}
