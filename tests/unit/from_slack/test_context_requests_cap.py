"""The context requests' book at its documented 300: a request still owed outlives the
recorded ones; one waiting is forgotten only when all 300 are waiting."""

from __future__ import annotations

from typing import Any

from looproom.from_slack.context_requests import ContextRequest, ContextRequests

#: The figure docs/decisions.md gives.
REMEMBERED = 300


def asked(n: int) -> ContextRequest:
    return ContextRequest(f"shortcut:{n}", "U0ALICE01", "C0LOOP001", f"1800000000.{n:06d}")


def test_a_full_book_forgets_a_recorded_request_before_any_still_waiting() -> None:
    book = ContextRequests({})
    for n in range(REMEMBERED):
        assert book.take(asked(n))
    book.done("shortcut:150")
    assert book.take(asked(REMEMBERED))  # the 301st: the recorded one makes room
    waiting = [r.origin for r in book.waiting()]
    assert len(waiting) == REMEMBERED
    assert "shortcut:0" in waiting and "shortcut:150" not in waiting
    assert not book.take(asked(0))  # the oldest still owed is still known: taken once


def test_three_hundred_waiting_are_kept_and_the_next_forgets_the_oldest() -> None:
    store: dict[str, Any] = {}
    book = ContextRequests(store)
    for n in range(REMEMBERED):
        assert book.take(asked(n))
    assert len(book.waiting()) == REMEMBERED and book.waiting()[0].origin == "shortcut:0"
    assert book.take(asked(REMEMBERED))
    waiting = [r.origin for r in book.waiting()]
    assert len(waiting) == REMEMBERED
    assert waiting[0] == "shortcut:1" and waiting[-1] == f"shortcut:{REMEMBERED}"
