"""The room's records for the-loop's event log: kept once each, read past a cursor, bounded.

Each behaviour is checked on SQLite (the embedded default) and on the shared PostgreSQL,
the two stores a deployment keeps them in.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from the_loop import eventlog

from looproom.durable.sqlite import StorageError
from looproom.loop_log import book, channel
from looproom.loop_log.book import Record, RoomRecords, postgres_records, sqlite_records
from looproom.loop_log.channel import ChannelLog
from looproom.postgres.database import Database
from looproom.postgres.schema import migrate

ITEM, OTHER = "github:acme/api#7", "github:acme/web#3"


@pytest.fixture(params=["sqlite", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], RoomRecords]:
    """A way to open the records' store, twice if a test wants two writers on one."""
    if request.param == "sqlite":
        return lambda: sqlite_records(tmp_path / "queues.sqlite3")
    url = request.getfixturevalue("database_url")
    databases: list[Database] = []

    def open_postgres() -> RoomRecords:
        database = Database(url)
        databases.append(database)
        with database.transaction() as connection:
            migrate(connection)
        return postgres_records(database)

    request.addfinalizer(lambda: [d.close() for d in databases])
    return open_postgres


def _record(n: int, rid: str = "") -> Record:
    return Record(rid or f"r{n}", "channel.posted", f"2026-12-07T10:00:{n:02d}.000Z")


def test_a_record_of_one_cause_is_kept_once(opened: Callable[[], RoomRecords]) -> None:
    records = opened()
    assert records.add(_record(1, "posted:e1"), ITEM) is True
    assert records.add(_record(2, "posted:e1"), ITEM) is False  # the same cause, again
    page = records.since(0)
    assert [r["id"] for r in page.records] == ["posted:e1"]
    assert page.records[0]["ts"] == "2026-12-07T10:00:01.000Z"


def test_two_writers_racing_on_one_cause_keep_it_once(opened: Callable[[], RoomRecords]) -> None:
    first, second = opened(), opened()
    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda w=w: results.append(w.add(_record(1, "reply:k"), ITEM)))
        for w in (first, second) * 4
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(True) == 1
    assert [r["id"] for r in first.since(0).records] == ["reply:k"]


def test_a_reader_gets_what_is_past_its_cursor_in_order_and_the_cursor_moves(
    opened: Callable[[], RoomRecords],
) -> None:
    records = opened()
    for n in range(1, 6):
        records.add(_record(n), ITEM)
    first = records.since(0, limit=3)
    assert [r["id"] for r in first.records] == ["r1", "r2", "r3"] and first.more
    second = records.since(first.next, limit=3)
    assert [r["id"] for r in second.records] == ["r4", "r5"] and not second.more
    assert records.since(second.next).records == []
    assert records.since(second.next).next == second.next  # nothing new: stays put


def test_a_cursor_from_a_store_started_afresh_reads_this_one_from_its_first_record(
    opened: Callable[[], RoomRecords],
) -> None:
    records = opened()
    assert records.since(7).records == [] and records.since(7).next == 0  # nothing kept yet
    records.add(_record(1), ITEM)
    records.add(_record(2), ITEM)
    assert [r["id"] for r in records.since(7).records] == ["r1", "r2"]  # 7 was another's
    assert records.since(2).records == []  # its own newest: nothing new


def test_a_page_exactly_the_limit_says_no_more_and_one_past_it_says_more(
    opened: Callable[[], RoomRecords],
) -> None:
    records = opened()
    for n in range(1, 4):
        records.add(_record(n), ITEM)
    assert not records.since(0, limit=3).more
    records.add(_record(4), ITEM)
    assert records.since(0, limit=3).more


def test_a_reader_sees_only_the_work_items_it_may_and_its_cursor_passes_the_rest(
    opened: Callable[[], RoomRecords],
) -> None:
    records = opened()
    records.add(_record(1), ITEM)
    records.add(_record(2), OTHER)
    records.add(_record(3), "")
    page = records.since(0, visible=lambda item: item == ITEM)
    assert [r["id"] for r in page.records] == ["r1"]
    assert records.since(page.next).records == []


