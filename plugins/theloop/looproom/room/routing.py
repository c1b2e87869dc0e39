"""Which room and which thread a work item's events go to, remembered in bounded storage.

Room: an admin's binding for the work item, else the ``rooms`` map by repository (an exact
``owner/repo`` beats any glob; among globs the first in file order wins), else
``slack.channel``. Thread: one per work item per room, opened by a parent message whose
``ts`` is kept here. The book lives in a ``MutableMapping`` the plugin passes in (Errbot's
storage) and is bounded as the-loop bounds its own: past :data:`THREAD_CAP` threads the least
recently used binding is dropped — its next event opens a fresh parent. Admin room
bindings are not evicted silently: past :data:`ROOM_BINDING_CAP` a new one is refused.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass
from fnmatch import fnmatchcase
from typing import Any

from looproom import workitem
from looproom.durable.bounded import touched
from looproom.durable.state import lock_for

THREAD_CAP = 200  # the-loop's own bound on thread bindings
ROOM_BINDING_CAP = 500
CHANNEL_ID_CAP = 500
UNCERTAIN_CAP = 1000

_THREADS, _ROOMS, _IDS, _UNCERTAIN = (
    "rooms.threads",
    "rooms.bindings",
    "rooms.channel_ids",
    "rooms.uncertain",
)
_GLOB = re.compile(r"[*?\[]")


class BindingError(ValueError):
    """An admin binding that cannot be stored; the message says why and what to do."""


@dataclass(frozen=True)
class ThreadBinding:
    """A work item's conversation in one room: the parent message and the state it shows."""

    work_item: str
    channel: str  # a conversation id (C…): chat.update and history need ids
    ts: str  # the parent message's ts: every later event is posted with thread_ts=ts
    state: str = ""  # the state line the parent is to show: the latest event's
    drawn: str = ""  # a fingerprint of the parent as last sent, to skip no-op updates
    url: str = ""  # the latest event's page, the parent's link for a non-GitHub work item
    dirty: bool = False  # ``state`` is not drawn yet: the card stage owes the parent an edit
    #: What opened it: ``event <type>`` (the-loop's first event of it here), ``kickoff``.
    origin: str = ""


def has_glob(pattern: str) -> bool:
    """Whether a ``rooms`` key is a glob (``acme/*``) rather than one repository."""
    return bool(_GLOB.search(pattern))


def route(work_item: str, channel: str, rooms: Sequence[tuple[str, str]]) -> str:
    """The configured room for ``work_item``: exact repository, first glob, else ``channel``."""
    repo = workitem.repository_of(work_item).lower()
    if not repo:
        return channel
    for pattern, room in rooms:
        if not _GLOB.search(pattern) and pattern.lower() == repo:
            return room
    for pattern, room in rooms:
        if _GLOB.search(pattern) and fnmatchcase(repo, pattern.lower()):
            return room
    return channel


