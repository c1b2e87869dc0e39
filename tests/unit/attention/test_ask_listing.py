"""The asks on record read back: ``!theloop asks``, ``/the-loop mine``, the status line
and the metrics — from a real store, with the waits as the members lived them."""

from __future__ import annotations

from pathlib import Path

import pytest

from looproom.attention import listing
from looproom.attention.record import ANSWERED, DM, MOVED_ON, REMINDED, Ask
from looproom.attention.side import AttentionSide
from looproom.attention.store import sqlite_asks
from looproom.decide.authorization import AccessPolicy
from looproom.metrics import Metrics
from looproom.room.memory import Memory
from looproom.settings import Settings

NOW = 1_800_000_000.0
ALICE, BOB = "U0ALICE01", "U0BOB0001"


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> float:
        return self.now


def side(tmp_path: Path, metrics: Metrics | None = None) -> tuple[AttentionSide, Clock]:
    clock, store = Clock(), {}
    policy = AccessPolicy("UBOT", frozenset({ALICE, BOB}))
    made = AttentionSide(
        Settings(),
        store,
        lambda: policy,
        str,
        sqlite_asks(tmp_path / "asks.sqlite3"),
        Memory(store).get,
        metrics=metrics,
        clock=clock,
    )
    return made, clock


def ask(key: str, item: str, opened: float, asked: tuple[str, ...] = (ALICE,)) -> Ask:
    return Ask(key, item, "gate", "C1", key, "", asked, opened)


@pytest.mark.parametrize(
    ("text", "seconds_ago"),
    [("90s", 90), ("30m", 1800), ("4h", 14400), ("2d", 172800), ("0s", 0)],
)
def test_since_reads_a_time_ago(text: str, seconds_ago: int) -> None:
    assert listing.parse_since(text, NOW) == NOW - seconds_ago


def test_since_reads_an_iso_date_or_time_in_utc_and_refuses_the_rest() -> None:
    assert listing.parse_since("2027-01-15", NOW) == 1_800_000_000 - 1_800_000_000 % 86400
    assert listing.parse_since("2027-01-15T08:00:00Z", NOW) == listing.parse_since(
        "2027-01-15T08:00:00+00:00", NOW
    )
    for bad in ("yesterday", "4 h", "4w", "1234567s"):
        with pytest.raises(listing.UsageError, match="usage"):
            listing.parse_since(bad, NOW)
    for bad in ("--since", "--since 4h extra", "a b", "--all"):
        with pytest.raises(listing.UsageError, match="usage"):
            listing.read_args(bad, NOW)


def test_asks_lists_what_waits_a_work_items_life_and_what_opened_since(tmp_path: Path) -> None:
    room, _ = side(tmp_path)
    asks = room.asks
    asks.open(ask("1.0", "github:acme/api#7", NOW - 7200))
    asks.open(ask("2.0", "github:acme/api#7", NOW - 600, (ALICE, BOB)))
    asks.open(ask("3.0", "github:acme/web#1", NOW - 300))
    asks.take_for("1.0", ALICE, REMINDED, NOW - 3600)
    asks.claim("1.0", ALICE, NOW - 3000)
    asks.close("1.0", ANSWERED, ALICE, DM, NOW - 1800)
    asks.close("3.0", MOVED_ON, "", "", NOW - 60)
    waiting = room.answer("")
    assert waiting.startswith("*Asks waiting now* (1):") and "*waiting 10 min*" in waiting
    life = room.answer("github:acme/api#7")
    assert "reminded " in life and f"claimed by <@{ALICE}>" in life
    assert f"answered by <@{ALICE}> (dm) after 90 min" in life
    since = room.answer("--since 9m")
    assert "acme/web#1" in since and "moved on after 4 min" in since and "1.0" not in since
    assert room.answer("--since soon").startswith("`soon` is not a time")
    assert room.answer("github:acme/none#1") == "Asks of `github:acme/none#1`: none."


