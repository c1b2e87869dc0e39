"""Slack's per-method limits, kept for the whole workspace by every delivery slot at once.

Slack limits each Web API method per app and workspace, by tier: tier 2 about 20 calls a
minute, tier 3 (``chat.update``, ``reactions.add``, ``conversations.*``) about 50, tier 4
about 100 — floors ("50+"), with sporadic bursts welcome but not sized.
``chat.postMessage`` is special (about one a second per channel): the transport's pacer
keeps it per channel. One :class:`MethodLimits` serves every slot, so twenty rooms draw on
one budget instead of each finding the limit with a 429; and a 429's ``Retry-After`` holds
only the method it answered, workspace-wide, never the other methods or the rooms' posts.

A 429 also says the bot's guess of the burst was too generous: once the hold is over the
method goes one call at a time — the next call alone, every other slot waiting — until
Slack takes a call again, and then at the tier's steady rate without a burst (for ten
minutes after the last 429). So slots that meet the limit together do not all come back
together and meet it again; and at that steady rate each call leaves a spacing after the
one before, even when slots woken late for their turns (a stalled process) would go at once.

A caller refused a turn (a delivery, which goes back to its queue for the wait) is
remembered as wanting one until a moment after its wait: work that can wait (the parents'
cards) asks :meth:`MethodLimits.wanted` and leaves the turns to it meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: How long one call may take to find out whether Slack takes more before another may: a
#: call that never answers (a thread gone) must not hold its method for good.
FINDING_OUT_LEASE = 60.0
#: After a 429 a method keeps Slack's steady rate without a burst, until it has gone this
#: long without one: the burst Slack allowed was smaller than the bot's guess.
STEADY_AFTER_429 = 600.0
#: The longest Retry-After hold a restarted bot inherits (a clock set far ahead must not
#: hold a method for hours).
LONGEST_INHERITED_HOLD = 120.0
#: How long after its wait a caller refused a turn is expected back for one (a delivery
#: claimed again from its queue).
COMEBACK = 2.0


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
    "views.publish": TIER_4,  # each member's App Home tab
}
#: The history methods, and how many messages a page of theirs carries (Slack's most).
HISTORY_METHODS, HISTORY_PAGE = ("conversations.history", "conversations.replies"), 200
#: Those methods for an app distributed outside the Slack Marketplace (new installations
#: since 29 May 2025, existing ones from 3 March 2026): one call a minute, 15 to a page.
OUTSIDE_MARKETPLACE, OUTSIDE_MARKETPLACE_PAGE = Tier(1, 1), 15


def outside_marketplace(tiers: Mapping[str, Tier] = TIERS) -> dict[str, Tier]:
    """``tiers`` with the history methods at :data:`OUTSIDE_MARKETPLACE`'s pace."""
    return {**tiers, **{method: OUTSIDE_MARKETPLACE for method in HISTORY_METHODS}}


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
        # Methods Slack answered 429 and has not taken a call of since -> the thread whose
        # call is finding out (0: none yet) and until when it may. Only that one calls.
        self._careful: dict[str, tuple[int, float]] = {}
        self._limited: dict[str, float] = {}  # method -> when Slack last answered it 429
        self._wanted: dict[str, float] = {}  # method -> until when a caller refused may return
        self._turns: dict[tuple[str, int], float] = {}  # (method, thread) -> its turn taken
        self._left: dict[str, float] = {}  # method -> when its last call left
        self._lock = threading.Lock()

    def reserve(self, method: str, most: float) -> float | None:
        """Seconds to wait before calling ``method``, its turn taken; ``None`` (nothing
        taken) when that would be longer than ``most``, or while another thread's call is
        finding out after a 429 (then this thread's, once the hold is over)."""
        with self._lock:
            now = self._clock()
            if self._other_finding_out(method, now):
                self._want(method, now + self._spacing(method))
                return None
            wait, tokens = self._wait(method, now)
            if wait > most:
                self._want(method, now + wait)
                return None
            if method in self._tiers:
                # Taken now, spent when the wait is over: the next caller queues behind it.
                self._buckets[method] = (tokens - 1.0, now)
                self._turns[(method, threading.get_ident())] = now + wait
            if method in self._careful:
                self._careful[method] = (threading.get_ident(), now + wait + FINDING_OUT_LEASE)
            return wait

    def leave(self, method: str) -> float:
        """Seconds this thread's call of ``method``, its turn waited, waits still before it
        leaves: none, but at the steady rate after a 429 a spacing after the call before —
        slots woken late for their turns together leave one by one, not in a burst."""
        with self._lock:
            now = self._clock()
            if method not in self._tiers:
                return 0.0
            turn = max(now, self._turns.get((method, threading.get_ident()), now))
            leaves = turn
            if self._steady(method, now) and method in self._left:
                leaves = max(turn, self._left[method] + self._spacing(method))
            self._left[method] = leaves
            return leaves - turn

    def wait(self, method: str) -> float:
        """Seconds until ``method`` may be called again (0.0: now), nothing taken; while
        another thread's call finds out, at least the method's spacing."""
        with self._lock:
            now = self._clock()
            wait = self._wait(method, now)[0]
            if self._other_finding_out(method, now):
                wait = max(wait, self._spacing(method))
            return wait

    def wanted(self, method: str) -> float:
        """Seconds during which a caller refused a turn of ``method`` may come back for one
        (0.0: none): work that can wait leaves the turns to it until then."""
        with self._lock:
            now = self._clock()
            return max(0.0, self._wanted.get(method, now) - now)

    def held(self, method: str) -> float:
        """Seconds a 429's ``Retry-After`` still holds ``method`` (0.0: none)."""
        with self._lock:
            now = self._clock()
            return max(0.0, self._held.get(method, now) - now)

    def halted(self, method: str) -> bool:
        """Whether a call of ``method`` whose turn came must not go after all: a 429
        meanwhile holds it, or another thread's call is finding out whether Slack takes more."""
        with self._lock:
            now = self._clock()
            return self._held.get(method, now) > now or self._other_finding_out(method, now)

    def others_finding_out(self, method: str) -> bool:
        """Whether another thread's call of ``method`` is finding out, after a 429, whether
        Slack takes more: then this thread's 429 is not retried inline beside it."""
        with self._lock:
            return self._other_finding_out(method, self._clock())

    def find_out(self, method: str) -> bool:
        """Whether this thread's call of ``method``, answered 429, is the one to find out
        whether Slack takes more — claimed at once (True), so that slots answered 429
        together do not all retry together — or another thread's already is (False)."""
        with self._lock:
            now = self._clock()
            if self._other_finding_out(method, now):
                return False
            self._careful[method] = (threading.get_ident(), now + FINDING_OUT_LEASE)
            return True

    def hold(self, method: str, seconds: float, *, retried: bool = False) -> None:
        """No call of ``method`` during ``seconds``: Slack answered this thread's call 429
        with this wait. The budget is spent; from then on one call finds out alone whether
        Slack takes more: this thread's (retried inline, or its next), unless another
        thread's already is. ``retried``: slack_sdk retries this call inline once the wait
        is over, without a turn — it is the one call Slack takes then."""
        with self._lock:
            now = self._clock()
            self._held = {m: t for m, t in self._held.items() if t > now}
            until = max(self._held.get(method, now), now + max(0.0, seconds))
            self._held[method] = until
            self._limited[method] = now
            self._left.pop(method, None)  # the next call goes at Slack's word, then spaced
            if method in self._tiers:
                # Slack's Retry-After is when it takes one call again, and no more then.
                self._buckets[method] = (0.0 if retried else 1.0, until)
            if not self._other_finding_out(method, now):
                self._careful[method] = (threading.get_ident(), until + FINDING_OUT_LEASE)

    def answered(self, method: str, *, limited: bool) -> None:
        """Slack answered this thread's call of ``method``: ``limited`` (429, or not
        reached) or taken. The first call Slack takes after a 429 ends the one at a time;
        a call on its way before the 429 was not finding out, and tells nothing."""
        with self._lock:
            self._turns.pop((method, threading.get_ident()), None)
            finder, _until = self._careful.get(method, (0, 0.0))
            if finder != threading.get_ident():
                return
            if limited:
                self._careful[method] = (0, 0.0)  # the next call finds out
            else:
                del self._careful[method]

    def spent(self, wall: float) -> dict[str, dict[str, float]]:
        """What a bot started after this one must know of Slack's budgets, at wall-clock
        time ``wall``: each method's tokens and since when, its hold and its last 429
        (wall-clock seconds). Slack's budgets outlive the process that spent them."""
        with self._lock:
            to_wall = wall - self._clock()
            kept: dict[str, dict[str, float]] = {}
            for method, (tokens, at) in self._buckets.items():
                kept.setdefault(method, {}).update(tokens=tokens, at=at + to_wall)
            for name, times in (("held", self._held), ("limited", self._limited)):
                for method, at in times.items():
                    kept.setdefault(method, {})[name] = at + to_wall
            return kept

    def inherit(self, kept: Mapping[str, Any], wall: float) -> None:
        """Take over what :meth:`spent` said at an earlier wall-clock time; ``wall`` is now.
        Times are never taken as later than now (a clock set back), holds at most
        :data:`LONGEST_INHERITED_HOLD` from now."""
        with self._lock:
            now = self._clock()
            to_clock = now - wall
            for method, entry in kept.items():
                if "tokens" in entry and "at" in entry:
                    at = min(now, float(entry["at"]) + to_clock)
                    self._buckets[str(method)] = (float(entry["tokens"]), at)
                if "held" in entry:
                    until = min(now + LONGEST_INHERITED_HOLD, float(entry["held"]) + to_clock)
                    if until > now:
                        self._held[str(method)] = until
                if "limited" in entry:
                    self._limited[str(method)] = min(now, float(entry["limited"]) + to_clock)

    def _want(self, method: str, turn: float) -> None:
        self._wanted[method] = max(self._wanted.get(method, turn), turn + COMEBACK)

    def _other_finding_out(self, method: str, now: float) -> bool:
        finder, until = self._careful.get(method, (0, 0.0))
        return finder not in (0, threading.get_ident()) and until > now

    def _steady(self, method: str, now: float) -> bool:
        """Whether ``method`` keeps its tier's rate without a burst: a 429 not long ago."""
        return now - self._limited.get(method, now - STEADY_AFTER_429) < STEADY_AFTER_429

    def _spacing(self, method: str) -> float:
        tier = self._tiers.get(method)
        return 60.0 / tier.per_minute if tier is not None else 1.0

    def _wait(self, method: str, now: float) -> tuple[float, float]:
        """Seconds until ``method`` may be called, and the tokens its bucket holds now."""
        held = max(0.0, self._held.get(method, now) - now)
        tier = self._tiers.get(method)
        if tier is None:
            return held, 0.0
        rate = tier.per_minute / 60.0
        burst = 1.0 if self._steady(method, now) else tier.burst
        tokens, at = self._buckets.get(method, (burst, now))
        tokens = min(burst, tokens + (now - at) * rate)
        return max(held, 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate), tokens
