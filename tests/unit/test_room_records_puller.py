"""loopside's ``theloop_records``: the room's records appended to the-loop's event log once each.

The log is written through the-loop's own ``EventLog`` and read back with the-loop's own
reader (``the_loop.eventlog.read_events``), as ``the-loop events`` reads it. The bot's
answers are pages as its route gives them; what is tested is that no record is doubled
or skipped whatever stops a run, and that nothing but ``channel.*`` gets in.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import theloop_records
from hypothesis import given, settings
from hypothesis import strategies as st
from the_loop import eventlog
from theloop_records import LogUnwritable, State, pull

ITEM = "github:acme/api#7"


class Bot:
    """The bot's records, served a page at a time past a cursor as its route serves them."""

    def __init__(self, count: int, page: int = 2) -> None:
        self.records = [_record(n) for n in range(1, count + 1)]
        self.page, self.reads = page, 0

    def read(self, after: int) -> Mapping[str, Any]:
        self.reads += 1
        if after > max((r["seq"] for r in self.records), default=0):
            after = 0  # a cursor past every number is another store's: from the first
        past = [r for r in self.records if r["seq"] > after]
        shown = past[: self.page]
        nxt = shown[-1]["seq"] if shown else after
        return {"records": shown, "next": nxt, "missed": 0, "more": len(past) > self.page}


def _record(n: int, event: str = "channel.posted") -> dict[str, Any]:
    return {
        "seq": n,
        "id": f"posted:e{n}",
        "event": event,
        "ts": f"2026-12-07T10:00:{n:02d}.000Z",
        "level": "info",
        "fields": {"channel": "slack", "work_item": ITEM, "event_type": "decision-pending"},
    }


def _log(tmp_path: Path) -> tuple[Path, eventlog.EventLog]:
    path = tmp_path / "the-loop" / "logs" / "events.jsonl"
    return path, eventlog.EventLog(path=path, source="theloop-room")


def _ids(path: Path) -> list[str]:
    return [r["room_record"] for r in eventlog.read_events(path, types=["channel.*"])]


def test_each_record_is_appended_once_in_order_however_often_it_runs(tmp_path: Path) -> None:
    path, log = _log(tmp_path)
    bot, state = Bot(5), State(tmp_path / "state")
    assert pull(bot.read, state, path, log.emit).appended == 5
    again = pull(bot.read, state, path, log.emit)
    assert (again.appended, again.cursor) == (0, 5)
    assert _ids(path) == [f"posted:e{n}" for n in range(1, 6)]
    first = next(eventlog.read_events(path, types=["channel.posted"]))
    assert first["ts"] == "2026-12-07T10:00:01.000Z"  # the room's time, not the append's
    assert (first["source"], first["channel"], first["work_item"]) == (
        "theloop-room",
        "slack",
        ITEM,
    )


def test_a_run_stopped_between_appending_and_its_cursor_appends_nothing_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, log = _log(tmp_path)
    bot, state = Bot(3, page=3), State(tmp_path / "state")
    real_write, writes = State.write, []

    def dies_moving_the_cursor(self: State, kept: Mapping[str, Any]) -> None:
        writes.append(dict(kept))
        if "appending" not in kept:
            raise KeyboardInterrupt("killed")  # after the page was appended
        real_write(self, kept)

    monkeypatch.setattr(State, "write", dies_moving_the_cursor)
    with pytest.raises(KeyboardInterrupt):
        pull(bot.read, state, path, log.emit)
    assert len(_ids(path)) == 3
    monkeypatch.setattr(State, "write", real_write)
    bot.records.append(_record(4))  # and the room went on meanwhile
    done = pull(bot.read, state, path, log.emit)
    assert (done.appended, done.present) == (1, 3)
    assert _ids(path) == [f"posted:e{n}" for n in range(1, 5)]


