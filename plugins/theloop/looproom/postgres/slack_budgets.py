"""Slack's limits kept by every replica together: one budget per channel and per method.

Slack counts an app's calls whatever process makes them: two replicas each pacing its own
posts would together post into a room twice as fast as Slack allows. In the shared mode
each channel's posts (:class:`SharedPacer`) and each tiered method's calls
(:class:`SharedLimits`) draw on one row of ``theloop_slack_budgets``: a turn is taken with
the row locked (``SELECT … FOR UPDATE``), so two replicas never both take a budget's last
turn, and a 429's hold written there holds every replica. Times are wall-clock seconds,
the one clock the replicas share.

While the database cannot be reached no turn is handed out (the caller waits, as for a
spent budget): the bot cannot know what the other replica spent meanwhile. What only
steers one process (which of its threads finds out, after a 429, whether Slack takes more)
stays in the process.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from looproom.durable.sqlite import StorageError
from looproom.postgres.database import Database
from looproom.slack.limits import TIERS, MethodLimits, Tier
from looproom.slack.pacer import Pacer

log = logging.getLogger(__name__)

#: A row's key: a channel's posts, or a method's calls.
POSTS, CALLS = "post ", "call "
#: The replicas' pace together, a share of Slack's: a tenth under it, for a channel's posts
#: (0.9 a second) and for each tiered method's calls (its tier's rate). A turn is taken a
#: database round trip or two before its call leaves, and those differ between replicas
#: (and from call to call on a busy machine), so two calls whose turns are Slack's spacing
#: apart could reach Slack closer together, and the second be refused once the budget's
#: burst is spent (two catch-ups reading every thread at once spend a tier's).
SHARED_PACE = 0.9


class SharedBudgets:
    """The budgets' rows: each read and written under its row's lock."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._said = False

    @contextmanager
    def locked(self, key: str) -> Iterator[dict[str, float]]:
        """The budget ``key`` as last written, its row locked; what the block leaves in the
        mapping is written back when it ends. A :class:`StorageError` when unreachable."""
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO theloop_slack_budgets (key, kept) VALUES (%s, '{}')"
                " ON CONFLICT (key) DO NOTHING",
                (key,),
            )
            row = db.execute(
                "SELECT kept FROM theloop_slack_budgets WHERE key = %s FOR UPDATE", (key,)
            ).fetchone()
            kept = _entry(row[0] if row else "{}")
            yield kept
            db.execute(
                "UPDATE theloop_slack_budgets SET kept = %s WHERE key = %s",
                (json.dumps(kept), key),
            )
        self._answered()

    def read(self, key: str) -> dict[str, float] | None:
        """The budget ``key`` as last written, not locked; None when unreachable."""
        try:
            with self._db.connection() as db:
                row = db.execute(
                    "SELECT kept FROM theloop_slack_budgets WHERE key = %s", (key,)
                ).fetchone()
        except StorageError as exc:
            self.unreachable(exc)
            return None
        self._answered()
        return _entry(row[0] if row else "{}")

    def unreachable(self, exc: StorageError) -> None:
        """Said once an outage, not at every call: no turn is handed out until it answers."""
        if not self._said:
            self._said = True
            log.warning("Slack's shared budgets: %s; no call until the database answers", exc)

    def _answered(self) -> None:
        if self._said:
            self._said = False
            log.info("Slack's shared budgets: the database answers again")


def _entry(text: str) -> dict[str, float]:
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {str(k): float(v) for k, v in found.items() if isinstance(v, (int, float))}


