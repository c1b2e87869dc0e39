"""A member's App Home tab: every open ask that asks them, oldest first, with how long the
agent has waited and a link to its thread; below it what they answered lately.

Published when they open the tab (``app_home_opened``) and redrawn when an ask that asks
them opens or closes (a step of the attention queue). The list is every ask this bot keeps
— every room, every the-loop instance it serves. Slack takes at most 100 blocks in a Home
view: the oldest waiting are shown first, and a line says how many more wait.
"""

from __future__ import annotations

from typing import Any

from looproom.attention import listing
from looproom.attention.record import Ask

#: Slack's limit on a Home view's blocks, less the header and the closing lines.
MAX_WAITING, MAX_ANSWERED = 60, 10


def view(member: str, found: list[Ask], now: float) -> dict[str, Any]:
    """The Home view for ``member`` from every ask that asked them (oldest first)."""
    waiting = [ask for ask in found if ask.is_open]
    answered = [ask for ask in found if ask.answered_by == member][-MAX_ANSWERED:]
    blocks: list[dict[str, Any]] = [_header(f"Waiting on you ({len(waiting)})")]
    if not waiting:
        blocks.append(_section("Nothing waits on you. 🎉"))
    blocks += [_section(listing.line(ask, now)) for ask in waiting[:MAX_WAITING]]
    if len(waiting) > MAX_WAITING:
        more = len(waiting) - MAX_WAITING
        blocks.append(_context(f"… and {more} more: `/the-loop mine` lists them all."))
    if answered:
        blocks.append({"type": "divider"})
        blocks.append(_header("You answered lately"))
        blocks += [_section(listing.line(ask, now)) for ask in reversed(answered)]
    return {"type": "home", "blocks": blocks}


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text[:150]}}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}
