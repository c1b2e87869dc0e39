"""One ask's life as the room keeps it: opened, whom it asked, reminded, escalated, claimed,
answered by whom and how — and how long the agent waited.

An ask is a question a work item waits on people for (its open question, its gate, its
phase selection), one record per message that asked it. The record is the truth the
reminders are sent from: a step (reminded, escalated) is taken once, and only while the
ask is open, by the store's own compare-and-set (``looproom.attention.store``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

#: What the ask came to: still waiting, answered by a member, or closed by the work item
#: moving on without an answer here (the-loop passed the gate, the work item ended).
OPEN, ANSWERED, MOVED_ON = "open", "answered", "moved-on"
#: How an answer came: pressed in the thread, typed, from the direct message, from Home.
BUTTON, TYPED, DM, HOME = "button", "typed", "dm", "home"
#: The steps a reminder loop takes, each at most once per ask.
REMINDED, ESCALATED = "reminded", "escalated"
#: A member's own steps (``theloop_ask_steps``): put back until ``at``, and the reminder
#: that snooze brings back up once the member was reminded before it.
SNOOZED, REMINDED_LATER = "snoozed", "reminded-later"
STEPS = (REMINDED, ESCALATED)


def ask_id(work_item: str, kind: str, channel: str, ts: str) -> str:
    """One id per message that asked: the same however often the room is told of it."""
    return f"{work_item}|{kind}|{channel}:{ts}"


@dataclass(frozen=True)
class Ask:
    """One ask, as stored."""

    id: str
    work_item: str
    kind: str  # "ask" | "gate" | "selection"
    channel: str
    ts: str
    thread: str
    asked: tuple[str, ...]
    opened: float
    #: Who may answer (named in the thread), when the ask was told: ``deciders`` or ``owner``.
    basis: str = ""
    reminded: float = 0.0
    escalated: float = 0.0
    claimed_by: str = ""
    claimed_at: float = 0.0
    outcome: str = OPEN
    answered_by: str = ""
    answered_how: str = ""
    closed: float = 0.0
    #: Each asked member's direct message, ``member → "D…:ts"``, once sent.
    dms: tuple[tuple[str, str], ...] = ()

    @property
    def is_open(self) -> bool:
        return self.outcome == OPEN

    def waited(self, now: float) -> float:
        """Seconds the work item waited: until it was closed, else until ``now``."""
        return max(0.0, (self.closed or now) - self.opened)

    def dm_of(self, member: str) -> str:
        return dict(self.dms).get(member, "")

    def row(self) -> dict[str, Any]:
        """The columns as stored (lists as JSON text)."""
        return {
            "id": self.id,
            "work_item": self.work_item,
            "kind": self.kind,
            "channel": self.channel,
            "ts": self.ts,
            "thread": self.thread,
            "asked": json.dumps(list(self.asked)),
            "basis": self.basis,
            "opened": self.opened,
            "reminded": self.reminded,
            "escalated": self.escalated,
            "claimed_by": self.claimed_by,
            "claimed_at": self.claimed_at,
            "outcome": self.outcome,
            "answered_by": self.answered_by,
            "answered_how": self.answered_how,
            "closed": self.closed,
            "dms": json.dumps(dict(self.dms)),
        }

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Ask:
        fields = dict(row)
        fields["asked"] = tuple(str(m) for m in json.loads(row["asked"] or "[]"))
        fields["dms"] = tuple(sorted(json.loads(row["dms"] or "{}").items()))
        for name in ("opened", "reminded", "escalated", "claimed_at", "closed"):
            fields[name] = float(row[name] or 0.0)
        return cls(**fields)


COLUMNS = tuple(Ask.__dataclass_fields__)
