"""Each work item's own collaborators, by Slack member id, kept in the plugin's storage.

``add-collaborator`` typed by a decider puts people on one work item's roster: they may
reply and add context on that work item only (``looproom.decide.authorization``,
``Policy.on``). The roster survives restarts (Errbot's storage) and ends with the work
item — at its closure or its ``cleanup``, as the-loop clears its own. Bounded: past
:data:`ROSTER_CAP` work items the least recently changed roster goes, which only ever
takes rights away.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for, stored_mapping

ROSTER_CAP = 500
_KEY = "roster"


class Roster:
    """Work item → its collaborators' member ids; thread-safe over one store."""

    def __init__(self, store: MutableMapping[str, Any], *, cap: int = ROSTER_CAP) -> None:
        self._store, self._cap = store, cap
        self._lock = lock_for(store)

    def add(self, work_item: str, members: Iterable[str]) -> None:
        """Put ``members`` on ``work_item``'s roster."""
        with self._lock:
            rosters = self._all()
            kept = sorted({*rosters.get(work_item, ()), *members})
            self._store[_KEY] = touched(rosters, work_item, kept, self._cap)

    def remove(self, work_item: str, members: Iterable[str]) -> None:
        """Take ``members`` off ``work_item``'s roster (the roster goes when it is empty)."""
        gone = set(members)
        with self._lock:
            rosters = self._all()
            kept = [m for m in rosters.get(work_item, ()) if m not in gone]
            if kept:
                rosters = touched(rosters, work_item, kept, self._cap)
            else:
                rosters.pop(work_item, None)
            self._store[_KEY] = rosters

    def end(self, work_item: str) -> bool:
        """The work item ended: its roster goes. False when it had none."""
        with self._lock:
            rosters = self._all()
            if rosters.pop(work_item, None) is None:
                return False
            self._store[_KEY] = rosters
            return True

    def snapshot(self) -> dict[str, frozenset[str]]:
        """Every roster, for the policy in force."""
        return {item: frozenset(members) for item, members in self._all().items()}

    def _all(self) -> dict[str, list[str]]:
        value = stored_mapping(self._store, _KEY)  # unreadable: nobody is a collaborator
        return {str(k): [str(m) for m in v] for k, v in value.items() if isinstance(v, list)}
