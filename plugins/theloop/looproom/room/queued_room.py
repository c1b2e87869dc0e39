"""A room caller that makes the desk's and the relay's Slack calls in order on its own thread.

A decision is stored before anything is said about it (DESIGN §3.3); what the desk and
the relay then say in the room — 👀, ✅, an edited message, a refusal only the member
sees — are Slack calls, and Slack can be slow or ask us to wait (429). Made inline, they
held the desk's lock and delayed the answer to Slack's signed HTTP press, which Slack
wants within 3 s. :class:`QueuedRoom` takes those calls and makes them on one thread of
its own, in the order they were asked: the caller returns as soon as the decision is
stored, and 👀 still comes before ✅.
"""

from __future__ import annotations

import logging
import queue
import threading
from typing import Any, Protocol

from looproom.decide.desk import Room
from looproom.relay.relay import Acks

__all__ = ["QueuedRoom"]

log = logging.getLogger(__name__)


class Voice(Acks, Room, Protocol):
    """Everything the desk (``Room``) and the relay (``Acks``) say in a room."""


class QueuedRoom:
    """``room``'s calls, made in order on one worker thread; the caller never waits."""

    def __init__(self, room: Voice, name: str = "theloop-room") -> None:
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
            try:
                getattr(self._room, name)(*args)
            except Exception as exc:  # a room that cannot be told never stops the others
                log.warning("room call %s failed: %s", name, exc)