class BindingBook:
    """Room bindings, thread bindings and channel ids, kept in ``store`` (thread-safe).

    The lock is the book's own, so one store has one book: the delivery worker, the admin
    commands and the decision desk share it, and a read-modify-write never interleaves.
    """

    def __init__(
        self,
        store: MutableMapping[str, Any],
        *,
        thread_cap: int = THREAD_CAP,
        room_cap: int = ROOM_BINDING_CAP,
    ) -> None:
        self._store = store
        self._thread_cap, self._room_cap = thread_cap, room_cap
        self._lock = lock_for(store)

    # -- which room ------------------------------------------------------------------

    def room_for(self, work_item: str, channel: str, rooms: Sequence[tuple[str, str]]) -> str:
        """An admin's binding for ``work_item`` if any, else :func:`route`."""
        bound = self._get(_ROOMS).get(workitem.canonical(work_item))
        return str(bound["room"]) if bound else route(work_item, channel, rooms)

    def bind_room(self, work_item: str, room: str) -> None:
        """Send ``work_item``'s events to ``room`` from now on (an admin command)."""
        with self._lock:
            bindings, work_item = self._get(_ROOMS), workitem.canonical(work_item)
            if work_item not in bindings and len(bindings) >= self._room_cap:
                raise BindingError(
                    f"{len(bindings)} work items are already bound to rooms (the cap is "
                    f"{self._room_cap}); unbind finished ones first"
                )
            bindings[work_item] = {"room": room, "at": time.time()}
            self._store[_ROOMS] = bindings

    def unbind_room(self, work_item: str) -> bool:
        """Drop an admin binding; False when there was none."""
        with self._lock:
            bindings = self._get(_ROOMS)
            if bindings.pop(workitem.canonical(work_item), None) is None:
                return False
            self._store[_ROOMS] = bindings
            return True

    def room_bindings(self) -> dict[str, str]:
        """Every admin binding, work item → room."""
        return {item: str(value["room"]) for item, value in self._get(_ROOMS).items()}

    # -- which thread ----------------------------------------------------------------

    def thread(self, work_item: str, channel: str) -> ThreadBinding | None:
        """The work item's thread in ``channel``, marked as just used; None when none."""
        with self._lock:
            threads = self._get(_THREADS)
            record = threads.get(_thread_key(work_item, channel))
            if record is None:
                return None
            if record.get("seq") != self._latest_seq(threads):
                record["seq"] = self._latest_seq(threads) + 1
                self._store[_THREADS] = threads
            return _thread_of(record)

    def remember(self, thread: ThreadBinding) -> None:
        """Store (or refresh) a thread binding, evicting the least recently used past the cap."""
        with self._lock:
            threads = self._get(_THREADS)
            record = {**asdict(thread), "seq": self._latest_seq(threads) + 1}
            threads[_thread_key(thread.work_item, thread.channel)] = record
            while len(threads) > self._thread_cap:
                oldest = min(threads, key=lambda key: threads[key].get("seq", 0))
                del threads[oldest]
            self._store[_THREADS] = threads

    def binding(self, work_item: str, channel: str) -> ThreadBinding | None:
        """The work item's thread in ``channel`` as stored, not marked as used."""
        record = self._get(_THREADS).get(_thread_key(work_item, channel))
        return None if record is None else _thread_of(record)

    def want(self, thread: ThreadBinding, state: str, url: str) -> bool:
        """Record that ``thread``'s parent is to show ``state`` (and ``url``), not drawn yet;
        False when that parent is no longer the work item's (forgotten, or replaced)."""
        return self._change(thread, state=state, url=url, dirty=True)

    def drew(self, thread: ThreadBinding, drawn: str) -> bool:
        """Record that the parent now shows ``thread``'s state (fingerprint ``drawn``); it
        stays owed an edit when a later event wanted another state meanwhile."""
        with self._lock:
            record = self._record(thread)
            if record is None:
                return False
            still = (record.get("state", ""), record.get("url", "")) == (thread.state, thread.url)
            return self._change(thread, drawn=drawn, dirty=bool(record.get("dirty")) and not still)

    def forget(self, work_item: str, channel: str, ts: str = "") -> None:
        """Drop a thread binding (its parent is gone); the next event opens a new one.
        ``ts``: only if the binding is still to that parent (not one opened since)."""
        with self._lock:
            threads = self._get(_THREADS)
            record = threads.get(_thread_key(work_item, channel))
            if record is not None and (not ts or record.get("ts") == ts):
                del threads[_thread_key(work_item, channel)]
                self._store[_THREADS] = threads

    def threads(self) -> list[ThreadBinding]:
        """Every thread binding kept, oldest first (``/the-loop status`` lists them)."""
        return [_thread_of(record) for record in self._get(_THREADS).values()]

    def recent_threads(self, most: int = THREAD_CAP) -> list[ThreadBinding]:
        """The ``most`` most recently used thread bindings, newest first."""
        with self._lock:
            records = sorted(
                self._get(_THREADS).values(), key=lambda r: r.get("seq", 0), reverse=True
            )
        return [_thread_of(record) for record in records[:most]]

    def thread_count(self) -> int:
        """How many thread bindings are kept."""
        return len(self._get(_THREADS))

    def _record(self, thread: ThreadBinding) -> dict[str, Any] | None:
        record = self._get(_THREADS).get(_thread_key(thread.work_item, thread.channel))
        return record if record is not None and record.get("ts") == thread.ts else None

    def _change(self, thread: ThreadBinding, **fields: Any) -> bool:
        """Set ``fields`` of the binding to ``thread``'s parent, if it is still bound."""
        with self._lock:
            threads = self._get(_THREADS)
            key = _thread_key(thread.work_item, thread.channel)
            record = threads.get(key)
            if record is None or record.get("ts") != thread.ts:
                return False
            threads[key] = {**record, **fields}
            self._store[_THREADS] = threads
            return True

    # -- channel ids and uncertain posts ---------------------------------------------

    def channel_id(self, room: str) -> str:
        """The id learnt for a room name, or ``""``."""
        return str(self._get(_IDS).get(room.lstrip("#").lower(), ""))

    def learn_channel_id(self, room: str, channel_id: str) -> None:
        """Remember the id Slack gave a room name (bounded; the oldest forgotten first)."""
        self._put_bounded(_IDS, room.lstrip("#").lower(), channel_id, CHANNEL_ID_CAP)

    def mark_uncertain(self, key: str) -> None:
        """A post for ``key`` failed in a way that may have landed: look before re-posting."""
        self._put_bounded(_UNCERTAIN, key, time.time(), UNCERTAIN_CAP)

    def is_uncertain(self, key: str) -> bool:
        return key in self._get(_UNCERTAIN)

    def settle(self, key: str) -> None:
        """``key`` is known to be in Slack (or known not to be): no need to look again."""
        with self._lock:
            uncertain = self._get(_UNCERTAIN)
            if uncertain.pop(key, None) is not None:
                self._store[_UNCERTAIN] = uncertain

    # -- storage ---------------------------------------------------------------------

    def _get(self, name: str) -> dict[str, Any]:
        """A private copy of one stored mapping (Errbot's storage persists on assignment),
        the work items' bindings keyed by their canonical spelling."""
        try:
            value = self._store[name]
        except KeyError:
            return {}
        copy = {k: dict(v) if isinstance(v, Mapping) else v for k, v in dict(value).items()}
        if name == _THREADS:
            return _canonical_threads(copy)
        if name == _ROOMS:
            bindings: dict[str, Any] = {}
            for key, binding in copy.items():  # two spellings kept: the first one bound wins
                bindings.setdefault(workitem.canonical(key), binding)
            return bindings
        return copy

    def _put_bounded(self, name: str, key: str, value: Any, cap: int) -> None:
        with self._lock:
            self._store[name] = touched(self._get(name), key, value, cap)

    @staticmethod
    def _latest_seq(threads: Mapping[str, Mapping[str, Any]]) -> int:
        return max((int(record.get("seq", 0)) for record in threads.values()), default=0)


