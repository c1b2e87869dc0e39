"""Each instance's event stream followed into the one inbox, under its own cursor.

The follower is the single-instance one (:mod:`looproom.inbound.stream`); what differs is
where its last id is kept (one key per instance, so two streams never share a cursor)
and that a record about a work item another instance owns is skipped, as the webhook
would refuse it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from looproom.events import Event
from looproom.inbound.stream import CURSOR_KEY, StreamFollower
from looproom.settings.instances import Instance

#: ``admit(instance, event)``: True stored, False a duplicate or not the instance's.
Admit = Callable[[Instance, Event], bool]


class KeyedCursor(MutableMapping[str, Any]):
    """The follower's cursor, kept in the plugin's state under the instance's own key."""

    def __init__(self, store: MutableMapping[str, Any], name: str) -> None:
        self._store, self._key = store, f"instances.{name}.stream_last_id"

    def _mapped(self, key: str) -> str:
        if key != CURSOR_KEY:
            raise KeyError(key)
        return self._key

    def __getitem__(self, key: str) -> Any:
        return self._store[self._mapped(key)]

    def __setitem__(self, key: str, value: Any) -> None:
        self._store[self._mapped(key)] = value

    def __delitem__(self, key: str) -> None:
        del self._store[self._mapped(key)]

    def __iter__(self) -> Iterator[str]:
        return iter([CURSOR_KEY] if self._key in self._store else [])

    def __len__(self) -> int:
        return 1 if self._key in self._store else 0


def followers(
    instances: list[Instance] | tuple[Instance, ...],
    store: MutableMapping[str, Any],
    admit: Admit,
) -> dict[str, StreamFollower]:
    """A follower for each instance that names a stream, by instance name."""
    return {
        instance.name: StreamFollower(
            instance.stream,
            accept=lambda event, instance=instance: admit(instance, event),
            cursor=KeyedCursor(store, instance.name),
            token=instance.token,
        )
        for instance in instances
        if instance.stream
    }
