"""The catch-up that misses nothing: every thread, the rooms' top-level messages, and the
periodic reconcile (``slack.read``), sharing the cursors with the live path."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.catchup.catchup import TOP, CatchUp
from looproom.catchup.cursors import Cursors
from looproom.catchup.reconcile import Reconcile
from looproom.loop_log.book import sqlite_records
from looproom.loop_log.channel import ChannelLog
from looproom.settings.read import DEFAULT_BEATS, DEFAULT_SECONDS, MIN_SECONDS, ReadSettings, parse
from tests.support.wait import wait_for

NOW = 1_800_000_000.0


def test_every_kept_thread_is_read_not_only_the_most_recent_fifty() -> None:
    cursors, asked = Cursors({}), []
    threads = [("C1", f"{NOW - 1000 + n:.6f}") for n in range(120)]

    def read(channel: str, thread: str, oldest: str) -> list[dict[str, Any]]:
        asked.append(thread)
        return []

    CatchUp(lambda: threads, read, lambda _m: None, cursors, clock=lambda: NOW).run()
    assert sorted(asked) == sorted(t for _c, t in threads)


def _live(cursors: Cursors, handled: list[str]) -> Any:
    """The live path's claim, as ``Decisions.said`` makes it, then the handling."""

    def feed(message: dict[str, Any]) -> None:
        channel, thread = message["channel"], message.get("thread_ts", TOP)
        if cursors.claim(channel, thread, message["ts"]):
            handled.append(message["ts"])

    return feed


def test_a_rooms_top_level_messages_since_this_start_are_read_once_whichever_path_first() -> None:
    clock = [NOW]
    cursors, handled = Cursors({}), []
    cursors.since(NOW - LOOKBACK_DAYS)
    history = [
        {"ts": f"{NOW - 30:.6f}", "text": "before this start: the backlog"},
        {"ts": f"{NOW + 5:.6f}", "text": "dropped envelope"},
        {"ts": f"{NOW + 6:.6f}", "text": "handled live"},
    ]
    feed = _live(cursors, handled)
    asked: list[str] = []

    def read_room(channel: str, oldest: str, _turn: object) -> list[dict[str, Any]]:
        asked.append(oldest)
        return [m for m in history if float(m["ts"]) > float(oldest)]

    catch_up = CatchUp(
        lambda: [],
        lambda *_: [],
        feed,
        cursors,
        rooms=lambda: ["C9"],
        read_room=read_room,
        clock=lambda: clock[0],
    )
    feed({"channel": "C9", **history[2]})  # the live path got this one
    clock[0] = NOW + 60
    assert catch_up.run() == 2  # both offered; the live one is not handled again
    assert handled == [history[2]["ts"], history[1]["ts"]]
    assert asked == [f"{NOW:.6f}"]
    assert catch_up.run() == 0 and asked[-1] == history[2]["ts"]  # from the room's cursor


LOOKBACK_DAYS = 3 * 24 * 3600.0


def test_a_kickoff_typed_while_the_bot_was_down_is_read_at_its_restart() -> None:
    """The room was read once at start and found quiet; after that only the live path
    heard it. A message typed while the bot was down is read by the next activation's
    catch-up (from where the last one left the room, not from its own start), once."""
    store: dict[str, Any] = {}
    history: list[dict[str, Any]] = []
    handled: list[str] = []

    def activation(now: float) -> CatchUp:
        cursors = Cursors(store)
        return CatchUp(
            lambda: [],
            lambda *_: [],
            _live(cursors, handled),
            cursors,
            rooms=lambda: ["C9"],
            read_room=lambda _c, oldest, _t: [m for m in history if float(m["ts"]) > float(oldest)],
            clock=lambda: now,
        )

    first = activation(NOW)
    assert first.run() == 0  # the room is quiet at start
    history.append({"channel": "C9", "ts": f"{NOW + 10:.6f}", "text": "heard live"})
    _live(Cursors(store), handled)(history[-1])
    history.append({"channel": "C9", "ts": f"{NOW + 20:.6f}", "text": "typed while down"})
    assert activation(NOW + 30).run() == 2  # both offered; the live one not handled again
    assert handled == [f"{NOW + 10:.6f}", f"{NOW + 20:.6f}"]


@settings(deadline=None, max_examples=60)
@given(st.lists(st.tuples(st.integers(1, 40), st.booleans()), min_size=1, max_size=25))
def test_whatever_the_interleaving_each_message_is_handled_exactly_once(
    arrivals: list[tuple[int, bool]],
) -> None:
    """Messages arrive live or not at all (dropped); catch-ups run between them."""
    cursors, handled = Cursors({}), []
    cursors.since(NOW - LOOKBACK_DAYS)
    feed = _live(cursors, handled)
    kept: list[dict[str, Any]] = []
    catch_up = CatchUp(
        lambda: [],
        lambda *_: [],
        feed,
        cursors,
        rooms=lambda: ["C9"],
        read_room=lambda _c, oldest, _t: [m for m in kept if float(m["ts"]) > float(oldest)],
        clock=lambda: NOW,
    )
    for n, (gap, live) in enumerate(arrivals):
        message = {"channel": "C9", "ts": f"{NOW + n + 1:.6f}"}
        kept.append(message)
        if live:
            feed(message)
        if gap % 3 == 0:
            catch_up.run()
    catch_up.run()
    assert sorted(handled) == sorted(m["ts"] for m in kept)


