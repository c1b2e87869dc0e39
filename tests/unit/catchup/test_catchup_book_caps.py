"""The catch-up's books at their default bounds: exactly the bound kept, one more forgotten
or refused. The figures are the docs' — `docs/rooms.md` (200 thread bindings, each read
again by the catch-up), `docs/admin.md` (at most 500 rooms listen to everything) and the
thread cursors' 500 — never read from the module under test."""

from __future__ import annotations

from typing import Any

from looproom.catchup.catchup import CatchUp
from looproom.catchup.cursors import Cursors
from looproom.catchup.listen_modes import ADDRESSED, ALL, ListenAll
from looproom.room.routing import BindingBook, ThreadBinding

CHANNEL = "C0LOOP0001"
NOW = 1_800_000_000.0


def _read_by_catch_up(bound: int) -> list[str]:
    """The threads a catch-up reads, as the bot wires it, after ``bound`` were opened."""
    book, asked = BindingBook({}), []
    for n in range(bound):
        book.remember(ThreadBinding(f"github:acme/api#{n}", CHANNEL, f"{NOW - 5000 + n:.6f}"))

    def read(_channel: str, thread: str, _oldest: str) -> list[dict[str, Any]]:
        asked.append(thread)
        return []

    threads = lambda: [(t.channel, t.ts) for t in book.recent_threads()]  # noqa: E731
    CatchUp(threads, read, lambda _m: None, Cursors({}), clock=lambda: NOW).run()
    return asked


def test_the_catch_up_reads_every_one_of_200_threads() -> None:
    assert len(set(_read_by_catch_up(200))) == 200


def test_of_201_threads_opened_it_reads_the_200_kept() -> None:
    asked = set(_read_by_catch_up(201))
    assert len(asked) == 200 and f"{NOW - 5000:.6f}" not in asked


def test_five_hundred_threads_keep_their_cursors() -> None:
    cursors = Cursors({})
    for n in range(500):
        assert cursors.claim(CHANNEL, f"{n}.000100", f"{n}.000200")
    # every one of them still knows its message was read: neither path reads it twice
    assert not any(cursors.claim(CHANNEL, f"{n}.000100", f"{n}.000200") for n in range(500))


def test_the_five_hundred_and_first_thread_forgets_the_least_recently_touched() -> None:
    cursors = Cursors({})
    for n in range(500):
        cursors.claim(CHANNEL, f"{n}.000100", f"{n}.000200")
    cursors.claim(CHANNEL, "0.000100", "0.000300")  # thread 0 touched: thread 1 is oldest
    cursors.claim(CHANNEL, "500.000100", "500.000200")
    assert cursors.claim(CHANNEL, "1.000100", "1.000200")  # forgotten: read afresh
    assert not cursors.claim(CHANNEL, "0.000100", "0.000200")
    assert not cursors.claim(CHANNEL, "500.000100", "500.000200")


def test_five_hundred_rooms_listen_to_everything_and_a_five_hundred_and_first_is_refused() -> None:
    modes = ListenAll({})
    for n in range(500):
        assert modes.switch(f"C{n:09d}", ALL)
    assert len(modes.rooms()) == 500
    assert not modes.switch("C000000500", ALL)
    assert not modes.hears_all("C000000500") and modes.hears_all("C000000000")
    assert modes.switch("C000000000", ADDRESSED)  # one switched back makes room
    assert modes.switch("C000000500", ALL) and modes.hears_all("C000000500")
