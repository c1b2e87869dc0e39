"""A slash command's answer within Slack's 3 s, whatever the peer behind it does.

``/the-loop status``, ``restart``, ``upgrade`` and ``standing`` ask the-loop before they
answer, and the answer is the acknowledgement Slack waits 3 s for. Each request's timeout
bounds its connect and each read, not the whole: a peer that answers a byte at a time
would hold the answer past Slack's wait, and the member would be told it failed. So the
asking runs on a small pool of its own and the answer goes when it is done or at
:data:`ANSWER_WITHIN`, whichever comes first — then saying the-loop has not answered yet.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

#: Seconds the asking may take before the member is answered without it (Slack waits 3).
ANSWER_WITHIN = 2.5
#: Askings under way at once; past it a command waits its turn, answered in time all the same.
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="theloop-slash")


def within(work: Callable[[], str], late: str, seconds: float = ANSWER_WITHIN) -> str:
    """What ``work`` answers, if it does within ``seconds``; else ``late``."""
    future = _POOL.submit(work)
    try:
        return future.result(timeout=seconds)
    except TimeoutError:
        return late