def test_mine_is_what_waits_on_me_oldest_first_then_what_i_answered(tmp_path: Path) -> None:
    room, _ = side(tmp_path)
    room.asks.open(ask("5.0", "github:acme/api#9", NOW - 60, (BOB,)))
    room.asks.open(ask("4.0", "github:acme/api#8", NOW - 600, (ALICE, BOB)))
    room.asks.open(ask("3.0", "github:acme/api#7", NOW - 900, (ALICE,)))
    room.asks.close("3.0", ANSWERED, ALICE, DM, NOW - 800)
    mine = room.mine(ALICE).splitlines()
    assert mine[0] == "*Waiting on you* (1), oldest first:" and "acme/api#8" in mine[1]
    assert mine[2] == "*You answered lately:*" and "acme/api#7" in mine[3]
    assert "acme/api#9" not in room.mine(ALICE)
    assert room.mine("U0NOBODY1") == "Nothing waits on you."


@pytest.mark.parametrize(("waiting", "more"), [(25, 0), (26, 1), (230, 205)])
def test_mine_shows_the_oldest_and_counts_the_newer_it_cannot_show(
    tmp_path: Path, waiting: int, more: int
) -> None:
    room, _ = side(tmp_path)
    for n in range(waiting):
        room.asks.open(ask(f"{n}.0", f"github:acme/api#{1000 + n}", NOW - 10_000 + n))
    # The one answered last is the newest of all: listed, however many wait.
    room.asks.open(ask("late", "github:acme/api#1", NOW - 100))
    room.asks.close("late", ANSWERED, ALICE, DM, NOW - 50)
    mine = room.mine(ALICE).splitlines()
    assert mine[0] == f"*Waiting on you* ({waiting}), oldest first:"
    assert "acme/api#1000`" in mine[1] and "acme/api#1024`" in mine[25]
    assert len([ln for ln in mine[1:] if ln.startswith("• ")]) == 25 + 1  # and the answered
    tail = mine[26:]
    if more:
        assert tail[0] == f"_… and {more} more waiting on you, newer than these._"
        tail = tail[1:]
    assert tail[0] == "*You answered lately:*" and "`github:acme/api#1`" in tail[1]


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(119, "119 s"), (120, "2 min"), (7199, "119 min"), (7200, "2 h"), (259199, "71 h")],
)
def test_a_wait_is_said_in_the_unit_people_read_it_in(seconds: int, said: str) -> None:
    assert listing.duration(seconds) == said
    assert listing.duration(259200) == "3 d"


def test_status_names_the_oldest_waiting_ask(tmp_path: Path) -> None:
    room, _ = side(tmp_path)
    assert room.oldest_line() == "asks: none waiting"
    room.asks.open(ask("2.0", "github:acme/api#8", NOW - 60))
    room.asks.open(ask("1.0", "github:acme/api#7", NOW - 7200))
    assert room.oldest_line() == (
        f"asks: the oldest waiting is `github:acme/api#7`'s gate, 2 h, asking <@{ALICE}>"
    )


def test_the_metrics_count_each_wait_by_kind_and_show_the_oldest_open(tmp_path: Path) -> None:
    metrics = Metrics()
    room, clock = side(tmp_path, metrics)
    room.asks.open(ask("1.0", "github:acme/api#7", NOW - 400))
    room.feed.told.closed(ask("9.0", "github:acme/api#6", NOW - 120))  # closed, 2 min
    text = metrics.render()[0].decode()
    assert 'theloop_ask_wait_seconds_bucket{kind="gate",le="60.0",outcome="open"} 0.0' in text
    assert 'theloop_ask_wait_seconds_bucket{kind="gate",le="300.0",outcome="open"} 1.0' in text
    assert "theloop_ask_oldest_open_seconds 400.0" in text
    clock.now += 100
    assert "theloop_ask_oldest_open_seconds 500.0" in metrics.render()[0].decode()
