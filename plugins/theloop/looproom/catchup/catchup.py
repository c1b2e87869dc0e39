"""Nothing typed is lost: after a reconnect, and at start, read what was missed.

While the bot is away — restarting, or its Socket Mode connection dropped — Slack does not
keep the messages it could not deliver. So each time the connection is (re)established,
every work item thread the bot keeps is read with ``conversations.replies`` from its
cursor on, and each message is fed through the very pipeline a live one takes. The cursor
(:class:`looproom.catchup.cursors.Cursors`) is shared with the live path: a message handled
live is not handled again here, nor the other way round.

A thread with no cursor yet is read back :data:`LOOKBACK` seconds at most, and never
before the bot first kept cursors: a bot that was away for longer does not act on day-old
words as if they were just said, and an upgrade does not act on words it passed over.

Every kept thread is read, newest first — not only the most recent ones. Rooms where a
top-level message is itself meant for the bot (a kickoff room; a room bound to one work
item) are read too, with ``conversations.history`` from their own cursor (:data:`TOP`,
shared with the live path the same way). A room with no cursor yet is read from this
activation's start only: its backlog never becomes a burst of new work items. Once read,
even quiet, it keeps its cursor, so the next activation reads on from there.

Each catch-up at a (re)connect is kept for the-loop's event log as ``channel.caught_up``
(how many thread replies, and how many messages in all, it read); the periodic reconcile's
runs are not, as the-loop's own listener writes one per connect only.

With no listener at all (``slack.read.mode: poll``) this is how the bot hears: the reconcile
runs it every ``slack.read.intervalSeconds``, each page waiting its turn at the pace Slack
gives the app; a thread longer than a page resumes next time where it stopped.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from looproom.catchup.cursors import Cursors
from looproom.loop_log.channel import ChannelLog

log = logging.getLogger(__name__)

LOOKBACK = 24 * 3600.0
#: The cursor of a room's top-level messages (beside its threads' cursors).
TOP = ""
#: The Slack methods the catch-up reads with, each with its own budget.
REPLIES, HISTORY = "conversations.replies", "conversations.history"

#: ``(channel, thread, oldest)`` → the replies after ``oldest``, oldest first; None: unreadable.
ReadThread = Callable[[str, str, str], "list[Mapping[str, Any]] | None"]
#: ``(channel, oldest, turn)`` → the room's top-level messages after ``oldest``, oldest
#: first; ``turn()`` waits for the budget before each page after the first (False: stop).
ReadRoom = Callable[[str, str, Callable[[], bool]], "list[Mapping[str, Any]] | None"]
#: One missed message, as Slack's message event (with its ``channel``), fed to the pipeline.
Feed = Callable[[Mapping[str, Any]], None]


class CatchUp:
    """Reads every kept thread since its cursor and feeds what it finds; one run at a time."""

    def __init__(
        self,
        threads: Callable[[], Sequence[tuple[str, str]]],
        read: ReadThread,
        feed: Feed,
        cursors: Cursors,
        *,
        rooms: Callable[[], Sequence[str]] = lambda: (),
        read_room: ReadRoom = lambda _c, _o, _t: [],
        turn: Callable[[str], float] = lambda _method: 0.0,
        clock: Callable[[], float] = time.time,
        pause: Callable[[float], object] | None = None,
        records: ChannelLog | None = None,
    ) -> None:
        """``rooms``: the rooms whose top-level messages are read too, by ``read_room``.
        ``turn(method)``: seconds until Slack's budget for that method has a call to
        spare — the catch-up waits its turn rather than skip a thread, and so leaves the
        budget's burst to the deliveries. ``pause(seconds)``: how it waits (a stop ends
        the wait), the budget's own clock in a test. ``records``: where each catch-up at
        a connect is kept for the-loop's event log."""
        self._records = records if records is not None else ChannelLog(None)
        self._threads, self._read, self._feed = threads, read, feed
        self._turn, self._stopped = turn, threading.Event()
        self._pause = pause or self._stopped.wait
        self._rooms, self._read_room = rooms, read_room
        self._cursors, self._clock = cursors, clock
        self._running = threading.Lock()
        #: A room read for the first time is read from here: this activation's start.
        self._started = clock()

    def run(self) -> int:
        """Catch up now; how many messages were fed (0 when a run is already going)."""
        return sum(self._counted() or (0, 0))

    def _counted(self) -> tuple[int, int] | None:
        """How many top-level messages and thread replies were fed; None when a run is
        already going."""
        if not self._running.acquire(blocking=False):
            return None
        try:
            # Asked even with no thread yet: from the first run on, nothing is passed over.
            since = self._cursors.since(self._clock())
            top = sum(self._room(channel, since) for channel in dict.fromkeys(self._rooms()))
            replies = sum(
                self._thread(channel, thread, since) for channel, thread in self._threads()
            )
            return top, replies
        finally:
            self._running.release()

    def stop(self) -> None:
        """No more reads: a run under way ends at its next wait."""
        self._stopped.set()

    def _wait_turn(self, method: str) -> bool:
        """Wait until Slack's budget spares a call of ``method``; False once stopped."""
        while not self._stopped.is_set():
            wait = self._turn(method)
            if wait <= 0:
                return True
            self._pause(min(wait, 60.0))
        return False

    def soon(self) -> None:
        """Catch up off the caller's thread (a Socket Mode listener must return at once)."""
        threading.Thread(target=self._logged, name="theloop-catchup", daemon=True).start()

    def _logged(self) -> None:
        try:
            counted = self._counted()
        except Exception:  # a bug must not take the listener down; the next run retries
            log.exception("theloop catch-up failed")
            return
        if counted is None:
            return  # the run under way is the catch-up this connect asked for
        top, replies = counted
        self._records.caught_up(uuid.uuid4().hex, replies, top + replies)
        fed = top + replies
        if fed:
            log.info("theloop catch-up: %d missed message(s) read", fed)

    def _thread(self, channel: str, thread: str, since: float) -> int:
        if not self._wait_turn(REPLIES):
            return 0
        floor = self._cursors.floor(channel, thread)
        oldest = max(float(floor or 0), self._clock() - LOOKBACK, since, float(thread))
        messages = self._read(channel, thread, f"{oldest:.6f}")
        if messages is None:
            log.warning("theloop catch-up: thread %s in %s could not be read", thread, channel)
            return 0
        for message in messages:
            self._feed({**message, "channel": channel, "thread_ts": thread})
        if messages:
            self._cursors.caught_up(channel, thread, str(messages[-1].get("ts") or ""))
        return len(messages)

    def _room(self, channel: str, since: float) -> int:
        if not self._wait_turn(HISTORY):
            return 0
        # First sight: from this activation on, never the room's backlog.
        floor = float(self._cursors.floor(channel, TOP) or self._started)
        oldest = max(floor, self._clock() - LOOKBACK, since)
        messages = self._read_room(channel, f"{oldest:.6f}", lambda: self._wait_turn(HISTORY))
        if messages is None:
            log.warning("theloop catch-up: room %s could not be read", channel)
            return 0
        for message in messages:
            self._feed({**message, "channel": channel})
        # Even a quiet room keeps where it was read from: the next activation reads on from
        # there, not from its own start, so nothing typed while the bot was down is passed
        # over (what the live path heard meanwhile is claimed, and not handled twice).
        read_to = str(messages[-1].get("ts") or "") if messages else f"{oldest:.6f}"
        self._cursors.caught_up(channel, TOP, read_to)
        return len(messages)
