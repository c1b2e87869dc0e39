"""What the room last saw of each work item — the state a decision is checked against.

A decision is only as good as the question it answers: ``execute without 2`` counts the
rows of the checklist the member was shown, ``approve`` answers the gate that is open
now, a "Defaults are fine" press answers the ask it sits under. This module folds the
events the bot posted into that per-work-item state and
remembers which question was already answered, by whom, so a second press, a stale
message or a double delivery relays nothing.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import asdict, dataclass, replace
from typing import Any

from looproom import workitem
from looproom.durable.bounded import touched
from looproom.durable.state import lock_for
from looproom.events import Event
from looproom.room import checklist as checklists
from looproom.room import event_types
from looproom.room.event_types import ASK, COMPLETED, ENDING, PHASE

SELECTION_NODE = "phase-selection"
#: How many posted messages are remembered for mapping a press or a reply to its work
#: item; past it the oldest are forgotten (a press on them is refused as unmapped).
INDEX_CAP = 5000
_INDEX = "memory.messages"
#: Each work item's one spelling (``looproom.workitem.canonical``) → the spelling the room
#: keeps its state under, so ``github:ACME/api#7`` typed by a member finds the state of
#: ``github:acme/api#7`` the-loop sent (and not a second, empty one).
_SPELLINGS = "memory.spellings"


@dataclass(frozen=True)
class Asked:
    """One open question in the room: a gate, an ask, or the checklist.

    ``answered_by`` is set once a decision for it was stored, so a later press or a
    redelivery is refused as already answered rather than relayed again.
    """

    kind: str  # "gate" | "ask" | "selection"
    channel: str = ""
    ts: str = ""
    thread: str = ""  # the thread the message was posted in ("" = top level)
    node: str = ""
    default: str = ""
    answered_by: str = ""
    answered_at: str = ""


@dataclass(frozen=True)
class ItemState:
    """The last checklist, the open gate and the open ask of one work item."""

    checklist: str = ""
    selection: Asked | None = None
    selection_done: bool | None = None
    gate: Asked | None = None
    ask: Asked | None = None

    def rows(self) -> checklists.Checklist:
        """The checklist as last seen, else the-loop's default work-item loop."""
        return checklists.parse(self.checklist) or checklists.DEFAULT

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ItemState:
        asked = {k: Asked(**raw[k]) if raw.get(k) else None for k in ("selection", "gate", "ask")}
        return cls(
            checklist=raw.get("checklist", ""),
            selection_done=raw.get("selection_done"),
            **asked,
        )


def observe(
    state: ItemState, event: Event, channel: str = "", ts: str = "", thread: str = ""
) -> ItemState:
    """``state`` after the room was shown ``event`` (posted as ``channel``/``ts``, in the
    thread ``thread``)."""
    node = str(event.detail.get("node") or "")
    row = event_types.of(event)
    if row.opens_selection:
        shown = Asked("selection", channel, ts, thread, SELECTION_NODE)
        return replace(state, checklist=event.text, selection=shown, selection_done=False)
    if row.acknowledges == event_types.SELECTION:
        return replace(state, selection_done=True)
    if row.family == ASK:
        default = str(event.detail.get("default") or "").strip()
        return replace(state, ask=Asked("ask", channel, ts, thread, default=default))
    if row.approval:
        gate = Asked("gate", channel, ts, thread, node)
        return replace(state, gate=gate, selection_done=True)
    if row.family == ENDING:
        return replace(state, gate=None, ask=None, selection_done=True)
    if row.family == PHASE:
        return _lifecycle(state, row.step, node)
    return state


def _lifecycle(state: ItemState, step: str, node: str) -> ItemState:
    """A phase moved: the selection and any gate it moved past are closed."""
    if node and node != SELECTION_NODE:
        state = replace(state, selection_done=True)
    gate = state.gate
    if gate is None or not node:
        return state
    moved_on = node != gate.node or step == COMPLETED
    return replace(state, gate=None) if moved_on else state


def answered(asked: Asked, member: str, at: str) -> Asked:
    return replace(asked, answered_by=member, answered_at=at)


