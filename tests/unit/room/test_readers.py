"""Who is shown a work item by a read command: a member of a room it lives in, or an
admin — and only where the answer is not read by everyone else."""

from __future__ import annotations

from looproom.room.readers import Asker, Readers
from looproom.room.routing import BindingBook, ThreadBinding

ITEM, OTHER = "github:acme/secret#3", "github:acme/api#7"
CAROL, BOB, ALICE = "U0CAROL01", "U0BOB0001", "U0ALICE01"
ROOMS = {"C0SECRET1": frozenset({CAROL}), "C0BOUND01": frozenset({"U0DAVE001"})}


def readers(members: dict[str, frozenset[str] | None] | None = None) -> Readers:
    book = BindingBook({})
    book.remember(ThreadBinding(ITEM, "C0SECRET1", "100.0"))
    book.remember(ThreadBinding(OTHER, "C0LOOP001", "200.0"))
    book.bind_room(ITEM, "#bound-room")
    known = {"#bound-room": "C0BOUND01"}
    rooms = ROOMS if members is None else members
    return Readers(book, lambda room: known.get(room, room), rooms.get, ("<@U0ALICE01>",))


def test_a_member_of_a_room_it_lives_in_is_answered_and_no_one_else() -> None:
    assert readers().rooms_of(ITEM) == {"C0SECRET1", "C0BOUND01"}
    assert readers().refusal(ITEM, Asker(CAROL)) == ""
    assert readers().refusal(ITEM, Asker("U0DAVE001", "D0DAVE001")) == ""  # the bound room
    refused = readers().refusal(ITEM, Asker(BOB, "D0BOB0001"))
    assert "you are in none of them" in refused and "C0SECRET1" not in refused


def test_an_admin_is_answered_whatever_rooms_they_are_in() -> None:
    assert readers().refusal(ITEM, Asker(ALICE)) == ""
    assert readers().is_admin(ALICE) and not readers().is_admin(BOB)


def test_an_answer_said_in_another_room_is_refused_even_to_a_member() -> None:
    """Said in a public room, everyone there would read it: a DM, or a room of its own."""
    refused = readers().refusal(ITEM, Asker(CAROL, "C0PUBLIC1"))
    assert "Ask me in a DM" in refused
    assert "Ask me in a DM" in readers().refusal(ITEM, Asker(ALICE, "C0PUBLIC1"))
    assert readers().refusal(ITEM, Asker(CAROL, "C0SECRET1")) == ""


def test_when_slack_cannot_say_only_an_admin_is_answered() -> None:
    unknown = readers({"C0SECRET1": None, "C0BOUND01": None})
    assert "Slack cannot say" in unknown.refusal(ITEM, Asker(CAROL))
    assert unknown.refusal(ITEM, Asker(ALICE)) == ""


def test_a_work_item_in_no_room_is_an_admins_alone() -> None:
    assert "you are in none of them" in readers().refusal("github:acme/api#99", Asker(CAROL))


def test_a_plain_chat_has_no_rooms_to_hide() -> None:
    plain = Readers(BindingBook({}), lambda room: room, None)
    assert plain.refusal(ITEM, Asker(BOB)) == ""
    assert plain.readable(Asker(BOB))(ITEM)


def test_readable_asks_slack_once_a_room_for_a_whole_list() -> None:
    asked: list[str] = []

    def members(room: str) -> frozenset[str] | None:
        asked.append(room)
        return ROOMS.get(room)

    book = BindingBook({})
    book.remember(ThreadBinding(ITEM, "C0SECRET1", "100.0"))
    book.remember(ThreadBinding(OTHER, "C0SECRET1", "200.0"))
    readable = Readers(book, lambda room: room, members).readable(Asker(CAROL))
    assert readable(ITEM) and readable(OTHER) and asked == ["C0SECRET1"]
    assert not Readers(book, lambda room: room, members).readable(Asker(BOB))(ITEM)
