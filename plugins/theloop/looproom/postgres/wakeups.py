"""Waking the workers of every replica: a put or a settled item anywhere is heard here.

A worker with nothing to claim sleeps until its queue changes. In one process the queue
wakes it itself; an item put — or a work item freed by a settled one — on another replica
is told with PostgreSQL's ``NOTIFY`` on :data:`CHANNEL` (the queue's name as payload), and
each process keeps one connection that ``LISTEN``s and wakes the queue named. A lost
notification costs only latency: a sleeping worker looks again after its idle wait anyway,
and after the listening connection is re-opened every queue is woken once.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict

import psycopg

log = logging.getLogger(__name__)

CHANNEL = "theloop_queues"
#: How often the listener looks whether it was asked to stop.
_POLL = 0.25
_RECONNECT_CAP = 30.0


def notify(connection: psycopg.Connection, queue: str) -> None:
    """Tell every replica ``queue`` changed (on commit, when inside a transaction)."""
    connection.execute("SELECT pg_notify(%s, %s)", (CHANNEL, queue))


class Wakeups:
    """One listening connection for this process, and the waits it ends."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._waits: dict[str, list[threading.Event]] = defaultdict(list)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def register(self, queue: str, changed: threading.Event) -> None:
        """Set ``changed`` whenever any replica says ``queue`` changed."""
        with self._lock:
            self._waits[queue].append(changed)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="theloop-wakeups", daemon=True
                )
                self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(_POLL * 5)

    def _wake(self, queue: str | None) -> None:
        with self._lock:
            events = [e for name, es in self._waits.items() if queue in (None, name) for e in es]
        for event in events:
            event.set()

    def _run(self) -> None:
        delay = 1.0
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True, connect_timeout=5) as listener:
                    listener.execute(f"LISTEN {CHANNEL}")
                    self._wake(None)  # anything said while no one listened
                    delay = 1.0
                    while not self._stop.is_set():
                        for note in listener.notifies(timeout=_POLL):
                            self._wake(note.payload)
            except psycopg.Error as exc:
                log.debug("wakeups: listening failed (%s); again in %.0f s", exc, delay)
                self._stop.wait(delay)
                delay = min(_RECONNECT_CAP, delay * 2)