class Memory:
    """Per-work-item state kept in a key-value store (the plugin's storage), plus an
    index from a posted message to its work item, so a press on a top-level room
    message resolves its work item from the message itself."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store = store
        self._lock = lock_for(store)
        with self._lock:
            if _SPELLINGS not in store:  # kept before spellings were: learn them once
                keys = [str(key)[5:] for key in list(store.keys()) if str(key).startswith("item:")]
                store[_SPELLINGS] = {workitem.canonical(ref): ref for ref in sorted(keys)}

    @property
    def lock(self) -> Any:
        """The lock of the memory's read-modify-writes, for a caller whose own must cover
        them (the desk: judge, record and settle as one step, on every replica)."""
        return self._lock

    def spelling(self, work_item: str) -> str:
        """``work_item`` as the room keeps it: the spelling it was first shown in, whatever
        the letter case or form it is named in now; else as given."""
        if f"item:{work_item}" in self._store:
            return work_item
        known = (self._store.get(_SPELLINGS) or {}).get(workitem.canonical(work_item))
        return str(known) if known else work_item

    def get(self, work_item: str) -> ItemState:
        raw = self._store.get(f"item:{self.spelling(work_item)}")
        return ItemState.from_dict(raw) if raw else ItemState()

    def knows(self, work_item: str) -> bool:
        """Whether the room was shown anything of ``work_item``, in any spelling."""
        return f"item:{self.spelling(work_item)}" in self._store

    def put(self, work_item: str, state: ItemState) -> None:
        work_item = self.spelling(work_item)
        if f"item:{work_item}" not in self._store:
            with self._lock:
                spellings = dict(self._store.get(_SPELLINGS) or {})
                spellings.setdefault(workitem.canonical(work_item), work_item)
                self._store[_SPELLINGS] = spellings
        self._store[f"item:{work_item}"] = state.to_dict()

    def observe(
        self, event: Event, channel: str = "", ts: str = "", thread_ts: str = ""
    ) -> ItemState:
        """Fold a posted event in (``ts`` its message, ``thread_ts`` the work item's
        thread it was posted in); index both, so a press or a reply finds its work item."""
        with self._lock:
            state = observe(self.get(event.work_item), event, channel, ts, thread_ts)
            self.put(event.work_item, state)
            index = dict(self._store.get(_INDEX) or {})
            for posted in (ts, thread_ts):
                if channel and posted:
                    index = touched(index, f"{channel}:{posted}", event.work_item, INDEX_CAP)
            self._store[_INDEX] = index
            return state

    def index(self, channel: str, ts: str, work_item: str) -> None:
        """Map a message the bot posted (or a thread it opened) to ``work_item``, so a reply
        in its thread or a press on it finds the work item."""
        with self._lock:
            index = self._store.get(_INDEX) or {}
            self._store[_INDEX] = touched(index, f"{channel}:{ts}", work_item, INDEX_CAP)

    def items(self) -> list[tuple[str, ItemState]]:
        """Every work item the room has state for, with that state."""
        refs = [str(key)[5:] for key in list(self._store.keys()) if str(key).startswith("item:")]
        return [(ref, self.get(ref)) for ref in sorted(refs)]

    def locate(self, channel: str, ts: str) -> str:
        """The work item a posted message belongs to — ``""`` when it is not ours."""
        return str((self._store.get(_INDEX) or {}).get(f"{channel}:{ts}") or "")

    def settle(self, work_item: str, kind: str, member: str, at: str) -> None:
        """Mark the open ``kind`` question answered (a decision for it was stored)."""
        self._set(work_item, kind, lambda asked: answered(asked, member, at))

    def reopen(self, work_item: str, kind: str) -> None:
        """Undo :meth:`settle` after a relay was given up, so the member can try again."""
        self._set(work_item, kind, lambda asked: replace(asked, answered_by="", answered_at=""))

    def _set(self, work_item: str, kind: str, change: Any) -> None:
        with self._lock:
            state = self.get(work_item)
            asked = getattr(state, kind, None)
            if asked is not None:
                self.put(work_item, replace(state, **{kind: change(asked)}))