@settings(max_examples=40, deadline=None)
@given(count=st.integers(0, 9), page=st.integers(1, 4), stop_at=st.integers(0, 12))
def test_whatever_emit_a_run_dies_at_every_record_lands_once(
    tmp_path_factory: pytest.TempPathFactory, count: int, page: int, stop_at: int
) -> None:
    place = tmp_path_factory.mktemp("run")
    path, log = _log(place)
    bot, state = Bot(count, page), State(place / "state")
    emitted = [0]

    def dies_at(event: str, **fields: Any) -> None:
        if emitted[0] == stop_at:
            raise KeyboardInterrupt("killed")
        emitted[0] += 1
        log.emit(event, **fields)

    with pytest.raises(KeyboardInterrupt) if stop_at < count else _nothing():
        pull(bot.read, state, path, dies_at)
    pull(bot.read, state, path, log.emit)
    assert _ids(path) == [f"posted:e{n}" for n in range(1, count + 1)]


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_bot_whose_records_started_afresh_is_read_again_without_doubling_a_line(
    tmp_path: Path,
) -> None:
    """The bot's data restored from a backup: its numbers start lower than the cursor, and
    it serves records the log already holds beside ones it never had."""
    path, log = _log(tmp_path)
    bot, state = Bot(5), State(tmp_path / "state")
    pull(bot.read, state, path, log.emit)
    for n in range(6):  # the-loop's own lines after them: the old ones are far back now
        eventlog.EventLog(path=path, source="poll").emit("poll.item_filtered", item_number=n)
    restored = Bot(3)
    restored.records.append({**_record(4), "id": "posted:after-the-restore"})
    done = pull(restored.read, state, path, log.emit)
    assert (done.appended, done.present, done.cursor) == (1, 3, 4)
    assert _ids(path) == [*(f"posted:e{n}" for n in range(1, 6)), "posted:after-the-restore"]


def test_a_log_that_takes_nothing_keeps_the_cursor_where_it_was(tmp_path: Path) -> None:
    path, _ = _log(tmp_path)
    bot, state = Bot(2), State(tmp_path / "state")
    # the-loop's writer swallows a failed write: here it writes nothing at all.
    with pytest.raises(LogUnwritable, match="2 record"):
        pull(bot.read, state, path, lambda *_a, **_k: None)
    assert state.read()["after"] == 0


def test_only_channel_records_get_into_the_loops_log(tmp_path: Path) -> None:
    path, log = _log(tmp_path)
    bot = Bot(0)
    forged = {**_record(1, event="dispatch.succeeded"), "id": "forged"}
    odd_ts = {**_record(2), "id": "odd", "ts": "yesterday"}
    bot.records = [forged, odd_ts, _record(3)]
    pull(bot.read, State(tmp_path / "state"), path, log.emit)
    assert [r["event"] for r in eventlog.read_events(path)] == ["channel.posted"]
    assert theloop_records.acceptable(forged) == "'dispatch.succeeded' is not a channel.* record"


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"error": "x" * 4083}, ""),  # at the cap, with its key and quotes
        ({"error": "x" * 4084}, "fields over 4096 characters"),
        ({"nested": {"a": 1}}, "a field that is not a string, number or list of them"),
        ({"channels": ["slack", ["deeper"]]}, "a field that is not a string, number or list"),
    ],
)
def test_a_record_larger_or_deeper_than_the_rooms_ids_and_counts_is_not_appended(
    fields: dict[str, Any], why: str
) -> None:
    said = theloop_records.acceptable({**_record(1), "fields": fields})
    assert said.startswith(why) and bool(said) == bool(why)


def test_a_record_cannot_rewrite_the_envelope(tmp_path: Path) -> None:
    path, log = _log(tmp_path)
    bot = Bot(1)
    bot.records[0]["fields"].update(source="gh-webhook", pid=1, event="x", level="error")
    pull(bot.read, State(tmp_path / "state"), path, log.emit)
    (line,) = list(eventlog.read_events(path))
    assert (line["source"], line["event"], line["level"]) == (
        "theloop-room",
        "channel.posted",
        "info",
    )


@pytest.mark.parametrize(
    ("given_url", "read_at"),
    [
        ("http://bot:3141", "http://bot:3141/theloop/room-records"),
        ("https://bot.example.com/theloop/events", "https://bot.example.com/theloop/room-records"),
        (
            "https://x.example/prefix/theloop/events",
            "https://x.example/prefix/theloop/room-records",
        ),
        ("http://bot:3141/theloop/room-records", "http://bot:3141/theloop/room-records"),
    ],
)
def test_the_bots_webhook_url_is_where_its_records_are_read(given_url: str, read_at: str) -> None:
    assert theloop_records.records_url(given_url) == read_at
