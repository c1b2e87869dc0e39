"""A press over HTTP answered as soon as it is stored; what the room is told follows.

Slack waits 3 s for the answer to an interactive request, then tells the member it did
not go through. Socket Mode acknowledges a press once it is stored, before the room is
answered; over HTTP the same holds here: the press is handled on a thread of its own and
the HTTP answer waits only until the handler says it is stored (``taken``) or returns —
never for the room's answers after it (the pressed message edited, a line to the member,
a form opened), each a Slack call that may wait its turn. A press that failed before it
was stored raises here, so Slack is answered 500 and the member told.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

#: ``handle(payload, taken)``: takes a verified press, calling ``taken`` once it is stored.
Handler = Callable[[Mapping[str, Any], Callable[[], None]], None]

log = logging.getLogger(__name__)


def until_taken(handle: Handler, payload: Mapping[str, Any]) -> None:
    """Run ``handle`` on ``payload`` in a thread; return once the press is stored."""
    ready = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        try:
            handle(payload, ready.set)
        except Exception as exc:  # said to Slack, or logged once answered
            if ready.is_set():
                log.exception("a press failed after it was stored: %s", exc)
            else:
                failed.append(exc)
        finally:
            ready.set()

    threading.Thread(target=run, name="theloop-press", daemon=True).start()
    ready.wait()
    if failed:
        raise failed[0]
