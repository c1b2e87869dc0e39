"""The room's voice off the caller's thread: in order, never blocking, never lost on close."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from looproom.slack.queued_speaker import QueuedSpeaker


class SlowRoom:
    """A room whose first call waits for ``go`` (Slack being slow); it records every call."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.threads: set[str] = set()

    def _record(self, name: str, *args: Any) -> None:
        self.threads.add(threading.current_thread().name)
        if not self.calls:
            self.go.wait()
        self.calls.append((name, args))

    def react(self, channel: str, ts: str, name: str) -> None:
        self._record("react", channel, ts, name)

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        if text == "boom":
            raise RuntimeError("Slack said no")
        self._record("reply", channel, thread_ts, text)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._record("tell", channel, member, text, thread_ts)

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self._record("update", channel, ts, text, blocks)


def test_the_caller_never_waits_on_a_slow_room_and_the_calls_keep_their_order() -> None:
    room = SlowRoom()
    voice = QueuedSpeaker(room)
    voice.react("C1", "1.0", "eyes")  # the room is stuck in this one…
    voice.update("C1", "1.0", "pressed", [])
    voice.tell("C1", "U1", "only you", "1.0")
    voice.react("C1", "1.0", "white_check_mark")
    assert room.calls == []  # …and yet every call above has returned
    room.go.set()
    assert voice.close()
    assert [name for name, _ in room.calls] == ["react", "update", "tell", "react"]
    assert room.calls[-1][1] == ("C1", "1.0", "white_check_mark")
    assert threading.current_thread().name not in room.threads


def test_a_call_that_fails_is_logged_and_the_next_ones_are_still_made(
    caplog: pytest.LogCaptureFixture,
) -> None:
    room = SlowRoom()
    room.go.set()
    voice = QueuedSpeaker(room)
    with caplog.at_level(logging.WARNING, logger="looproom.slack.queued_speaker"):
        voice.reply("C1", "1.0", "boom")
        voice.reply("C1", "1.0", "landed")
        assert voice.close()
    assert room.calls == [("reply", ("C1", "1.0", "landed"))]
    assert "room call reply failed: Slack said no" in caplog.text
