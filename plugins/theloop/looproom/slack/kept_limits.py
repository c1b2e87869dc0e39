"""Slack's limits kept in a file, so a restarted bot goes on where the last one was.

Slack keeps each method's budget for the app, and each channel's posts, whatever happens to
the process that spent them. A bot killed after spending its burst and started again at
once would otherwise think it had the whole burst again, and spend it into a wall of 429s.
:class:`KeptLimits` (the methods' budgets) and :class:`KeptPacer` (the channels' posts)
have their :class:`Keeper` write what they spent (and any hold Slack asked for) after each
turn or post they hand out, and a bot started on the same data directory takes it over,
aged by the time it was down. One keeper writes both into one file, so two writers never
race on it. The file is a cache: one that cannot be read is ignored (with a warning), one
that cannot be written never stops a call.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from looproom.slack.limits import TIERS, MethodLimits, Tier
from looproom.slack.pacer import Pacer

log = logging.getLogger(__name__)

FILE_NAME = "slack-limits.json"
#: The file's keys: each part of Slack's limits under its own.
METHODS, CHANNELS = "methods", "channels"


class Spender(Protocol):
    """What spends one of Slack's budgets, and can say what it spent and take it over."""

    def spent(self, wall: float) -> dict[str, dict[str, float]]: ...

    def inherit(self, kept: Mapping[str, Any], wall: float) -> None: ...


class Keeper:
    """The one writer of the file at ``path``: every part attached to it, each under its own
    key, written together whenever one of them spends."""

    def __init__(self, path: Path, wall: Callable[[], float] = time.time) -> None:
        self.path, self._wall = Path(path), wall
        self._parts: dict[str, Spender] = {}
        self._writing = threading.Lock()
        self._warned = False
        self._last = self._read()

    def attach(self, name: str, part: Spender) -> None:
        """``part`` takes over what the file kept under ``name``, aged by the time since it
        was written, and is written under ``name`` from now on."""
        self._parts[name] = part
        try:
            part.inherit(self._last.get(name, {}), self._wall())
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            self._unreadable(exc)

    def keep(self) -> None:
        """Write what every part spent: a whole new file put in place, never half a file.
        Taken and written under one lock, so a later state is never overwritten by an
        earlier one."""
        partial = self.path.with_name(self.path.name + ".partial")
        with self._writing:
            wall = self._wall()
            body = json.dumps({name: part.spent(wall) for name, part in self._parts.items()})
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                partial.write_text(body, encoding="utf-8")
                os.replace(partial, self.path)
            except OSError as exc:
                if not self._warned:
                    self._warned = True
                    log.warning("cannot keep Slack's limits in %s: %s", self.path, exc)

    def _read(self) -> dict[str, Any]:
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self._unreadable(exc)
            return {}
        if not isinstance(kept, dict):
            self._unreadable(TypeError(f"not an object but {type(kept).__name__}"))
            return {}
        return kept

    def _unreadable(self, exc: Exception) -> None:
        log.warning("Slack's limits as last kept (%s) are unreadable, ignored: %s", self.path, exc)


class KeptLimits(MethodLimits):
    """:class:`MethodLimits` that outlive the process, kept by ``keeper``."""

    def __init__(
        self,
        keeper: Keeper,
        tiers: Mapping[str, Tier] = TIERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(tiers, clock)
        self._keeper = keeper
        keeper.attach(METHODS, self)

    def reserve(self, method: str, most: float) -> float | None:
        wait = super().reserve(method, most)
        if wait is not None and method in self._tiers:  # a turn of a budget was spent
            self._keeper.keep()
        return wait

    def hold(self, method: str, seconds: float, *, retried: bool = False) -> None:
        super().hold(method, seconds, retried=retried)
        self._keeper.keep()


class KeptPacer(Pacer):
    """A :class:`Pacer` whose channels' posts and holds outlive the process, kept by
    ``keeper``: written before the post it takes is made, so a kill never forgets one."""

    def __init__(
        self,
        keeper: Keeper,
        rate: float = 1.0,
        burst: float = 3.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(rate, burst, clock)
        self._keeper = keeper
        keeper.attach(CHANNELS, self)

    def reserve(self, key: str, most: float) -> float | None:
        wait = super().reserve(key, most)
        if wait is not None:  # a post was taken
            self._keeper.keep()
        return wait

    def hold(self, key: str, seconds: float) -> None:
        super().hold(key, seconds)
        self._keeper.keep()
