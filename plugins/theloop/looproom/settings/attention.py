"""``attention:``: who is asked when a work item waits on people, and whether they are told
directly, reminded and escalated — for every room, with a room's own overrides.

Quiet by default: unset, the asks are recorded and shown (``!theloop asks``, the App Home)
and named in their thread, but nobody gets a direct message, a reminder or an escalation.
``direct: true`` is the one key that turns those on for a room.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

#: Who is asked: the work item's owner where the room knows one, else its deciders.
OWNER, DECIDERS = "owner", "deciders"
DEFAULT_REMIND, DEFAULT_ESCALATE = 4 * 3600, 24 * 3600
#: A reminder sooner than this would be noise; tests configure seconds, people hours.
MIN_SECONDS = 1
DEFAULT_HOURS = (9 * 60, 18 * 60)
_KEYS = (
    "direct",
    "ask",
    "remindAfter",
    "escalateAfter",
    "escalateTo",
    "workingHours",
    "snoozeFor",
)
DEFAULT_SNOOZE = 3600
_HOURS = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-4]):([0-5][0-9])")
#: A member id (U…/W…), a user group id (S…) or an @handle.
_WHOM = re.compile(r"[UWS][A-Z0-9]{2,20}|@[a-z0-9][a-z0-9._-]{0,79}")


@dataclass(frozen=True)
class RoomAttention:
    """What one room does when a work item there waits on people."""

    #: Direct messages, reminders and escalations on (the one key); off: the thread only.
    direct: bool = False
    ask: str = OWNER
    remind_after: int = DEFAULT_REMIND
    escalate_after: int = DEFAULT_ESCALATE
    #: Members (U…), user groups (S…) or @handles mentioned when an ask escalates.
    escalate_to: tuple[str, ...] = ()
    #: Minutes after midnight, in each member's own Slack time zone.
    hours: tuple[int, int] = DEFAULT_HOURS
    #: Seconds "Remind me later" in a direct message puts that member's reminder back.
    snooze_for: int = DEFAULT_SNOOZE


@dataclass(frozen=True)
class AttentionSettings:
    """Every room's attention, and a room's own where ``attention.rooms`` names it."""

    default: RoomAttention = field(default_factory=RoomAttention)
    rooms: Mapping[str, RoomAttention] = field(default_factory=dict, hash=False)

    def of(self, channel: str, id_of: Callable[[str], str] = str) -> RoomAttention:
        """The room's own (named by id, or by a name ``id_of`` resolves), else every room's."""
        for key, room in self.rooms.items():
            if key == channel or (channel and id_of(key) == channel):
                return room
        return self.default

    def any_direct(self) -> bool:
        return self.default.direct or any(room.direct for room in self.rooms.values())


def parse(raw: Any, errors: list[str]) -> AttentionSettings:
    """``attention``; every bad key named in ``errors``."""
    if raw is None:
        return AttentionSettings()
    if not isinstance(raw, Mapping):
        errors.append("attention: expected a mapping (direct, ask, remindAfter, …, rooms)")
        return AttentionSettings()
    _unknown(raw, (*_KEYS, "rooms"), "attention.", errors)
    default = _room(raw, RoomAttention(), "attention.", errors)
    rooms: dict[str, RoomAttention] = {}
    listed = raw.get("rooms")
    if listed is not None and not isinstance(listed, Mapping):
        errors.append("attention.rooms: expected a mapping of room → its own keys")
        listed = {}
    for room, own in (listed or {}).items():
        key = f"attention.rooms[{room!r}]."
        if not isinstance(own, Mapping):
            errors.append(f"{key[:-1]}: expected a mapping of keys ({', '.join(_KEYS)})")
            continue
        _unknown(own, _KEYS, key, errors)
        rooms[str(room).strip()] = _room(own, default, key, errors)
    return AttentionSettings(default, rooms)


def _room(
    raw: Mapping[str, Any], base: RoomAttention, key: str, errors: list[str]
) -> RoomAttention:
    direct = raw.get("direct", base.direct)
    if not isinstance(direct, bool):
        errors.append(f"{key}direct: expected true or false, got {direct!r}")
        direct = base.direct
    ask = raw.get("ask", base.ask)
    if ask not in (OWNER, DECIDERS):
        errors.append(f"{key}ask: expected {OWNER} or {DECIDERS}, got {ask!r}")
        ask = base.ask
    remind = _seconds(raw.get("remindAfter"), f"{key}remindAfter", base.remind_after, errors)
    escalate = _seconds(
        raw.get("escalateAfter"), f"{key}escalateAfter", base.escalate_after, errors
    )
    if escalate <= remind:
        errors.append(f"{key}escalateAfter: must be longer than remindAfter ({remind} s)")
    return replace(
        base,
        direct=direct,
        ask=ask,
        remind_after=remind,
        escalate_after=escalate,
        escalate_to=_whom(raw.get("escalateTo"), f"{key}escalateTo", base.escalate_to, errors),
        hours=_hours(raw.get("workingHours"), f"{key}workingHours", base.hours, errors),
        snooze_for=_seconds(raw.get("snoozeFor"), f"{key}snoozeFor", base.snooze_for, errors),
    )


def _seconds(value: Any, key: str, default: int, errors: list[str]) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_SECONDS:
        errors.append(f"{key}: expected a whole number of seconds ≥ {MIN_SECONDS}, got {value!r}")
        return default
    return value


def _whom(value: Any, key: str, default: tuple[str, ...], errors: list[str]) -> tuple[str, ...]:
    if value is None:
        return default
    if not isinstance(value, list):
        errors.append(f"{key}: expected a list of member ids, user group ids (S…) or @handles")
        return default
    found = []
    for index, whom in enumerate(value):
        if not isinstance(whom, str) or not _WHOM.fullmatch(whom.strip()):
            errors.append(f"{key}[{index}]: expected U…, W…, S… or an @handle, got {whom!r}")
            continue
        found.append(whom.strip())
    return tuple(found)


def _hours(value: Any, key: str, default: tuple[int, int], errors: list[str]) -> tuple[int, int]:
    if value is None:
        return default
    matched = _HOURS.fullmatch(value.strip()) if isinstance(value, str) else None
    if matched is None:
        errors.append(f"{key}: expected HH:MM-HH:MM (09:00-18:00), got {value!r}")
        return default
    start_h, start_m, end_h, end_m = (int(part) for part in matched.groups())
    start, end = start_h * 60 + start_m, end_h * 60 + end_m
    if end > 24 * 60 or start >= end:
        errors.append(f"{key}: the end must come after the start, within one day, got {value!r}")
        return default
    return start, end


def _unknown(
    raw: Mapping[str, Any], known: tuple[str, ...], prefix: str, errors: list[str]
) -> None:
    for name in raw:
        if name not in known:
            errors.append(f"{prefix}{name}: unknown key (known: {', '.join(sorted(known))})")
