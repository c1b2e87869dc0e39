"""What one delivery attempt came to: Delivered, RetryLater or Failed.

A delivery — an event posted to its room, a decision handed to its sink — says what
happened: :class:`Delivered`, :class:`RetryLater` (a Slack outage, a 429 with its
Retry-After) or :class:`Failed` (this item can never be delivered as it is: park it for
an admin). The worker turns that answer into queue state, so a delivery never touches
the queue.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Delivered:
    """Posted (or found already posted, when ``maybe_delivered`` was reconciled)."""

    detail: str = ""


@dataclass(frozen=True)
class RetryLater:
    """Not posted now; try again after ``after`` seconds, or the worker's backoff if None.

    ``uncertain``: it may have been posted after all, so the next attempt reconciles first.
    ``routine``: the wait is the plan, not a failure (pacing posts to a channel): the log
    does not warn about it.
    """

    reason: str
    after: float | None = None
    uncertain: bool = False
    routine: bool = False


@dataclass(frozen=True)
class Failed:
    """Never postable as it is; the item is parked, visible in ``!theloop queue``."""

    reason: str


Outcome = Delivered | RetryLater | Failed
