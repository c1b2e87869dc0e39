"""The delivery policy's memory: what the room was told of each work item, and why.

Kept in the same store as the room bindings and the room's memory (the plugin's storage,
SQLite), so a restart decides exactly as the bot would have before it. Bounded: past
:data:`ITEM_CAP` work items the least recently told is forgotten (its room then hears the
next events in full). A record that cannot be read is not guessed at: :meth:`DeliveryLog.get`
answers None and the outlet posts everything — a duplicate line, never silence.

Each work item also keeps its last :data:`WHY_CAP` decisions (rule, event, node, time), the
answer to ``!theloop why``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.state import lock_for
from looproom.room.policy import Told

log = logging.getLogger(__name__)

ITEM_CAP = 500
WHY_CAP = 20
_TOLD, _WHY = "room.told", "room.why"


@dataclass(frozen=True)
class Why:
    """One decision, as ``!theloop why`` shows it."""

    at: float
    event_type: str
    node: str
    action: str  # post | drop | edit | thread
    rule: str


class DeliveryLog:
    """Per-work-item :class:`Told` and recent decisions in ``store`` (thread-safe)."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store = store
        self._lock = lock_for(store)

    def get(self, work_item: str) -> Told | None:
        """What the room was told; an empty record for a new item; None if unreadable."""
        with self._lock:
            try:
                raw = (self._store.get(_TOLD) or {}).get(work_item)
                return _told(raw) if raw is not None else Told()
            except Exception as exc:  # storage or a record of another shape: post everything
                log.warning("the room's delivery memory for %s is unreadable: %s", work_item, exc)
                return None

    def put(self, work_item: str, told: Told) -> None:
        with self._lock:
            self._put(_TOLD, work_item, _raw(told))

    def note(self, work_item: str, why: Why) -> None:
        """Keep ``why`` among the item's last decisions."""
        with self._lock:
            try:
                kept = list((self._store.get(_WHY) or {}).get(work_item) or [])
            except Exception:  # an unreadable history is replaced, never fatal
                kept = []
            kept = [*kept, why.__dict__][-WHY_CAP:]
            self._put(_WHY, work_item, kept)

    def why(self, work_item: str) -> list[Why]:
        """The item's last decisions, oldest first."""
        with self._lock:
            try:
                kept = (self._store.get(_WHY) or {}).get(work_item) or []
                return [Why(**entry) for entry in kept]
            except Exception as exc:
                log.warning("the decisions for %s are unreadable: %s", work_item, exc)
                return []

    def items(self) -> list[str]:
        """The work items with decisions kept, most recently decided last."""
        with self._lock:
            try:
                return [str(key) for key in self._store.get(_WHY) or {}]
            except Exception:
                return []

    def _put(self, name: str, work_item: str, value: Any) -> None:
        try:
            mapping = dict(self._store.get(name) or {})
        except Exception:
            mapping = {}
        self._store[name] = touched(mapping, work_item, value, ITEM_CAP)


def _raw(told: Told) -> dict[str, Any]:
    return {
        "gates": dict(told.gates),
        "phases": dict(told.phases),
        "delivered": sorted(told.delivered),
        "spoke_for": sorted(told.spoke_for),
        "done": told.done,
        "selection": told.selection,
    }


def _told(raw: Mapping[str, Any]) -> Told:
    """A stored record read strictly: a wrong shape raises, so the caller posts everything."""
    if not isinstance(raw, Mapping):
        raise TypeError(f"expected a mapping, got {type(raw).__name__}")
    return Told(
        gates=_strings(raw.get("gates") or {}),
        phases=_strings(raw.get("phases") or {}),
        delivered=frozenset(str(k) for k in raw.get("delivered") or ()),
        spoke_for=frozenset(str(k) for k in raw.get("spoke_for") or ()),
        done=str(raw.get("done") or ""),
        selection=str(raw.get("selection") or ""),
    )


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise TypeError(f"expected a mapping, got {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}


def now() -> float:
    return time.time()
