"""Did a reply that may have landed reach the session? the-loop's event log, counted right.

the-loop's ``sessions/reply`` ignores the ``Idempotency-Key`` we send, but logs each reply it
types into a session as a ``session.reply_sent`` record carrying the work item and the
actor — not the text, nor our key. So a record says *a* reply of that person to that work
item was typed, not which one. One record must never confirm two replies: the records in
the window are counted against every reply of ours by that actor to that work item whose
record may be in it (:class:`ReplyBook` keeps those that landed, and those nobody could
tell), and this reply is found only when a record is left over for it.

The log that cannot be read is not a reason to give up: the-loop restarting, a dropped
connection, a timeout or a 5xx is waited out (:class:`LogUnread`, retried with the queue's
backoff). Only the-loop answering that it has no such log (404, 410: an older the-loop)
parks the reply as :class:`Unsure`, for an admin; the relay parks it too after a long
horizon (``THELOOP_RELAY_GIVE_UP_SECONDS``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from looproom.durable.bounded import touched
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.state import lock_for

#: How far our clock and the-loop's may disagree: every bound of the window is widened by it.
CLOCK_SKEW = 2.0
REPLY_SENT = "session.reply_sent"
#: the-loop answering these has no event log to read: waiting would not change that.
NO_SUCH_LOG = (404, 410)
#: Where the book is kept in the plugin's storage, and how much of it.
BOOK_KEY = "theloop:replies"
PAIRS_CAP = 500
PER_PAIR_CAP = 50
#: A reply settled longer ago than this cannot share a window with one still being sent.
KEEP_SECONDS = 3 * 24 * 3600.0


@dataclass(frozen=True)
class Unsure(Failed):
    """It may have landed and cannot be looked up: parked for an admin, never re-sent alone."""


@dataclass(frozen=True)
class LogUnread(RetryLater):
    """It may have landed and the-loop cannot be asked now: looked up again later."""

    #: Why the log cannot be read, in a few words (``no answer (connection refused)``).
    why: str = ""
    #: The thread was told, with this attempt, that the reply is still waiting.
    told: bool = False


@dataclass(frozen=True)
class Sent:
    """One reply of ours: first tried at ``sent``, settled at ``settled`` (our clock);
    ``landed`` False when it was parked as :class:`Unsure` (nobody knows)."""

    key: str
    sent: float
    settled: float
    landed: bool


class ReplyBook:
    """Our replies that landed (or may have), per work item and actor, in the plugin's
    storage so a restart still counts them. Bounded in pairs, entries and age."""

    def __init__(self, store: MutableMapping[str, Any] | None = None) -> None:
        self._store: MutableMapping[str, Any] = store if store is not None else {}
        self._lock = lock_for(self._store)

    def note(self, work_item: str, actor: str, entry: Sent) -> None:
        pair = f"{work_item} {actor}"
        with self._lock:
            book = self._store.get(BOOK_KEY) or {}
            kept = [e for e in book.get(pair, []) if e.get("key") != entry.key]
            kept = [e for e in kept if float(e.get("settled", 0)) > entry.settled - KEEP_SECONDS]
            kept.append(asdict(entry))
            self._store[BOOK_KEY] = touched(book, pair, kept[-PER_PAIR_CAP:], PAIRS_CAP)

    def others(self, work_item: str, actor: str, key: str) -> list[Sent]:
        """Every reply of ours by ``actor`` to ``work_item`` but ``key``'s own."""
        book = self._store.get(BOOK_KEY) or {}
        found = book.get(f"{work_item} {actor}", []) if isinstance(book, Mapping) else []
        return [_entry(e) for e in found if isinstance(e, Mapping) and e.get("key") != key]


def _entry(raw: Mapping[str, Any]) -> Sent:
    return Sent(
        str(raw.get("key", "")),
        float(raw.get("sent", 0.0)),
        float(raw.get("settled", 0.0)),
        bool(raw.get("landed", True)),
    )


def window(first_try: float, others: Iterable[Sent]) -> tuple[float, list[Sent]]:
    """Where the look-up starts (our clock), and the replies of ours whose record is in it.

    It starts at this reply's first attempt, moved back to the first attempt of any reply
    whose record may fall on either side of that start — so each counted reply's record is
    surely inside, and no reply left out has one there.
    """
    since = first_try - CLOCK_SKEW
    listed = sorted(others, key=lambda e: e.sent)
    moved = True
    while moved:
        moved = False
        for entry in listed:
            if entry.settled + CLOCK_SKEW >= since > entry.sent - CLOCK_SKEW:
                since, moved = entry.sent - CLOCK_SKEW, True
    return since, [e for e in listed if e.settled + CLOCK_SKEW >= since]


def counted(records: Sequence[Any], actor: str, inside: Sequence[Sent]) -> str:
    """``"landed"``, ``"absent"`` or ``"unsure"``: this reply, once the records by ``actor``
    are taken, oldest first, by the replies of ours ``inside`` the window."""
    mine = sum(1 for r in records if isinstance(r, Mapping) and r.get("actor") == actor)
    spare = mine - sum(1 for e in inside if e.landed)
    unknown = sum(1 for e in inside if not e.landed)
    if spare >= 1 + unknown:
        return "landed"
    return "absent" if spare <= 0 else "unsure"


def unreadable(status: int, error: str, key: str) -> Outcome:
    """The log could not be read: park when the-loop has none, else look again later."""
    shown = f"answered {status}" if status else f"no answer ({error})"
    if status in NO_SUCH_LOG:
        return Unsure(unsure_reason(f"it has no event log to read: {shown}", key))
    return LogUnread(
        f"the-loop may have delivered the reply, and its event log cannot be read now ({shown}); "
        "looking again",
        uncertain=True,
        why=shown,
    )


def ambiguous(key: str) -> Unsure:
    return Unsure(
        unsure_reason(
            "its event log holds a record that may be this reply's or another of ours", key
        )
    )


def unsure_reason(why: str, key: str) -> str:
    return (
        f"the-loop may have delivered it, and could not tell ({why}), "
        "so it is not sent again on its own — look in the agent's session or on the work item "
        f"for the reply, then `!theloop queue retry {key}` to send it, or "
        f"`!theloop queue drop {key}` if it arrived"
    )


def found() -> Delivered:
    return Delivered("found in the-loop's event log")


def landed_outcome(outcome: Outcome) -> bool | None:
    """What the book keeps of a reply's outcome: True landed, False nobody knows, None
    nothing (it did not land, or will be tried again)."""
    if isinstance(outcome, Delivered):
        return True
    return False if isinstance(outcome, Unsure) else None
