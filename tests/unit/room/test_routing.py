"""Which room and which thread, and the bounded binding book."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from looproom.admin.bind import bind_command, unbind_command
from looproom.room.routing import BindingBook, BindingError, ThreadBinding, route

ROOMS = (("acme/*", "#acme-loop"), ("acme/api", "#api-loop"), ("*/docs", "#docs"))


class ShelfLike(dict):
    """Errbot's storage semantics: values are copies; only assignment persists."""

    def __getitem__(self, key: str) -> Any:
        return copy.deepcopy(super().__getitem__(key))

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, copy.deepcopy(value))


def test_an_exact_repository_beats_a_glob_listed_before_it() -> None:
    assert route("github:acme/api#7", "#the-loop", ROOMS) == "#api-loop"


def test_the_first_matching_glob_in_file_order_wins() -> None:
    assert route("github:acme/docs#1", "#the-loop", ROOMS) == "#acme-loop"
    assert route("github:other/docs#1", "#the-loop", ROOMS) == "#docs"


def test_repositories_match_whatever_their_case() -> None:
    assert route("github:ACME/Api#7", "#the-loop", ROOMS) == "#api-loop"


def test_unmatched_and_non_github_work_items_go_to_the_default_channel() -> None:
    assert route("github:someone/else#3", "#the-loop", ROOMS) == "#the-loop"
    assert route("jira:KEY-1", "#the-loop", ROOMS) == "#the-loop"
    assert route("github:someone/else#3", "", ()) == ""


def test_an_admin_binding_overrides_the_map_until_it_is_removed() -> None:
    book = BindingBook(ShelfLike())
    book.bind_room("github:acme/api#7", "C0WARROOM1")
    assert book.room_for("github:acme/api#7", "#the-loop", ROOMS) == "C0WARROOM1"
    assert book.room_for("github:acme/api#8", "#the-loop", ROOMS) == "#api-loop"
    assert book.room_bindings() == {"github:acme/api#7": "C0WARROOM1"}
    assert book.unbind_room("github:acme/api#7") is True
    assert book.unbind_room("github:acme/api#7") is False
    assert book.room_for("github:acme/api#7", "#the-loop", ROOMS) == "#api-loop"


def test_admin_bindings_past_the_cap_are_refused_not_silently_evicted() -> None:
    book = BindingBook(ShelfLike(), room_cap=2)
    book.bind_room("github:a/b#1", "#one")
    book.bind_room("github:a/b#2", "#two")
    with pytest.raises(BindingError, match="cap is 2"):
        book.bind_room("github:a/b#3", "#three")
    book.bind_room("github:a/b#2", "#moved")  # rebinding a bound item is not a new one
    assert book.room_bindings() == {"github:a/b#1": "#one", "github:a/b#2": "#moved"}


def test_five_hundred_bindings_are_kept_and_a_five_hundred_and_first_refused() -> None:
    # docs/admin.md: at most 500 — past that a new one is refused, never an old one dropped.
    book = BindingBook(ShelfLike())
    for n in range(500):
        book.bind_room(f"github:a/b#{n}", "#room")
    with pytest.raises(BindingError, match="cap is 500"):
        book.bind_room("github:a/b#500", "#room")
    assert len(book.room_bindings()) == 500


def test_thread_bindings_persist_in_the_store_the_plugin_passes() -> None:
    store = ShelfLike()
    BindingBook(store).remember(
        ThreadBinding("github:acme/api#7", "C0LOOP0001", "1700000001.000001")
    )
    again = BindingBook(store)  # a restart: a new book over the same storage
    thread = again.thread("github:acme/api#7", "C0LOOP0001")
    assert thread == ThreadBinding("github:acme/api#7", "C0LOOP0001", "1700000001.000001")
    assert again.thread("github:acme/api#7", "C0OTHER001") is None


def test_past_the_cap_the_least_recently_used_thread_is_dropped() -> None:
    book = BindingBook(ShelfLike(), thread_cap=3)
    for n in (1, 2, 3):
        book.remember(ThreadBinding(f"github:a/b#{n}", "C0LOOP0001", f"{n}.0"))
    assert book.thread("github:a/b#1", "C0LOOP0001") is not None  # #1 used: #2 is now oldest
    book.remember(ThreadBinding("github:a/b#4", "C0LOOP0001", "4.0"))
    assert book.thread_count() == 3
    assert book.thread("github:a/b#2", "C0LOOP0001") is None
    for n in (1, 3, 4):
        assert book.thread(f"github:a/b#{n}", "C0LOOP0001") is not None


def test_the_default_cap_is_the_seeds_two_hundred() -> None:
    book = BindingBook(ShelfLike())
    for n in range(205):
        book.remember(ThreadBinding(f"github:a/b#{n}", "C0LOOP0001", f"{n}.0"))
    assert book.thread_count() == 200
    assert book.thread("github:a/b#4", "C0LOOP0001") is None
    assert book.thread("github:a/b#5", "C0LOOP0001") is not None