def test_read_settings_as_the_loop_names_them() -> None:
    errors: list[str] = []
    warnings: list[str] = []
    assert parse(None, errors, warnings) == ReadSettings(DEFAULT_SECONDS, DEFAULT_BEATS)
    said = parse({"catchUpSeconds": 5, "splitCheckBeats": 9, "mode": "socket"}, errors, warnings)
    assert said == ReadSettings(MIN_SECONDS, 5, "socket") and errors == []
    assert [w.split(":")[0] for w in warnings] == [
        "slack.read.catchUpSeconds",
        "slack.read.splitCheckBeats",
    ]
    assert parse({"catchUpSeconds": 0, "splitCheckBeats": 0}, errors, warnings) == ReadSettings(
        0, 0
    )
    parse({"catchUpSeconds": "often", "pace": 1}, errors, warnings)
    assert [e.split(":")[0] for e in errors] == ["slack.read.pace", "slack.read.catchUpSeconds"]


def test_a_cycle_that_fails_does_not_stop_the_split_check_nor_the_next_cycle() -> None:
    checked: list[int] = []

    def broken() -> int:
        raise RuntimeError("slack down")

    cycle = Reconcile(broken, 60, check=lambda: checked.append(1))
    cycle.now()
    cycle.now()
    assert checked == [1, 1]


def test_at_connect_only_no_thread_is_started() -> None:
    cycle = Reconcile(lambda: 0, 0)
    cycle.start()
    assert cycle._thread is None


@pytest.mark.parametrize("beats", [1, 2, 5])
def test_the_status_line_says_the_cadence(beats: int) -> None:
    assert "every 900 s" in ReadSettings(900, beats).describe()
    assert "at connect only" in ReadSettings(0, beats).describe()


def test_a_spent_budget_is_waited_out_not_a_thread_skipped() -> None:
    """Slack's budget for ``conversations.replies`` is spent after two reads: the third
    thread is read once it has a turn again, never passed over."""
    cursors, asked, turns = Cursors({}), [], iter([0.0, 0.0, 0.01, 0.0])

    def read(channel: str, thread: str, oldest: str) -> list[dict[str, Any]]:
        asked.append(thread)
        return []

    threads = [("C1", f"{NOW - n:.6f}") for n in range(3)]
    catch_up = CatchUp(
        lambda: threads,
        read,
        lambda _m: None,
        cursors,
        turn=lambda _m: next(turns),
        clock=lambda: NOW,
    )
    catch_up.run()
    assert asked == [t for _c, t in threads]
    catch_up.stop()
    assert catch_up.run() == 0 and asked == [t for _c, t in threads]  # stopped: no more reads


def test_stop_waits_for_the_cycle_under_way_and_posts_no_heartbeat_after_it() -> None:
    """On deactivate the stores close right after: no cycle may still be reading them."""
    entered, release = threading.Event(), threading.Event()
    ended: list[str] = []
    checked: list[int] = []

    def catch_up() -> int:
        entered.set()
        release.wait(30)
        ended.append("cycle")
        return 0

    cycle = Reconcile(catch_up, 0.01, check=lambda: checked.append(1))
    cycle.start()
    assert entered.wait(30)
    seen: list[list[str]] = []
    stopped: list[bool] = []

    def stop() -> None:
        stopped.append(cycle.stop())
        seen.append(list(ended))

    stopper = threading.Thread(target=stop)
    stopper.start()
    # The cycle ends only once the stop is asked: let go before, it would post its check.
    wait_for(cycle._stopped.is_set, 30, "the stop to be asked")
    release.set()
    stopper.join(30)
    assert stopped == [True] and seen == [["cycle"]]  # stop returned after the cycle ended
    assert checked == []  # stopped during the catch-up: no split check posted after


def test_a_plugin_activated_again_reconciles_again() -> None:
    ran = threading.Event()

    def catch_up() -> int:
        ran.set()
        return 0

    cycle = Reconcile(catch_up, 0.01)
    cycle.start()
    assert ran.wait(30)
    assert cycle.stop()
    ran.clear()
    cycle.start()
    assert ran.wait(30)
    assert cycle.stop()


def test_a_catch_up_at_connect_tells_the_loops_log_what_it_read_and_a_periodic_one_does_not(
    tmp_path: Path,
) -> None:
    records = sqlite_records(tmp_path / "queues.sqlite3")
    cursors, clock = Cursors({}), [NOW]
    cursors.since(NOW - LOOKBACK_DAYS)
    thread = f"{NOW - 100:.6f}"
    replies = [{"ts": f"{NOW - 50:.6f}"}, {"ts": f"{NOW - 40:.6f}"}]
    top = [{"ts": f"{NOW + 5:.6f}"}]

    def read(_channel: str, _thread: str, oldest: str) -> list[dict[str, Any]]:
        return [m for m in replies if float(m["ts"]) > float(oldest)]

    def read_room(_channel: str, oldest: str, _turn: object) -> list[dict[str, Any]]:
        return [m for m in top if float(m["ts"]) > float(oldest)]

    catch_up = CatchUp(
        lambda: [("C1", thread)],
        read,
        lambda _m: None,
        cursors,
        rooms=lambda: ["C9"],
        read_room=read_room,
        clock=lambda: clock[0],
        records=ChannelLog(records),
    )
    clock[0] = NOW + 60
    catch_up.soon()  # the connect's
    kept = wait_for(lambda: records.since(0).records, 5.0, "the catch-up's record")
    ((record,),) = [kept]
    assert record["event"] == "channel.caught_up"
    assert record["fields"] == {"channel": "slack", "replies": 2, "processed": 3}
    replies.append({"ts": f"{NOW + 30:.6f}"})
    assert catch_up.run() == 1  # the reconcile's: read, and not a record of its own
    catch_up.soon()  # the next connect's, with nothing new: said too, as 0
    wait_for(lambda: len(records.since(0).records) == 2, 5.0, "the second connect's record")
    assert records.since(0).records[1]["fields"] == {
        "channel": "slack",
        "replies": 0,
        "processed": 0,
    }
