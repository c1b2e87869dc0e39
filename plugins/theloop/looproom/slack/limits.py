"""Slack's per-method limits, kept for the whole workspace by every delivery slot at once.

Slack limits each Web API method per app and workspace, by tier: tier 2 about 20 calls a
minute, tier 3 (``chat.update``, ``reactions.add``, ``conversations.*``) about 50, tier 4
about 100 — floors ("50+"), with sporadic bursts welcome but not sized.
``chat.postMessage`` is special (about one a second per channel): the transport's pacer
keeps it per channel. One :class:`MethodLimits` serves every slot, so twenty rooms draw on
one budget instead of each finding the limit with a 429; and a 429's ``Retry-After`` holds
only the method it answered, workspace-wide, never the other methods or the rooms' posts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Tier:
    """A method's budget: ``per_minute`` on average, ``burst`` calls at once."""

    per_minute: float
    burst: float


#: Slack publishes each tier's floor; a burst of two minutes' floor is the bot's assumption,
#: and a 429 (with its Retry-After) corrects it for everyone at once.
TIER_2, TIER_3, TIER_4 = Tier(20, 40), Tier(50, 100), Tier(100, 200)
#: The tiered methods the bot calls, as Slack's method reference ranks them.
TIERS: Mapping[str, Tier] = {
    "chat.update": TIER_3,
    "chat.delete": TIER_3,
    "reactions.add": TIER_3,
    "conversations.history": TIER_3,
    "conversations.replies": TIER_3,
    "conversations.info": TIER_3,
    "users.conversations": TIER_3,
    "conversations.list": TIER_2,
    "users.list": TIER_2,
    "chat.postEphemeral": TIER_4,
    "views.open": TIER_4,
}


class MethodLimits:
    """A token bucket per tiered method and a hold per method a 429 named (thread-safe).

    Memory is bounded by the methods the bot calls, whatever the number of rooms.
    """

    def __init__(
        self, tiers: Mapping[str, Tier] = TIERS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._tiers, self._clock = dict(tiers), clock
        self._buckets: dict[str, tuple[float, float]] = {}  # method -> (tokens, at)
        self._held: dict[str, float] = {}  # method -> no call before this time (a 429)
        self._lock = threading.Lock()

    def reserve(self, method: str, most: float) -> float | None:
        """Seconds to wait before calling ``method``, its turn taken; ``None`` (nothing
        taken) when that would be longer than ``most``."""
        with self._lock:
            now = self._clock()
            wait, tokens = self._wait(method, now)
            if wait > most:
                return None
            if method in self._tiers:
                # Taken now, spent when the wait is over: the next caller queues behind it.
                self._buckets[method] = (tokens - 1.0, now)
            return wait

    def wait(self, method: str) -> float:
        """Seconds until ``method`` may be called again (0.0: now), nothing taken."""
        with self._lock:
            return self._wait(method, self._clock())[0]

    def _wait(self, method: str, now: float) -> tuple[float, float]:
        """Seconds until ``method`` may be called, and the tokens its bucket holds now."""
        held = max(0.0, self._held.get(method, now) - now)
        tier = self._tiers.get(method)
        if tier is None:
            return held, 0.0
        rate = tier.per_minute / 60.0
        tokens, at = self._buckets.get(method, (tier.burst, now))
        tokens = min(tier.burst, tokens + (now - at) * rate)
        return max(held, 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate), tokens

    def hold(self, method: str, seconds: float) -> None:
        """No call of ``method`` during ``seconds``: Slack answered it 429 with this wait."""
        with self._lock:
            now = self._clock()
            self._held = {m: t for m, t in self._held.items() if t > now}
            self._held[method] = max(self._held.get(method, now), now + max(0.0, seconds))
