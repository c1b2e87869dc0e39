"""A room caller that makes the desk's and the relay's Slack calls in order on its own thread.

A decision is stored before anything is said about it; what the desk and
the relay then say in the room — 👀, ✅, an edited message, a refusal only the member
sees — are Slack calls, and Slack can be slow or ask us to wait (429). Made inline, they
held the desk's lock and delayed the answer to Slack's signed HTTP press, which Slack
wants within 3 s. :class:`QueuedSpeaker` takes those calls and makes them on one thread of
its own, in the order they were asked: the caller returns as soon as the decision is
stored, and 👀 still comes before ✅.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Speaker(Protocol):
    """What the desk and the relay say in a room: a reaction, a threaded reply, a line
    only one member sees, an edited message. Slack's and a plain chat's implement it."""

    def react(self, channel: str, ts: str, name: str) -> None: ...

    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None: ...

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None: ...


def quietly(call: Callable[..., None], *args: Any) -> None:
    """Make one room call; a failure is logged, never raised: a room that cannot be told
    must not undo a decision already stored, nor stop the calls after it."""
    try:
        call(*args)
    except Exception as exc:  # any transport failure: what was stored stands
        log.warning("room call %s failed: %s", getattr(call, "__name__", ""), exc)


class QueuedSpeaker:
    """``room``'s calls, made in order on one worker thread; the caller never waits."""

    def __init__(self, room: Speaker, name: str = "theloop-room") -> None:
        self._room = room
        self._calls: queue.SimpleQueue[tuple[str, tuple[Any, ...]] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def react(self, channel: str, ts: str, name: str) -> None:
        self._calls.put(("react", (channel, ts, name)))

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._calls.put(("reply", (channel, thread_ts, text)))

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._calls.put(("tell", (channel, member, text, thread_ts)))

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self._calls.put(("update", (channel, ts, text, blocks)))

    def close(self, timeout: float = 10.0) -> bool:
        """Say what was asked, then stop; ``False`` if that took longer than ``timeout``."""
        self._calls.put(None)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while (call := self._calls.get()) is not None:
            name, args = call
            quietly(getattr(self._room, name), *args)
