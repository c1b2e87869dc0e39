"""The claim a delivery runs under, asked again right before a side effect leaves.

In the shared mode a replica's claim on an item lapses when its heartbeat stops — the
process frozen (``SIGSTOP``, a VM paused, a stalled clock) longer than a lease — and
another replica takes the item over. The frozen one, continued, would go on with the
delivery it was in the middle of and post a second time. So the worker says, for the
thread that delivers, how to ask whether the claim is still held (:func:`holding`), and
a call with an effect asks right before it leaves (:func:`still_held`; the Slack
transport before a write, the HTTP client before anything but a GET). A thread
delivering nothing, or a queue whose claims cannot be taken over (SQLite, one process),
is always held.

What remains: a freeze between the question and the call's bytes leaving — a few
instructions, no wait — is not caught; nothing short of Slack taking a fencing token is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_local = threading.local()


@contextmanager
def holding(check: Callable[[], bool]) -> Iterator[None]:
    """Within this block, on this thread, ``check`` says whether the claim is still held."""
    previous = getattr(_local, "check", None)
    _local.check = check
    try:
        yield
    finally:
        _local.check = previous


def still_held() -> bool:
    """Whether this thread may still act on its claim (True when it delivers none)."""
    check: Callable[[], bool] | None = getattr(_local, "check", None)
    return True if check is None else check()
