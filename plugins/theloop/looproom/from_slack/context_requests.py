"""Requests to record a thread as context — the "Add as the-loop context" shortcut, and
``record-context`` typed — kept from before Slack is answered until the thread is recorded.

Recording a thread reads it first (a Slack call that may wait its turn behind a 429), and
Slack waits 3 s for its answer to the shortcut, or to the message's event over HTTP. So the
request is stored, Slack answered, and the thread read and recorded after. Each request is
kept under its origin (the shortcut's trigger, the message's id): one Slack delivers again
is taken once; one a bot that died left unrecorded is recorded at start.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from dataclasses import asdict, dataclass
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for, stored_mapping
from looproom.verb_names import RECORD_CONTEXT

log = logging.getLogger(__name__)

_KEY = "shortcut.context.requests"
#: Requests remembered, the waiting and the done: far more than Slack redelivers within its
#: retries. Past it the oldest done is forgotten, a waiting one only when none is done.
CAP = 300
WAITING, DONE = "waiting", "done"


@dataclass(frozen=True)
class ContextRequest:
    """Who asked to record which thread, said how and where; ``origin`` makes a redelivery
    the same request."""

    origin: str
    member: str
    channel: str
    thread: str
    ts: str = ""
    text: str = RECORD_CONTEXT
    addressed: bool = True
    work_item: str = ""
    repository: str = ""
    thread_bound: bool = False


class ContextRequests:
    """The requests in the plugin's storage."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store, self._lock = store, lock_for(store)

    def take(self, request: ContextRequest) -> bool:
        """Store ``request`` as waiting; False when its origin was taken before. A full
        book forgets a done request first: a waiting one only when none is done (then the
        oldest, said in the log), so a burst of requests does not drop one still owed."""
        with self._lock:
            kept = stored_mapping(self._store, _KEY)
            if request.origin in kept:
                return False
            if len(kept) >= CAP:
                kept = _room_made(kept)
            self._store[_KEY] = {**kept, request.origin: {"state": WAITING, **asdict(request)}}
            return True

    def done(self, origin: str) -> None:
        """``origin``'s thread is recorded (or refused): it is not to be recorded again."""
        with self._lock:
            kept = stored_mapping(self._store, _KEY)
            if origin in kept:
                self._store[_KEY] = touched(kept, origin, {"state": DONE}, CAP)

    def waiting(self) -> list[ContextRequest]:
        """The requests taken and not yet recorded, oldest first."""
        with self._lock:
            kept = stored_mapping(self._store, _KEY)
        return [_request(value) for value in kept.values() if _is_waiting(value)]


def _room_made(kept: Mapping[str, Any]) -> dict[str, Any]:
    """``kept`` less one entry: the oldest done, else the oldest waiting (logged)."""
    done = [origin for origin, value in kept.items() if not _is_waiting(value)]
    gone = done[0] if done else next(iter(kept))
    if not done:
        log.warning("%d context requests waiting: the oldest, %s, is forgotten", len(kept), gone)
    return {origin: value for origin, value in kept.items() if origin != gone}


def _is_waiting(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("state") == WAITING


def _request(value: Mapping[str, Any]) -> ContextRequest:
    texts = ("origin", "member", "channel", "thread", "ts", "work_item", "repository")
    found: dict[str, Any] = {name: str(value.get(name) or "") for name in texts}
    found["text"] = str(value.get("text") or RECORD_CONTEXT)
    found["addressed"] = bool(value.get("addressed", True))
    found["thread_bound"] = bool(value.get("thread_bound", False))
    return ContextRequest(**found)
