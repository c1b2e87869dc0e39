"""The asks on record, as text: ``!theloop asks [<work item> | --since <when>]``,
``/the-loop mine`` and the oldest waiting ask for ``!theloop status``.

``<when>`` is a time ago (``90s``, ``30m``, ``4h``, ``2d``) or a UTC date or time in ISO
8601 (``2026-12-01``, ``2026-12-01T09:00:00Z``); anything else is refused, naming it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timezone

from looproom import times
from looproom.attention import notes
from looproom.attention.record import ANSWERED, OPEN, Ask
from looproom.slack.text import defang

#: Lines an answer shows at most: read, not scrolled.
SHOWN = 25
USAGE = "usage: `!theloop asks [<work item> | --since <when>]` — <when>: 4h, 2d or 2026-12-01"
_AGO = re.compile(r"(\d{1,6})([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_WHAT = {"ask": "question", "gate": "gate", "selection": "phase selection"}


class UsageError(ValueError):
    """The arguments cannot be read; the message says what is wrong and the usage."""


def parse_since(text: str, now: float) -> float:
    """The time ``text`` names (a time ago, or an ISO date or time in UTC)."""
    matched = _AGO.fullmatch(text)
    if matched:
        return now - int(matched.group(1)) * _UNIT[matched.group(2)]
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"`{defang(text, 40)}` is not a time: {USAGE}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def read_args(args: str, now: float) -> tuple[str, float | None]:
    """(the work item named, or ``""``; the time ``--since`` names, or None)."""
    words = args.split()
    if not words:
        return "", None
    if words[0] == "--since":
        if len(words) != 2:
            raise UsageError(USAGE)
        return "", parse_since(words[1], now)
    if len(words) != 1 or words[0].startswith("-"):
        raise UsageError(USAGE)
    return words[0], None


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 3 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"


def who(members: Iterable[str]) -> str:
    return ", ".join(f"<@{m}>" for m in members) or "nobody who may answer"


def line(ask: Ask, now: float) -> str:
    """One ask's life on one line."""
    what = _WHAT.get(ask.kind, ask.kind)
    # A link where Slack drew the ask; a plain chat's ask has no message to link to.
    where = f"<{notes.link(ask)}|{what}>" if ask.channel and ask.ts else what
    opened = times.clock(ask.opened)
    said = [f"• `{ask.work_item}` {where} — opened {opened}, asked {who(ask.asked)}"]
    if ask.reminded:
        said.append(f"reminded {times.clock(ask.reminded)}")
    if ask.escalated:
        said.append(f"escalated {times.clock(ask.escalated)}")
    if ask.claimed_by:
        said.append(f"claimed by <@{ask.claimed_by}>")
    if ask.outcome == ANSWERED:
        how = f" ({ask.answered_how})" if ask.answered_how else ""
        said.append(f"answered by <@{ask.answered_by}>{how} after {duration(ask.waited(now))}")
    elif ask.outcome == OPEN:
        said.append(f"*waiting {duration(ask.waited(now))}*")
    else:
        said.append(f"moved on after {duration(ask.waited(now))}")
    return "; ".join(said)


def asks_text(found: list[Ask], now: float, heading: str) -> str:
    if not found:
        return f"{heading}: none."
    shown = found[-SHOWN:]
    lines = [f"*{heading}* ({len(found)}):", *(line(ask, now) for ask in shown)]
    if len(found) > len(shown):
        lines.insert(1, f"_… the {len(found) - len(shown)} older are not shown_")
    return "\n".join(lines)


def mine_text(member: str, waiting: list[Ask], total: int, answered: list[Ask], now: float) -> str:
    """``/the-loop mine``: what waits on the member, oldest first — the first ``SHOWN``,
    and how many more, newer, wait besides — then what they answered last."""
    if not total:
        lines = ["Nothing waits on you."]
    else:
        shown = waiting[:SHOWN]
        lines = [f"*Waiting on you* ({total}), oldest first:"]
        lines += [line(ask, now) for ask in shown]
        if total > len(shown):
            lines.append(f"_… and {total - len(shown)} more waiting on you, newer than these._")
    if answered:
        lines += ["*You answered lately:*", *(line(ask, now) for ask in answered)]
    return "\n".join(lines)


def oldest_line(ask: Ask | None, now: float) -> str:
    """``!theloop status``'s line: the oldest waiting ask, or that none waits."""
    if ask is None:
        return "asks: none waiting"
    what = _WHAT.get(ask.kind, ask.kind)
    waited = duration(ask.waited(now))
    return (
        f"asks: the oldest waiting is `{ask.work_item}`'s {what}, {waited}, asking {who(ask.asked)}"
    )
