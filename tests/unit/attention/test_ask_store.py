"""The asks on record, on both stores: one SQLite file, one PostgreSQL database.

Each test runs twice (``sqlite``, ``postgresql`` on a real server), so the rules the
reminders rely on hold wherever the room keeps its asks: an ask is opened once, closed
once, and each step is taken once and only while the ask is open — by one of any number
of racing takers, replicas included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from looproom.attention.record import (
    ANSWERED,
    DM,
    ESCALATED,
    MOVED_ON,
    OPEN,
    REMINDED,
    SNOOZED,
    Ask,
)
from looproom.attention.store import AskStore, postgres_asks, sqlite_asks
from looproom.postgres.database import Database


@pytest.fixture(params=["sqlite", "postgresql"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], AskStore]]:
    """Opens the store again as another process (or replica) would see it."""
    if request.param == "sqlite":
        yield lambda: sqlite_asks(tmp_path / "queues.sqlite3")
        return
    url = request.getfixturevalue("database_url")
    databases: list[Database] = []

    def open_one() -> AskStore:
        databases.append(Database(url))
        return postgres_asks(databases[-1])

    yield open_one
    for database in databases:
        database.close()


def an_ask(key: str = "a", opened: float = 100.0, asked: tuple[str, ...] = ("U1",)) -> Ask:
    return Ask(key, "github:acme/api#7", "gate", "C1", "1.0", "0.5", asked, opened, "owner")


def test_an_ask_is_recorded_once_and_read_back_whole(opener: Callable[[], AskStore]) -> None:
    asks = opener()
    assert asks.open(an_ask(asked=("U1", "U2"))) is True
    assert asks.open(an_ask(opened=999.0)) is False
    assert opener().get("a") == an_ask(asked=("U1", "U2"))


def test_an_answer_closes_the_ask_once_and_says_who_and_how(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask())
    assert asks.close("a", ANSWERED, "U1", DM, 160.0) is True
    assert asks.close("a", MOVED_ON, "", "", 170.0) is False
    closed = asks.get("a")
    assert (closed.outcome, closed.answered_by, closed.answered_how) == (ANSWERED, "U1", DM)
    assert closed.waited(now=10_000.0) == 60.0
    assert asks.open_asks() == []


def test_each_step_is_taken_once_and_never_after_the_answer(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask("a"))
    asks.open(an_ask("b"))
    assert asks.take("a", REMINDED, 200.0) is True
    assert asks.take("a", REMINDED, 201.0) is False
    assert opener().take("a", REMINDED, 202.0) is False  # another process, the same answer
    assert asks.get("a").reminded == 200.0
    asks.close("b", ANSWERED, "U1", DM, 150.0)
    assert asks.take("b", REMINDED, 200.0) is False
    assert asks.take("b", ESCALATED, 200.0) is False
    with pytest.raises(ValueError, match="unknown step"):
        asks.take("a", "opened", 1.0)


def test_racing_takers_take_a_step_exactly_once(opener: Callable[[], AskStore]) -> None:
    stores = [opener() for _ in range(2)] * 4  # two processes, four threads each
    stores[0].open(an_ask())
    won: list[bool] = []
    start = threading.Barrier(len(stores))

    def take(store: AskStore) -> None:
        start.wait()
        won.append(store.take("a", ESCALATED, 300.0))

    threads = [threading.Thread(target=take, args=(store,)) for store in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won) == [False] * (len(stores) - 1) + [True]


def test_the_first_claim_wins_and_a_closed_ask_is_not_claimed(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask("a"))
    assert asks.claim("a", "U2", 120.0) is True
    assert asks.claim("a", "U3", 121.0) is False
    assert (asks.get("a").claimed_by, asks.get("a").claimed_at) == ("U2", 120.0)
    asks.close("a", ANSWERED, "U2", DM, 130.0)
    asks.open(an_ask("b"))
    asks.close("b", MOVED_ON, "", "", 130.0)
    assert asks.claim("b", "U2", 131.0) is False


def test_an_answer_given_up_reopens_the_ask_but_a_moved_on_one_stays_closed(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask("a"))
    asks.open(an_ask("b"))
    asks.close("a", ANSWERED, "U1", DM, 130.0)
    asks.close("b", MOVED_ON, "", "", 130.0)
    assert (asks.reopen("a"), asks.reopen("b")) == (True, False)
    reopened = asks.get("a")
    assert (reopened.outcome, reopened.answered_by, reopened.closed) == (OPEN, "", 0.0)


def test_listings_oldest_first_by_work_item_by_time_and_by_member(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask("late", opened=300.0, asked=("U1",)))
    asks.open(an_ask("early", opened=100.0, asked=("U12",)))
    asks.open(Ask("other", "github:acme/web#1", "ask", "C2", "2.0", "", ("U1", "U2"), 200.0))
    asks.close("early", ANSWERED, "U12", DM, 110.0)
    assert [a.id for a in asks.open_asks()] == ["other", "late"]
    assert asks.oldest_open().id == "other"
    assert [a.id for a in asks.of_item("github:acme/api#7")] == ["early", "late"]
    assert [a.id for a in asks.open_asks_of("github:acme/api#7")] == ["late"]
    assert [a.id for a in asks.since(250.0)] == ["other", "late"]  # the open one too
    assert [a.id for a in asks.waiting_on("U1")] == ["other", "late"]  # not U12's
    assert asks.waiting_on("U12") == [] and asks.waiting_count("U12") == 0  # answered
    assert [a.id for a in asks.answered_by("U12")] == ["early"]


def test_a_direct_message_is_remembered_per_member(opener: Callable[[], AskStore]) -> None:
    asks = opener()
    asks.open(an_ask(asked=("U1", "U2")))
    asks.sent_dm("a", "U1", "D1:5.0")
    opener().sent_dm("a", "U2", "D2:6.0")
    asks.sent_dm("missing", "U1", "D1:7.0")
    found = asks.get("a")
    assert (found.dm_of("U1"), found.dm_of("U2"), found.dm_of("U3")) == ("D1:5.0", "D2:6.0", "")
    assert asks.get("missing") is None


def test_what_waits_on_a_member_oldest_first_and_what_they_answered_latest_first(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask("late", 300.0, ("U1", "U2")))
    asks.open(an_ask("early", 100.0, ("U1",)))
    asks.open(an_ask("not-mine", 50.0, ("U11",)))  # an id U1's is a prefix of
    asks.open(an_ask("answered", 200.0, ("U2",)))
    asks.open(an_ask("answered-earlier", 150.0, ("U2",)))
    assert [a.id for a in asks.waiting_on("U1")] == ["early", "late"]
    asks.close("answered-earlier", ANSWERED, "U1", DM, 210.0)
    asks.close("answered", ANSWERED, "U1", DM, 220.0)  # U1 answered an ask of U2's
    asks.close("late", MOVED_ON, "", "", 230.0)
    assert [a.id for a in asks.waiting_on("U1")] == ["early"]
    assert [a.id for a in opener().answered_by("U1")] == ["answered", "answered-earlier"]
    assert asks.answered_by("U1", limit=1)[0].id == "answered"
    assert asks.answered_by("U2") == []


def test_a_members_snooze_is_taken_once_read_back_and_never_after_the_answer(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    asks.open(an_ask(asked=("U1", "U2")))
    assert asks.step_at("a", "U1", SNOOZED) == 0.0
    assert asks.take_for("a", "U1", SNOOZED, 3700.0) is True
    assert asks.take_for("a", "U1", SNOOZED, 9999.0) is False  # once: the first stands
    assert opener().step_at("a", "U1", SNOOZED) == 3700.0
    assert asks.step_at("a", "U2", SNOOZED) == 0.0  # the others unaffected
    asks.close("a", ANSWERED, "U1", DM, 200.0)
    assert asks.take_for("a", "U2", SNOOZED, 3800.0) is False


def test_how_many_wait_on_a_member_counted_whole_and_not_a_prefix_of_theirs(
    opener: Callable[[], AskStore],
) -> None:
    asks = opener()
    for n in range(203):  # past the listings' 200
        asks.open(an_ask(f"a{n}", float(n), ("U1", "U2")))
    asks.open(an_ask("other", 500.0, ("U12",)))
    asks.open(an_ask("done", 600.0, ("U1",)))
    asks.close("done", ANSWERED, "U1", DM, 700.0)
    assert (asks.waiting_count("U1"), asks.waiting_count("U12"), asks.waiting_count("U3")) == (
        203,
        1,
        0,
    )