class SharedPacer(Pacer):
    """A :class:`Pacer` whose channels' buckets and holds are every replica's."""

    def __init__(
        self,
        budgets: SharedBudgets,
        rate: float = SHARED_PACE,
        burst: float = 3.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(rate, burst, clock)
        self._budgets = budgets

    def reserve(self, key: str, most: float) -> float | None:
        try:
            with self._budgets.locked(POSTS + key) as kept:
                self._take_over(key, kept)
                wait = super().reserve(key, most)
                kept.clear()
                kept.update(self._kept(key))
        except StorageError as exc:
            self._budgets.unreachable(exc)
            return None
        return wait

    def hold(self, key: str, seconds: float) -> None:
        try:
            with self._budgets.locked(POSTS + key) as kept:
                self._take_over(key, kept)
                super().hold(key, seconds)
                kept.clear()
                kept.update(self._kept(key))
        except StorageError as exc:  # this replica holds it at least
            self._budgets.unreachable(exc)
            super().hold(key, seconds)

    def wait(self, key: str) -> float:
        self._refresh(key)
        return super().wait(key)

    def held(self, key: str) -> float:
        self._refresh(key)
        return super().held(key)

    def _refresh(self, key: str) -> None:
        kept = self._budgets.read(POSTS + key)
        if kept is not None:
            self._take_over(key, kept)

    def _take_over(self, key: str, kept: Mapping[str, float]) -> None:
        with self._lock:
            _put(self._buckets, key, kept)
            _put_hold(self._held, key, kept)

    def _kept(self, key: str) -> dict[str, float]:
        with self._lock:
            return _row(self._buckets, self._held, key)


class SharedLimits(MethodLimits):
    """:class:`MethodLimits` whose methods' buckets, holds and last 429s are every
    replica's; the one-at-a-time after a 429 is each process's own. Each tier is kept at
    :data:`SHARED_PACE` of its rate (its burst whole)."""

    def __init__(
        self,
        budgets: SharedBudgets,
        tiers: Mapping[str, Tier] = TIERS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        paced = {m: Tier(t.per_minute * SHARED_PACE, t.burst) for m, t in tiers.items()}
        super().__init__(paced, clock)
        self._budgets = budgets

    def reserve(self, method: str, most: float) -> float | None:
        if method not in self._tiers:  # no budget to take, only a 429's hold to heed
            self._refresh(method)
            return super().reserve(method, most)
        try:
            with self._budgets.locked(CALLS + method) as kept:
                self._take_over(method, kept)
                wait = super().reserve(method, most)
                kept.clear()
                kept.update(self._kept(method))
        except StorageError as exc:
            self._budgets.unreachable(exc)
            return None
        return wait

    def hold(self, method: str, seconds: float, *, retried: bool = False) -> None:
        try:
            with self._budgets.locked(CALLS + method) as kept:
                self._take_over(method, kept)
                super().hold(method, seconds, retried=retried)
                kept.clear()
                kept.update(self._kept(method))
        except StorageError as exc:  # this replica holds it at least
            self._budgets.unreachable(exc)
            super().hold(method, seconds, retried=retried)

    def wait(self, method: str) -> float:
        self._refresh(method)
        return super().wait(method)

    def halted(self, method: str) -> bool:
        self._refresh(method)
        return super().halted(method)

    def _refresh(self, method: str) -> None:
        kept = self._budgets.read(CALLS + method)
        if kept is not None:
            self._take_over(method, kept)

    def _take_over(self, method: str, kept: Mapping[str, float]) -> None:
        with self._lock:
            _put(self._buckets, method, kept)
            _put_hold(self._held, method, kept)
            if "limited" in kept:
                self._limited[method] = kept["limited"]

    def _kept(self, method: str) -> dict[str, float]:
        with self._lock:
            row = _row(self._buckets, self._held, method)
            if method in self._limited:
                row["limited"] = self._limited[method]
            return row


def _put(buckets: dict[str, tuple[float, float]], key: str, kept: Mapping[str, Any]) -> None:
    """The row's bucket as this process's (none written: a full one, the default)."""
    if "tokens" in kept and "at" in kept:
        buckets[key] = (float(kept["tokens"]), float(kept["at"]))
    else:
        buckets.pop(key, None)


def _put_hold(held: dict[str, float], key: str, kept: Mapping[str, Any]) -> None:
    if "held" in kept:
        held[key] = float(kept["held"])
    else:
        held.pop(key, None)


def _row(
    buckets: Mapping[str, tuple[float, float]], held: Mapping[str, float], key: str
) -> dict[str, float]:
    row: dict[str, float] = {}
    if key in buckets:
        row["tokens"], row["at"] = buckets[key]
    if key in held:
        row["held"] = held[key]
    return row
