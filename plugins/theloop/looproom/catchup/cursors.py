"""Per-thread cursors: which messages were read already, and which went as context.

Two paths read a thread's messages — the live one (each message as Slack sends it) and
the catch-up after a reconnect or a restart (``conversations.replies`` since the cursor)
— and a message must be handled by exactly one of them. Both :meth:`Cursors.claim` a
message before handling it; the claim is atomic, so whichever comes second is told no.
A thread's claims are kept as a floor (everything at or below it was read) and the
messages above it read since; catch-up raises the floor once it has read a stretch.

``record-context`` keeps its own cursor per thread: the last message recorded as context,
so a second record starts after it and no message is recorded twice.

Kept in the plugin's storage, so a restart knows where it was; bounded like the thread
bindings: past :data:`THREAD_CAP` threads the least recently touched are forgotten.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for
from looproom.times import slack_seconds

THREAD_CAP = 500
#: At most this many claims above a thread's floor are kept; past it the floor rises.
CLAIMS_CAP = 300
_KEY = "talk.cursors"
_SINCE = "talk.cursors.since"


class Cursors:
    """The cursors of every thread the bot reads, in ``store`` (thread-safe)."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store = store
        self._lock = lock_for(store)

    def claim(self, channel: str, thread: str, ts: str) -> bool:
        """Mark ``ts`` of ``thread`` read; False when it was read before (by either path)."""
        with self._lock:
            cursors = dict(self._store.get(_KEY) or {})
            record = dict(cursors.get(_thread(channel, thread)) or {})
            floor, seen = str(record.get("floor") or ""), list(record.get("seen") or [])
            if (floor and slack_seconds(ts) <= slack_seconds(floor)) or ts in seen:
                return False
            seen = sorted([*seen, ts], key=slack_seconds)
            if len(seen) > CLAIMS_CAP:
                floor, seen = seen[-CLAIMS_CAP - 1], seen[-CLAIMS_CAP:]
            self._put(cursors, channel, thread, {**record, "floor": floor, "seen": seen})
            return True

    def release(self, channel: str, thread: str, ts: str) -> None:
        """``ts`` was claimed but not handled (storing it failed): unclaimed, so the
        catch-up reads it again. Below the floor it stays read (the floor only rises)."""
        with self._lock:
            cursors = dict(self._store.get(_KEY) or {})
            record = dict(cursors.get(_thread(channel, thread)) or {})
            seen = list(record.get("seen") or [])
            if ts in seen:
                seen.remove(ts)
                self._put(cursors, channel, thread, {**record, "seen": seen})

    def since(self, now: float) -> float:
        """When the bot first kept cursors (``now`` the first time it is asked): nothing
        said before it is read back, so an upgrade does not act on words already passed
        over as conversation."""
        with self._lock:
            first = self._store.get(_SINCE)
            if first is None:
                first = now
                self._store[_SINCE] = first
            return float(first)

    def floor(self, channel: str, thread: str) -> str:
        """The newest ts at or below which every message of ``thread`` was read (``""``)."""
        return str(self._record(channel, thread).get("floor") or "")

    def caught_up(self, channel: str, thread: str, ts: str) -> None:
        """Catch-up read every message of ``thread`` up to ``ts``: the floor rises to it."""
        with self._lock:
            cursors = dict(self._store.get(_KEY) or {})
            record = dict(cursors.get(_thread(channel, thread)) or {})
            if slack_seconds(ts) <= slack_seconds(str(record.get("floor") or "")):
                return
            seen = [s for s in record.get("seen") or [] if slack_seconds(s) > slack_seconds(ts)]
            self._put(cursors, channel, thread, {**record, "floor": ts, "seen": seen})

    def context(self, channel: str, thread: str) -> str:
        """The last message of ``thread`` recorded as context (``""``: none yet)."""
        return str(self._record(channel, thread).get("context") or "")

    def contextualized(self, channel: str, thread: str, ts: str) -> bool:
        """Record that ``thread`` went as context up to ``ts``; False when a record since
        went further already (then nothing of it may go twice)."""
        with self._lock:
            cursors = dict(self._store.get(_KEY) or {})
            record = dict(cursors.get(_thread(channel, thread)) or {})
            if slack_seconds(ts) <= slack_seconds(str(record.get("context") or "")):
                return False
            self._put(cursors, channel, thread, {**record, "context": ts})
            return True

    def _record(self, channel: str, thread: str) -> dict[str, Any]:
        return dict((self._store.get(_KEY) or {}).get(_thread(channel, thread)) or {})

    def _put(
        self, cursors: dict[str, Any], channel: str, thread: str, record: dict[str, Any]
    ) -> None:
        self._store[_KEY] = touched(cursors, _thread(channel, thread), record, THREAD_CAP)


def _thread(channel: str, thread: str) -> str:
    return f"{channel}:{thread}"
