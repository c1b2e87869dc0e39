"""Which instance owns a work item: the file's claims first, then the ones learned.

An instance owns the work items its ``workItems.repos`` or ``workItems.prefix`` match (the
first instance in the file that matches, when two do). A work item no instance matches
becomes the instance's whose event first names it, when that instance learns
(``learn: true``, the default); the claim is kept in the plugin's state — the SQLite
file's storage, or the shared database where replicas must agree — and written under the
store's lock, so two instances racing for one work item cannot both win.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for, stored_mapping
from looproom.settings.instances import Instance

#: The state key: learned claims, work item → instance name, oldest first.
KEY = "instances.claims"
#: Learned claims kept at most; past it the oldest claim goes (and is learned again by
#: whichever instance next sends an event about that work item).
MOST_CLAIMS = 50_000


class Owners:
    """Who owns which work item, for the webhook, the stream and the relay."""

    def __init__(self, instances: Sequence[Instance], store: MutableMapping[str, Any]) -> None:
        self._instances = {instance.name: instance for instance in instances}
        self._store = store
        self._lock = lock_for(store)

    def owner(self, work_item: str) -> Instance | None:
        """The instance that owns ``work_item``; None while none does."""
        configured = self._configured(work_item)
        if configured is not None:
            return configured
        return self._instances.get(str(self._learned().get(work_item) or ""))

    def claim(self, sender: Instance, work_item: str) -> Instance | None:
        """The owner of ``work_item`` once ``sender`` has sent an event about it: the one
        already known, else ``sender`` when it learns; None when nobody may own it."""
        configured = self._configured(work_item)
        if configured is not None:
            return configured
        with self._lock:
            learned = self._learned()
            known = self._instances.get(str(learned.get(work_item) or ""))
            if known is not None:
                return known
            if not sender.claims.learn:
                return None
            self._store[KEY] = touched(learned, work_item, sender.name, MOST_CLAIMS)
            return sender

    def learned_count(self, name: str) -> int:
        """How many work items ``name`` owns by a learned claim."""
        return sum(1 for owner in self._learned().values() if owner == name)

    def _configured(self, work_item: str) -> Instance | None:
        return next((i for i in self._instances.values() if i.claims.matches(work_item)), None)

    def _learned(self) -> Mapping[str, Any]:
        return stored_mapping(self._store, KEY)
