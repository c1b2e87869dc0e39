"""The listener's split check in the-loop's event log: a warning on the first short check
and every sixth after it, one clearing when a short run ends — as the-loop's own ladder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looproom.doctor import split_watch
from looproom.doctor.split_watch import SplitWatch
from looproom.loop_log.book import sqlite_records
from looproom.loop_log.channel import ChannelLog

ROOM = "C0LOOP0001"


def _watch(tmp_path: Path, heard: list[int | str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """A watch whose heartbeats come back as ``heard`` says, check after check (the probe
    itself, posting into Slack and listening, is the doctor's and tested there)."""
    answers = iter(heard)
    monkeypatch.setattr(split_watch.echo, "listen", lambda *_a, **_k: next(answers))
    clock = iter(float(n) for n in range(1_800_000_000, 1_800_000_100))
    records = sqlite_records(tmp_path / "queues.sqlite3")
    watch = SplitWatch(
        None,  # type: ignore[arg-type]
        lambda: ROOM,
        object(),
        2,
        window=8.0,
        clock=lambda: next(clock),
        records=ChannelLog(records),
    )
    return watch, records


def test_a_short_run_warns_first_and_every_sixth_and_its_end_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heard: list[int | str] = [2, 1, 0, 1, 1, 1, 1, 1, 2, 2]  # 7 short, then clean twice
    watch, records = _watch(tmp_path, heard, monkeypatch)
    for _ in heard:
        watch.check()
    kept = [(r["event"], r["level"], r["fields"]) for r in records.since(0).records]
    assert [(event, level) for event, level, _ in kept] == [
        ("channel.split_suspected", "warning"),
        ("channel.split_suspected", "warning"),
        ("channel.split_cleared", "info"),
    ]
    first, sixth_after, cleared = (fields for _, _, fields in kept)
    assert {k: v for k, v in first.items() if k != "remedy"} == {
        "channel": "slack",
        "channel_id": ROOM,
        "beats": 2,
        "echoed": 1,
        "window_seconds": 8.0,
        "consecutive": 1,
    }
    assert "same app token" in first["remedy"]
    assert (sixth_after["consecutive"], sixth_after["echoed"]) == (7, 1)
    assert cleared == {"channel": "slack", "channel_id": ROOM, "beats": 2, "echoed": 2, "after": 7}


def test_a_check_that_could_not_post_is_no_split_and_no_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    watch, records = _watch(tmp_path, ["not_in_channel", 2], monkeypatch)
    watch.check()
    watch.check()
    assert records.since(0).records == []