def _thread_key(work_item: str, channel: str) -> str:
    """One thread per work item per room, whatever spelling of the work item names it."""
    return f"{channel}|{workitem.canonical(work_item)}"


def _canonical_threads(threads: dict[str, Any]) -> dict[str, Any]:
    """``threads`` keyed by :func:`_thread_key`: a binding kept under the spelling its
    event came in (before keys were canonical) is found by any spelling. When two
    spellings were kept for one work item in one room, the most recently used wins."""
    keyed: dict[str, Any] = {}
    for key, record in threads.items():
        if not isinstance(record, Mapping) or "work_item" not in record:
            keyed[key] = record
            continue
        canonical = _thread_key(str(record["work_item"]), str(record.get("channel", "")))
        kept = keyed.get(canonical)
        if kept is None or int(record.get("seq", 0)) > int(kept.get("seq", 0)):
            keyed[canonical] = record
    return keyed


def _thread_of(record: Mapping[str, Any]) -> ThreadBinding:
    return ThreadBinding(
        work_item=str(record["work_item"]),
        channel=str(record["channel"]),
        ts=str(record["ts"]),
        state=str(record.get("state", "")),
        drawn=str(record.get("drawn", "")),
        url=str(record.get("url", "")),
        dirty=bool(record.get("dirty", False)),
        origin=str(record.get("origin", "")),
    )
