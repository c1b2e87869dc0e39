"""Slack's per-method limits kept in a file, so a restarted bot goes on where the last one was.

Slack keeps each method's budget for the app, whatever happens to the process that spent
it. A bot killed after spending its burst and started again at once would otherwise think
it had the whole burst again, and spend it into a wall of 429s. :class:`KeptLimits` writes
what it spent (and any hold or 429 Slack answered) after each turn it hands out, and a bot
started on the same data directory takes it over, aged by the time it was down. The file
is a cache: one that cannot be read is ignored (with a warning), one that cannot be
written never stops a call.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from looproom.slack.limits import TIERS, MethodLimits, Tier

log = logging.getLogger(__name__)

FILE_NAME = "slack-limits.json"


class KeptLimits(MethodLimits):
    """:class:`MethodLimits` that outlive the process, in the file at ``path``."""

    def __init__(
        self,
        path: Path,
        tiers: Mapping[str, Tier] = TIERS,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(tiers, clock)
        self._path, self._wall = Path(path), wall
        self._writing = threading.Lock()
        self._warned = False
        self._take_over()

    def reserve(self, method: str, most: float) -> float | None:
        wait = super().reserve(method, most)
        if wait is not None and method in self._tiers:  # a turn of a budget was spent
            self._keep()
        return wait

    def hold(self, method: str, seconds: float) -> None:
        super().hold(method, seconds)
        self._keep()

    def _take_over(self) -> None:
        try:
            kept = json.loads(self._path.read_text(encoding="utf-8"))
            self.inherit(kept["methods"], self._wall())
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning(
                "Slack's limits as last kept (%s) are unreadable, ignored: %s", self._path, exc
            )

    def _keep(self) -> None:
        """Write what was spent: a whole new file put in place, never half a file."""
        body = json.dumps({"methods": self.spent(self._wall())})
        partial = self._path.with_name(self._path.name + ".partial")
        with self._writing:
            try:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                partial.write_text(body, encoding="utf-8")
                os.replace(partial, self._path)
            except OSError as exc:
                if not self._warned:
                    self._warned = True
                    log.warning("cannot keep Slack's limits in %s: %s", self._path, exc)
