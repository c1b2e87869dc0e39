"""What the webhook answered lately: enough for the doctor to tell a wrong secret apart."""

from __future__ import annotations

import threading
from collections import Counter, deque

KEEP = 100  # the last answers only: a bound, and recent is what the doctor asks about


class Recent:
    """The statuses of the webhook's last :data:`KEEP` answers (thread-safe)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._statuses: deque[int] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def note(self, status: int) -> None:
        with self._lock:
            self._statuses.append(status)

    def counts(self) -> Counter[int]:
        """How many of the last answers had each status."""
        with self._lock:
            return Counter(self._statuses)
