"""A time budget for drawing one message, so one heavy message never stalls the room.

The delivery worker posts one event at a time. Drawing markdown is usually milliseconds,
but a crafted text (hundreds of KB of ``![`` from anyone who may comment on an issue) can
cost seconds; every event behind it would wait. :class:`Budget` draws in a helper thread
and waits at most its budget: past it the message is posted with its plain-text fallback,
and the drawing left running is not waited for. While one is still running, the next
message goes straight to its fallback, so at most one drawing ever runs late.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds one drawing may take before its fallback is posted instead.
RENDER_BUDGET_SECONDS = 2.0


class Budget:
    """Runs drawings for at most ``seconds`` each, one late drawing at most at a time."""

    def __init__(self, seconds: float = RENDER_BUDGET_SECONDS) -> None:
        self.seconds = seconds
        self._late: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, draw: Callable[[], T], fallback: Callable[[], T], what: str = "") -> T:
        """``draw()`` if it ends within the budget, else ``fallback()``; an error in
        ``draw`` is raised as it would be without the budget."""
        with self._lock:
            if self._late is not None and self._late.is_alive():
                log.warning("render of %s skipped: an earlier one is still running", what)
                return fallback()
        done: list[T] = []
        failed: list[BaseException] = []

        def work() -> None:
            try:
                done.append(draw())
            except BaseException as exc:  # handed to the caller's thread
                failed.append(exc)

        thread = threading.Thread(target=work, name="theloop-render", daemon=True)
        thread.start()
        thread.join(self.seconds)
        if thread.is_alive():
            with self._lock:
                self._late = thread
            log.warning("render of %s over %.1f s: posted as plain text", what, self.seconds)
            return fallback()
        if failed:
            raise failed[0]
        return done[0]


#: The room's one budget: every message drawn for delivery shares it.
ROOM = Budget()
