"""Posting paced per channel: about one ``chat.postMessage`` a second, bursts allowed.

Every post takes its turn (:meth:`Pacer.reserve`, at once for the check and the take, so
slots posting to one room together never both take its last post); a caller that can wait
asks :meth:`Pacer.wait` first and hands a long wait to the queue rather than sleeping a
delivery slot. What it spent outlives the process (:meth:`Pacer.spent`,
:meth:`Pacer.inherit`): Slack counts a channel's posts whatever happens to the bot.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from looproom.slack.limits import LONGEST_INHERITED_HOLD


class Pacer:
    """A token bucket per channel: ``rate`` posts/s on average, ``burst`` at once.

    Slack allows about one ``chat.postMessage`` per second per channel with short bursts
    (its documented rate limit). A post takes its turn with :meth:`reserve`; a delivery asks
    :meth:`wait` first and, when it is not zero, returns ``RetryLater(after=wait)`` to the
    queue rather than sleeping.
    """

    _MAX_KEYS = 1000  # forget idle channels past this many (a full bucket is the default)

    def __init__(
        self, rate: float = 1.0, burst: float = 3.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate, self._burst, self._clock = rate, burst, clock
        self.clock = clock  # the transport's method limits keep the same time
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._held: dict[str, float] = {}  # key -> no post before this time (a 429)
        self._lock = threading.Lock()

    def _tokens(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (self._burst, now))
        return min(self._burst, tokens + (now - at) * self._rate)

    def _wait(self, key: str, now: float) -> float:
        tokens = self._tokens(key, now)
        held = max(0.0, self._held.get(key, now) - now)
        return max(held, 0.0 if tokens >= 1.0 else (1.0 - tokens) / self._rate)

    def wait(self, key: str) -> float:
        """Seconds until ``key`` may post (0.0: now), nothing taken."""
        with self._lock:
            return self._wait(key, self._clock())

    def held(self, key: str) -> float:
        """Seconds a 429's ``Retry-After`` still holds ``key`` (0.0: none)."""
        with self._lock:
            now = self._clock()
            return max(0.0, self._held.get(key, now) - now)

    def reserve(self, key: str, most: float) -> float | None:
        """Seconds to wait before posting to ``key``, its post taken; ``None`` (nothing
        taken) when that would be longer than ``most``."""
        with self._lock:
            now = self._clock()
            wait = self._wait(key, now)
            if wait > most:
                return None
            # Taken now, posted when the wait is over: the next post queues behind it.
            self._buckets[key] = (self._tokens(key, now) - 1.0, now)
            if len(self._buckets) > self._MAX_KEYS:
                self._forget_full(now)
            return wait

    def hold(self, key: str, seconds: float) -> None:
        """No post for ``key`` during ``seconds`` (Slack said 429 with this Retry-After).

        The burst is spent too: after the hold, one post at a time at the steady rate, so
        the work items posting to one room do not all come back at once.
        """
        with self._lock:
            now = self._clock()
            self._held = {k: t for k, t in self._held.items() if t > now}
            self._held[key] = max(self._held.get(key, now), now + seconds)
            self._buckets[key] = (min(1.0, self._tokens(key, now)), self._held[key])

    def spent(self, wall: float) -> dict[str, dict[str, float]]:
        """What a bot started after this one must know of the channels' posts, at wall-clock
        time ``wall``: each channel's tokens and since when, and its hold (wall-clock
        seconds). A full bucket is the default and is left out, so this stays as small as
        the channels posted to in the last few seconds."""
        with self._lock:
            now = self._clock()
            to_wall = wall - now
            kept: dict[str, dict[str, float]] = {}
            for key, (tokens, at) in self._buckets.items():
                if self._tokens(key, now) < self._burst:
                    kept[key] = {"tokens": tokens, "at": at + to_wall}
            for key, until in self._held.items():
                if until > now:
                    kept.setdefault(key, {})["held"] = until + to_wall
            return kept

    def inherit(self, kept: Mapping[str, Any], wall: float) -> None:
        """Take over what :meth:`spent` said at an earlier wall-clock time; ``wall`` is now.
        Times are never taken as later than now (a clock set back), holds at most
        :data:`LONGEST_INHERITED_HOLD` from now; a bucket a hold refills from its end."""
        with self._lock:
            now = self._clock()
            to_clock = now - wall
            for key, entry in kept.items():
                held = now
                if "held" in entry:
                    held = min(now + LONGEST_INHERITED_HOLD, float(entry["held"]) + to_clock)
                    if held > now:
                        self._held[str(key)] = held
                if "tokens" in entry and "at" in entry:
                    at = min(max(now, held), float(entry["at"]) + to_clock)
                    self._buckets[str(key)] = (float(entry["tokens"]), at)

    def _forget_full(self, now: float) -> None:
        full = [key for key in self._buckets if self._tokens(key, now) >= self._burst]
        for key in full:
            del self._buckets[key]
