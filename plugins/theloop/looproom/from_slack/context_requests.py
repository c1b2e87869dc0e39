"""The "Add as the-loop context" shortcut's requests, kept from before Slack is answered
until their thread is recorded.

Recording a thread reads it first (a Slack call that may wait its turn behind a 429), and
Slack waits 3 s for the shortcut's answer. So the request is stored, Slack answered, and
the thread read and recorded after. Each request is kept under its trigger: one Slack
delivers again is taken once; one a bot that died left unrecorded is recorded at start.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass
from typing import Any

from looproom.durable.bounded import claimed_once, touched
from looproom.durable.state import lock_for, stored_mapping

_KEY = "shortcut.context.requests"
#: Requests remembered (the waiting and the done, the least recently touched forgotten
#: first): far more than Slack redelivers within its retries.
CAP = 300
WAITING, DONE = "waiting", "done"


@dataclass(frozen=True)
class ContextRequest:
    """Who asked to record which thread, and the trigger that makes a redelivery the same."""

    trigger: str
    member: str
    channel: str
    thread: str


class ContextRequests:
    """The requests in the plugin's storage."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store, self._lock = store, lock_for(store)

    def take(self, request: ContextRequest) -> bool:
        """Store ``request`` as waiting; False when its trigger was taken before."""
        with self._lock:
            kept = {"state": WAITING, **asdict(request)}
            return claimed_once(self._store, _KEY, request.trigger, kept, CAP)

    def done(self, trigger: str) -> None:
        """``trigger``'s thread is recorded (or refused): it is not to be recorded again."""
        with self._lock:
            kept = stored_mapping(self._store, _KEY)
            if trigger in kept:
                self._store[_KEY] = touched(kept, trigger, {"state": DONE}, CAP)

    def waiting(self) -> list[ContextRequest]:
        """The requests taken and not yet recorded, oldest first."""
        with self._lock:
            kept = stored_mapping(self._store, _KEY)
        return [_request(value) for value in kept.values() if _is_waiting(value)]


def _is_waiting(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("state") == WAITING


def _request(value: Mapping[str, Any]) -> ContextRequest:
    return ContextRequest(
        *(str(value.get(name) or "") for name in ("trigger", "member", "channel", "thread"))
    )
