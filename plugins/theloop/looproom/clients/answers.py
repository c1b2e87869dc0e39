"""What a client's method returns: the typed value asked for, or why there is none.

Every method of :mod:`looproom.clients.github` and :mod:`looproom.clients.the_loop` answers
a :class:`Read`: ``value`` is the answer in the shape asked for (an object, a list of
objects, a login), else ``None``; :meth:`Read.outcome` reads any other answer — a refusal,
a rate limit, a redirect not followed, a body past the cap, a 2xx of another shape — into
the queue's terms, in one place.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from looproom.durable.outcome import Failed, Outcome
from looproom.http.client import HttpResult, outcome_of

T = TypeVar("T")


@dataclass(frozen=True)
class Read(Generic[T]):
    """One answer of a peer: ``value`` when it is what was asked for; ``more`` when a
    listing has a next page."""

    value: T | None
    answer: HttpResult
    peer: str
    what: str
    more: bool = False

    @property
    def status(self) -> int:
        return self.answer.status

    @property
    def ok(self) -> bool:
        return self.value is not None

    def outcome(self, now: float | None = None) -> Outcome | None:
        """``None`` when ``value`` is there; else what the answer means for the queue."""
        if self.value is not None:
            return None
        failed = outcome_of(self.answer, self.peer, time.time() if now is None else now)
        if failed is not None:
            return failed
        return Failed(f"{self.peer} answered {self.status} without {self.what}")


def read_object(
    answer: HttpResult, peer: str, what: str, *, status: int = 0
) -> Read[dict[str, Any]]:
    """A JSON object, from a 2xx (or exactly ``status``)."""
    data = answer.json() if _good(answer, status) else None
    return Read(data if isinstance(data, dict) else None, answer, peer, what)


def read_list(answer: HttpResult, peer: str, what: str) -> Read[list[Any]]:
    """A JSON list, from a 200."""
    data = answer.json() if answer.status == 200 else None
    return Read(data if isinstance(data, list) else None, answer, peer, what)


def _good(answer: HttpResult, status: int) -> bool:
    return answer.status == status if status else 200 <= answer.status < 300
