"""Waiting in tests: for a condition, with a deadline, never for a fixed time.

A test that waits for something to happen polls for it and fails naming what it waited
for. A test that checks something does *not* happen does not wait at all: it makes a
second request that the bot handles after the first, waits for that one's effect, and
then looks for the first one's (the tests call that second request a sentinel).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: How often a condition is checked again: often enough to add no visible delay.
INTERVAL = 0.02


def wait_for(
    predicate: Callable[[], T],
    timeout: float,
    what: str | Callable[[], str],
    *,
    interval: float = INTERVAL,
) -> T:
    """Call ``predicate`` until it returns something truthy, and return that.

    ``timeout`` is a bound on waiting, never an expectation of speed. When it passes, an
    ``AssertionError`` names ``what`` was awaited (a callable is asked only then, so it can
    describe the state the wait ended in).
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            described = what() if callable(what) else what
            raise AssertionError(f"timed out after {timeout:g} s waiting for {described}")
        time.sleep(min(interval, left))  # the pause between two checks
