"""The second-consumer check, run by the listener itself: a suspected split is shown.

Slack spreads an app's events across every Socket Mode connection it has open, so a
second copy of the bot silently takes a share of what people type, and nothing on this
side leaves a trace. The doctor's probe (:mod:`looproom.doctor.echo`) measures it when
someone asks; :class:`SplitWatch` runs the same probe on the bot's own connection after
each periodic reconcile (``slack.read.splitCheckBeats`` heartbeats into the default room,
deleted after), and keeps the answer where people look: ``!theloop status``, the
doctor's report, the log and the-loop's event log (``channel.split_suspected`` /
``channel.split_cleared``) — a warning on the first short check and every
:data:`ESCALATE_EVERY` after it, one line when it clears. A shortfall is evidence, never
proof. Counts and times only: never a token, a nonce or a message's text.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from looproom import times
from looproom.doctor import echo
from looproom.doctor.findings import EVIDENCE, OK, Finding
from looproom.loop_log.channel import ChannelLog
from looproom.slack.transport import SlackTransport

log = logging.getLogger(__name__)

#: After the first warning, one more every this many consecutive short checks.
ESCALATE_EVERY = 6


@dataclass(frozen=True)
class Check:
    """One check: how many heartbeats came back of how many, and when."""

    at: float
    beats: int
    heard: int
    error: str = ""

    @property
    def short(self) -> bool:
        return not self.error and self.heard < self.beats


class SplitWatch:
    """Heartbeats on the bot's own Socket Mode client, and the last verdicts."""

    def __init__(
        self,
        slack: SlackTransport,
        room: Callable[[], str],
        socket: Any,
        beats: int,
        *,
        window: float = echo.WINDOW,
        clock: Callable[[], float] = time.time,
        records: ChannelLog | None = None,
    ) -> None:
        """``room``: the default room's id (``""``: none, then nothing is posted);
        ``records``: where the warning and its clearing are kept for the-loop's log."""
        self._records = records if records is not None else ChannelLog(None)
        self._slack, self._room, self._socket = slack, room, socket
        self._beats, self._window, self._clock = beats, window, clock
        self._lock = threading.Lock()
        self._last: Check | None = None
        self._short_run = 0

    def check(self) -> Check | None:
        """Post the heartbeats and count their echoes; None when there is nowhere to post."""
        channel = self._room()
        if not channel or self._beats <= 0:
            return None
        echoes = echo.Echoes(self._socket, own=False)
        heard = echo.listen(self._slack, channel, echoes, beats=self._beats, window=self._window)
        done = Check(
            self._clock(),
            self._beats,
            heard if isinstance(heard, int) else 0,
            heard if isinstance(heard, str) else "",
        )
        self._note(done, channel)
        return done

    def _note(self, done: Check, channel: str) -> None:
        with self._lock:
            was_short = self._short_run
            self._short_run = self._short_run + 1 if done.short else 0
            self._last, run = done, self._short_run
        check = f"{channel}:{done.at:.6f}"
        if done.short and (run == 1 or run % ESCALATE_EVERY == 1):
            found = self.finding()
            log.warning("theloop: second consumer suspected — %s", found.says)
            self._records.split_suspected(
                check, channel, done.beats, done.heard, self._window, run, found.remedy
            )
        elif was_short and not done.short and not done.error:
            log.info("theloop: second-consumer check clear again (%d/%d)", done.heard, done.beats)
            self._records.split_cleared(check, channel, done.beats, done.heard, was_short)

    def line(self) -> str:
        """``!theloop status``'s line."""
        last = self._last
        if last is None:
            return "split check: not run yet (it runs after each reconcile)"
        when = times.clock(last.at)
        if last.error:
            return f"split check ({when}): could not post the heartbeats ({last.error})"
        if last.short and last.heard == 0:
            return (
                f"split check ({when}): SUSPECTED — none of {last.beats} heartbeats came back: "
                "another connection of this app may be taking its events, or message events "
                "are off for this room (evidence, not proof) — see `!theloop doctor`"
            )
        if last.short:
            return (
                f"split check ({when}): SUSPECTED — {last.heard}/{last.beats} heartbeats came "
                "back; another connection of this app may be taking part of its events "
                "(evidence, not proof) — see `!theloop doctor`"
            )
        return f"split check ({when}): ok — {last.heard}/{last.beats} heartbeats came back"

    def finding(self) -> Finding:
        """The last check as one of the doctor's findings."""
        last = self._last
        subject = "second consumer (the listener's own check)"
        if last is None or last.error:
            return Finding(EVIDENCE, subject, self.line().split(": ", 1)[1])
        found = echo.verdict(last.heard, last.beats, self._window)
        if found.level == OK:
            return Finding(OK, subject, f"at {times.clock(last.at)}: {found.says}")
        return Finding(EVIDENCE, subject, f"at {times.clock(last.at)}: {found.says}", found.remedy)
