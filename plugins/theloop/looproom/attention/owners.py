"""Who owns each work item, where the room can know: the member who asked for it in Slack,
else the person the-loop names on its events, mapped through ``people:``.

The first owner learnt is kept (an event's actor later is whoever acted then, not the
owner); the book is bounded like the room's other books.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for, stored_mapping
from looproom.events import Event
from looproom.people import is_member_id

_KEY = "attention.owners"
CAP = 5000
#: The detail keys the-loop or a graph hook may name a GitHub owner under, in order.
_LOGIN_KEYS = ("owner", "assignee", "author")


class Owners:
    """Work item → its owner's Slack member id, kept in the plugin's state."""

    def __init__(self, store: MutableMapping[str, Any], people: Mapping[str, str]) -> None:
        self._store, self._lock = store, lock_for(store)
        # people: maps a member to a GitHub login; an owner is named by login.
        self._by_login = {login.lower(): member for member, login in people.items()}

    def of(self, work_item: str) -> str:
        return str(stored_mapping(self._store, _KEY).get(work_item) or "")

    def learn(self, work_item: str, member: str) -> None:
        """``member`` owns ``work_item``, unless an owner was learnt before."""
        if not work_item or not is_member_id(member):
            return
        with self._lock:
            known = stored_mapping(self._store, _KEY)
            if not known.get(work_item):
                self._store[_KEY] = touched(known, work_item, member, CAP)

    def learn_from(self, event: Event) -> None:
        """The owner the event names, where it names one the room can map."""
        found = self.named_by(event)
        if found:
            self.learn(event.work_item, found)

    def named_by(self, event: Event) -> str:
        for key in _LOGIN_KEYS:
            login = str(event.detail.get(key) or "").lstrip("@").lower()
            if login and login in self._by_login:
                return self._by_login[login]
        ids = event.actor.get("ids") if isinstance(event.actor, Mapping) else None
        if isinstance(ids, Mapping):
            slack = str(ids.get("slack") or "")
            if is_member_id(slack):
                return slack
            login = str(ids.get("github") or "").lower()
            return self._by_login.get(login, "")
        return ""
