"""``slack.read``: how often the periodic reconcile runs, and how many heartbeats a split
check posts — the-loop's keys and defaults (``catchUpSeconds`` 900, ``0`` at connect only,
below 60 raised to 60; ``splitCheckBeats`` 2, at most 5, ``0`` off). The reconcile itself
is ``looproom.catchup.reconcile``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_SECONDS, MIN_SECONDS = 900, 60
DEFAULT_BEATS, MAX_BEATS = 2, 5
#: Keys of the-loop's ``channels.slack.read`` that mean nothing here (its transport).
_THEIRS = ("mode", "intervalSeconds")


@dataclass(frozen=True)
class ReadSettings:
    """``slack.read``: how often to reconcile, and how many heartbeats a split check posts."""

    catch_up_seconds: int = DEFAULT_SECONDS
    split_check_beats: int = DEFAULT_BEATS

    def describe(self) -> str:
        """``!theloop status``'s line."""
        every = (
            f"every {self.catch_up_seconds} s"
            if self.catch_up_seconds
            else "at connect only (slack.read.catchUpSeconds: 0)"
        )
        return (
            f"catch-up: at connect and {every}" if self.catch_up_seconds else f"catch-up: {every}"
        )


def parse(raw: Any, errors: list[str], warnings: list[str]) -> ReadSettings:
    """``slack.read``; a value outside the range is brought into it, with a warning, as
    the-loop does; one that is not a number is an error naming the key."""
    if raw is None:
        return ReadSettings()
    if not isinstance(raw, Mapping):
        errors.append("slack.read: expected a mapping (catchUpSeconds, splitCheckBeats)")
        return ReadSettings()
    for key in raw:
        if key in _THEIRS:
            warnings.append(f"slack.read.{key}: the-loop's key, not used by the bot (ignored)")
        elif key not in ("catchUpSeconds", "splitCheckBeats"):
            errors.append(f"slack.read.{key}: unknown key (known: catchUpSeconds, splitCheckBeats)")
    seconds = _number(raw.get("catchUpSeconds"), "catchUpSeconds", DEFAULT_SECONDS, errors)
    if 0 < seconds < MIN_SECONDS:
        warnings.append(
            f"slack.read.catchUpSeconds: {seconds} is below {MIN_SECONDS} — using {MIN_SECONDS}; "
            "the reconcile is a safety net, not a second way to read"
        )
        seconds = MIN_SECONDS
    beats = _number(raw.get("splitCheckBeats"), "splitCheckBeats", DEFAULT_BEATS, errors)
    if beats > MAX_BEATS:
        warnings.append(f"slack.read.splitCheckBeats: {beats} is above {MAX_BEATS} — using it")
        beats = MAX_BEATS
    return ReadSettings(max(0, seconds), max(0, beats))


def _number(value: Any, key: str, default: int, errors: list[str]) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(f"slack.read.{key}: expected a whole number, got {value!r}")
        return default
    return value
