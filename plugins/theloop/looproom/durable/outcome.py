"""What one delivery attempt came to (Delivered, RetryLater, Failed), and the outlet protocol.

An :class:`Outlet` posts one event (Slack, or a plain chat backend) and says what happened:
:class:`Delivered`, :class:`RetryLater` (a Slack outage, a 429 with its Retry-After) or
:class:`Failed` (this event can never be posted as it is: park it for an admin). The worker
turns that answer into queue state, so an outlet never touches the queue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from looproom.inbound.events import Event


@dataclass(frozen=True)
class Delivered:
    """Posted (or found already posted, when ``maybe_delivered`` was reconciled)."""

    detail: str = ""


@dataclass(frozen=True)
class RetryLater:
    """Not posted now; try again after ``after`` seconds, or the worker's backoff if None.

    ``uncertain``: it may have been posted after all, so the next attempt reconciles first.
    """

    reason: str
    after: float | None = None
    uncertain: bool = False


@dataclass(frozen=True)
class Failed:
    """Never postable as it is; the item is parked, visible in ``!theloop queue``."""

    reason: str


Outcome = Delivered | RetryLater | Failed


class Outlet(Protocol):
    """Posts one event; ``maybe_delivered`` = it was in flight when the bot last stopped."""

    def deliver(self, event: Event, *, maybe_delivered: bool) -> Outcome: ...
