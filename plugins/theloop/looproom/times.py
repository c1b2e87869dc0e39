"""The two ways the bot writes a time: ISO 8601 in UTC for what it relays, HH:MM for people;
and the one it reads from Slack, a message's ``ts``.

A decision is stamped with :func:`iso` (the-loop's envelopes and GitHub's ``since``
read that form); the room is told when something happened with :func:`clock`. Slack names
each message by its ``ts`` (``"1733140800.000100"``), which orders a channel's messages.
"""

from __future__ import annotations

from datetime import datetime, timezone

ISO = "%Y-%m-%dT%H:%M:%SZ"


def iso(at: float) -> str:
    """``2026-11-30T10:00:00Z``: unix seconds as ISO 8601, in UTC, to the second."""
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime(ISO)


def from_iso(text: str) -> float | None:
    """The unix seconds of an :func:`iso` time; ``None`` for any other text."""
    try:
        return datetime.strptime(text, ISO).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def clock(at: float) -> str:
    """``10:00 UTC``: the time of day a person reads in the room."""
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%H:%M UTC")


def slack_seconds(ts: str) -> float:
    """A Slack message ``ts`` as seconds; 0.0 for text that is not one (it sorts first)."""
    try:
        return float(ts)
    except ValueError:
        return 0.0


def later(ts: str, than: str) -> bool:
    """Whether the message ``ts`` came after ``than``; False when either is not a ts."""
    try:
        return float(ts) > float(than)
    except ValueError:
        return False