def test_past_the_cap_the_oldest_go_and_a_reader_behind_is_told_how_many_it_missed(
    opened: Callable[[], RoomRecords], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(book, "KEEP", 3)
    records = opened()
    for n in range(1, 4):
        records.add(_record(n), ITEM)
    assert [r["id"] for r in records.since(0).records] == ["r1", "r2", "r3"]  # at the cap
    cursor = records.since(0, limit=1).next  # read r1
    records.add(_record(4), ITEM)
    records.add(_record(5), ITEM)  # two past the cap: r1 and r2 are gone
    page = records.since(cursor)
    assert [r["id"] for r in page.records] == ["r3", "r4", "r5"]
    assert page.missed == 1  # r2, never read


def test_every_record_the_room_writes_is_one_the_loop_names_with_its_fields(
    opened: Callable[[], RoomRecords],
) -> None:
    records = opened()
    log = ChannelLog(records, clock=lambda: 1_765_000_000.5)
    log.posted("e1", ITEM, "decision-pending", "C0LOOP0001", "1765000000.000100")
    log.post_failed("e2", ITEM, "decision-pending", "posting the event: channel_not_found")
    log.undelivered("e3", ITEM, "decision-pending", "posting the event: ratelimited")
    log.delivered_late("e3", ITEM, "decision-pending", 2, 30.4)
    log.reply_received("relay:k", ITEM, "U0ALICE01", "answer", "open", "C0LOOP0001")
    log.dropped("C0LOOP0001:1.2", "unauthorized", "U0BOB0001", ITEM, "C0LOOP0001", "1.1")
    log.context_recorded("relay:c", ITEM, "U0ALICE01", "1.1", 12, "C0LOOP0001")
    log.decision_recorded("relay:d", ITEM, "U0ALICE01", "1.1", "tech", "C0LOOP0001")
    log.thread_opened(ITEM, "C0LOOP0001", "1.1", "event")
    log.command_received("restart:t1", "U0ALICE01", "instance", "restart", {})
    log.command_completed("restart:t1", "U0ALICE01", "instance", "restart", {}, ok=False)
    page = records.since(0).records
    assert len(page) == 11 and all(r["event"] in eventlog.EVENT_TYPES for r in page)
    by_event = {r["event"]: r for r in page}
    assert by_event["channel.posted"]["fields"] == {
        "channel": "slack",
        "work_item": ITEM,
        "event_type": "decision-pending",
        "channel_id": "C0LOOP0001",
        "thread": "1765000000.000100",
    }
    assert by_event["channel.posted"]["ts"] == "2025-12-06T05:46:40.500Z"
    assert by_event["channel.dropped"]["fields"]["reason"] == "unauthorized-actor"
    assert by_event["channel.dropped"]["level"] == "warning"
    assert by_event["channel.delivered_late"]["fields"]["attempts"] == 2
    assert by_event["channel.undelivered"]["fields"]["channels"] == ["slack"]
    assert by_event["channel.reply_received"]["fields"]["actor"] == "U0ALICE01"
    assert by_event["channel.context_recorded"]["fields"]["count"] == 12
    assert by_event["channel.decision_recorded"]["fields"]["kind"] == "tech"
    assert by_event["channel.thread_opened"]["fields"]["origin"] == "event"
    assert by_event["channel.command_completed"]["fields"]["outcome"] == "failed"
    assert by_event["channel.command_completed"]["level"] == "warning"


def test_a_store_that_fails_costs_the_room_nothing(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Any:
        raise StorageError("queues.sqlite3", OSError(28, "No space left on device"))

    records = RoomRecords(broken)
    assert [records.add(_record(n), ITEM) for n in range(3)] == [False, False, False]
    warned = [r for r in caplog.records if "not kept" in r.getMessage()]
    assert len(warned) == 1 and "No space left" in warned[0].getMessage()
    assert records.has("r1") is False


def test_a_peers_long_error_is_cut_to_the_size_of_a_reason(tmp_path: Path) -> None:
    records = sqlite_records(tmp_path / "queues.sqlite3")
    log = ChannelLog(records)
    log.post_failed("e1", ITEM, "decision-pending", "x" * 300)
    log.post_failed("e2", ITEM, "decision-pending", "y" * 301)
    first, second = (r["fields"]["error"] for r in records.since(0).records)
    assert first == "x" * 300 and second == "y" * 299 + "…"


def test_a_level_the_loop_does_not_know_is_refused(tmp_path: Path) -> None:
    records = sqlite_records(tmp_path / "queues.sqlite3")
    with pytest.raises(ValueError, match="level 'loud'"):
        records.add(Record("x", "channel.posted", "2026-12-07T10:00:00.000Z", "loud"))


def test_the_rooms_own_records_carry_the_loops_names_and_fields(
    opened: Callable[[], RoomRecords],
) -> None:
    records = opened()
    log = ChannelLog(records, clock=lambda: 1_765_000_000.5)
    log.created("message:C1:10.0", ITEM, "U0ALICE01", "C0LOOP0001", "10.0")
    log.kickoff_asked("message:C1:11.0", "U0ALICE01", "C0LOOP0001", "11.0", "no-target", 3)
    log.caught_up("run-1", 4, 6)
    log.split_suspected("C1:1", "C0LOOP0001", 2, 0, 8.0, 1, "stop the other copy")
    log.split_cleared("C1:2", "C0LOOP0001", 2, 2, 1)
    page = records.since(0).records
    assert all(r["event"] in eventlog.EVENT_TYPES for r in page)
    fields = {r["event"]: set(r["fields"]) for r in page}
    # Each as the-loop's catalog lists it (channel_id beside, as on our other records).
    assert fields == {
        "channel.created": {"channel", "work_item", "actor", "thread", "channel_id"},
        "channel.kickoff_asked": {"channel", "actor", "thread", "kind", "count", "channel_id"},
        "channel.caught_up": {"channel", "replies", "processed"},
        "channel.split_suspected": {
            "channel",
            "channel_id",
            "beats",
            "echoed",
            "window_seconds",
            "consecutive",
            "remedy",
        },
        "channel.split_cleared": {"channel", "channel_id", "beats", "echoed", "after"},
    }
    assert [r["level"] for r in page] == ["info", "info", "info", "warning", "info"]
    log.caught_up("run-1", 4, 6)  # the same run said again: kept once
    assert len(records.since(0).records) == 5


def test_every_record_name_the_room_writes_is_in_the_loops_catalog() -> None:
    names = {v for v in vars(channel).values() if isinstance(v, str) and v.startswith("channel.")}
    assert len(names) == 20
    assert names <= set(eventlog.EVENT_TYPES)
