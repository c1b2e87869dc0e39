"""The periodic reconcile while connected: the catch-up again, then the split check.

A connection can stay up and still lose a message — an envelope dropped on the way, or
handed to a second Socket Mode consumer of the same app — and Slack will not send it
again. So besides the catch-up at each connect, the catch-up runs every
``slack.read.catchUpSeconds`` (the-loop's key and default: 900; ``0`` is at connect only;
below 60 is raised to 60 — a safety net must not spend the rate limit of the rooms it
serves), and the listener's split check after it (``slack.read.splitCheckBeats``
heartbeats, default 2, at most 5, ``0`` off). The check rides the reconcile's cadence
rather than the connect: heartbeats are messages in a room people read, posted as seldom
as the safety net runs. The cursors are shared with the live path,
so a message is read exactly once whichever path comes first. Polling (``slack.read.mode:
poll``), there is no live path: the cycle runs every ``slack.read.intervalSeconds`` instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

#: How long a stop waits for a cycle under way (a catch-up ends at its next wait once stopped).
JOIN_SECONDS = 30.0


class Reconcile:
    """Every ``interval`` seconds, off the caller's thread: ``catch_up``, then ``check``."""

    def __init__(
        self,
        catch_up: Callable[[], int],
        interval: float,
        *,
        check: Callable[[], object] = lambda: None,
    ) -> None:
        self._catch_up, self._interval, self._check = catch_up, interval, check
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._interval > 0 and self._thread is None:
            self._stopped.clear()  # a deactivated plugin activated again reconciles again
            self._thread = threading.Thread(target=self._run, name="theloop-reconcile", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = JOIN_SECONDS) -> bool:
        """No more cycles, and the one under way finished: on deactivate the stores close
        next, and a cycle must not read or write them after. False if the cycle did not
        end within ``timeout`` (a Slack call that hangs); it is then left to die with
        the process rather than hold the deactivation."""
        self._stopped.set()
        thread, self._thread = self._thread, None
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        if thread.is_alive():
            log.warning("theloop reconcile: a cycle still running after %.0f s at stop", timeout)
            return False
        return True

    def now(self) -> None:
        """One cycle: the catch-up, then the split check. Never raises: a cycle that
        failed must not end the ones after it."""
        try:
            fed = self._catch_up()
            if fed:
                log.info("theloop reconcile: %d missed message(s) read", fed)
        except Exception:
            log.exception("theloop reconcile: the catch-up failed; the next cycle retries")
        if self._stopped.is_set():
            return  # stopped during the catch-up: no heartbeats posted on the way out
        try:
            self._check()
        except Exception:
            log.exception("theloop reconcile: the split check failed")

    def _run(self) -> None:
        while not self._stopped.wait(self._interval):
            self.now()