def test_a_parent_owed_a_state_keeps_its_ts_and_is_settled_once_that_state_is_drawn() -> None:
    book = BindingBook(ShelfLike())
    thread = ThreadBinding("github:a/b#1", "C0LOOP0001", "1.0")
    book.remember(thread)
    assert book.want(thread, "📋 Waiting for approval", "https://x/1")
    owed = book.binding("github:a/b#1", "C0LOOP0001")
    assert owed == ThreadBinding(
        "github:a/b#1", "C0LOOP0001", "1.0", "📋 Waiting for approval", "", "https://x/1", True
    )
    assert book.drew(owed, "f1")
    assert book.thread("github:a/b#1", "C0LOOP0001") == ThreadBinding(
        "github:a/b#1", "C0LOOP0001", "1.0", "📋 Waiting for approval", "f1", "https://x/1"
    )
    book.forget("github:a/b#1", "C0LOOP0001")
    assert book.thread("github:a/b#1", "C0LOOP0001") is None


def test_a_state_wanted_while_an_older_one_was_drawn_stays_owed() -> None:
    book = BindingBook(ShelfLike())
    thread = ThreadBinding("github:a/b#1", "C0LOOP0001", "1.0")
    book.remember(thread)
    book.want(thread, "🔧 Working", "")
    drawing = book.binding("github:a/b#1", "C0LOOP0001")
    assert drawing is not None
    book.want(drawing, "🎉 Done", "")  # the next event, while the stage drew "Working"
    book.drew(drawing, "f-working")
    now = book.binding("github:a/b#1", "C0LOOP0001")
    assert now is not None and (now.state, now.drawn, now.dirty) == ("🎉 Done", "f-working", True)


def test_a_gone_parents_binding_is_forgotten_only_if_no_new_parent_was_opened() -> None:
    book = BindingBook(ShelfLike())
    old = ThreadBinding("github:a/b#1", "C0LOOP0001", "1.0")
    book.remember(old)
    book.remember(ThreadBinding("github:a/b#1", "C0LOOP0001", "2.0"))  # opened since
    assert not book.want(old, "🔧 Working", "")
    book.forget("github:a/b#1", "C0LOOP0001", "1.0")
    kept = book.thread("github:a/b#1", "C0LOOP0001")
    assert kept is not None and kept.ts == "2.0" and not kept.dirty


def test_channel_ids_are_learnt_by_name_with_or_without_hash() -> None:
    book = BindingBook(ShelfLike())
    assert book.channel_id("#the-loop") == ""
    book.learn_channel_id("#The-Loop", "C0LOOP0001")
    assert book.channel_id("the-loop") == "C0LOOP0001"


def test_an_uncertain_post_is_remembered_until_settled() -> None:
    store = ShelfLike()
    BindingBook(store).mark_uncertain("evt-1")
    book = BindingBook(store)
    assert book.is_uncertain("evt-1")
    book.settle("evt-1")
    assert not BindingBook(store).is_uncertain("evt-1")


def no_slack(room: str) -> tuple[str, str]:
    """The channel directory with no Slack to ask (the Text backend): an id is itself, a
    name cannot be looked up."""
    return (room, "") if room.startswith("C") and room.isupper() else ("", "no_slack")


def test_an_admin_binds_lists_and_unbinds_with_words() -> None:
    book = BindingBook(ShelfLike())
    assert "No work item is bound" in bind_command(book, "", no_slack)
    answer = bind_command(book, "github:acme/api#7 #api-war-room", no_slack)
    assert "now posts to #api-war-room" in answer
    assert bind_command(book, "github:acme/api#8 <#C0WAR0001|war-room>", no_slack).endswith(
        "its next event opens its thread there."
    )
    listing = bind_command(book, "", no_slack)
    assert "`github:acme/api#7` → #api-war-room" in listing
    assert "`github:acme/api#8` → <#C0WAR0001>" in listing
    assert "configured room again" in unbind_command(book, "github:acme/api#7")
    assert "was not bound" in unbind_command(book, "github:acme/api#7")
    assert book.room_bindings() == {"github:acme/api#8": "C0WAR0001"}


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ("github:acme/api#7", "usage"),
        ("acme/api#7 #room", "is not a work item ref"),
        ("github:acme/api#7 <!here>", "is not a room"),
        ("github:acme/api#7 #a b", "usage"),
    ],
)
def test_a_bad_bind_says_what_is_wrong_and_binds_nothing(args: str, complaint: str) -> None:
    book = BindingBook(ShelfLike())
    assert complaint in bind_command(book, args, no_slack)
    assert book.room_bindings() == {}


def test_the_bind_cap_is_reported_to_the_admin() -> None:
    book = BindingBook(ShelfLike(), room_cap=1)
    bind_command(book, "github:a/b#1 #one", no_slack)
    assert "the cap is 1" in bind_command(book, "github:a/b#2 #two", no_slack)
