"""Working hours in a member's own time zone: whether a reminder may go now, and if not,
how long until it may.

The hours are minutes after the member's local midnight (``attention.workingHours``); the
offset is what Slack's ``users.info`` says (``tz_offset``). Days of the week are not
considered: a reminder waits for the hours, not for Monday.
"""

from __future__ import annotations

DAY = 24 * 3600


def wait_for_hours(now: float, offset: int, hours: tuple[int, int]) -> float:
    """Seconds from ``now`` (UTC epoch) until the member's working hours begin; 0 within."""
    start, end = hours[0] * 60, hours[1] * 60
    local = (now + offset) % DAY
    if start <= local < end:
        return 0.0
    return (start - local) % DAY
