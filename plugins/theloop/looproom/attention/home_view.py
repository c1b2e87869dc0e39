"""A member's App Home tab, drawn: every open ask that asks them, oldest first — how long
the agent has waited, a link to its thread and its one-tap answer where it has one — and
below it what they answered lately.

Slack shows at most :data:`MAX_BLOCKS` blocks in a Home tab and refuses a view with more,
so a list too long for it is cut, the last block saying how many more wait. Each ask is
one block (its line, the answer as the block's button), so the cut is exact. Nothing is
sent here: ``looproom.attention.home`` publishes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from looproom import times
from looproom.attention import listing
from looproom.attention.record import Ask
from looproom.room import buttons
from looproom.room.memory import ItemState

#: Slack's cap on a Home tab's blocks (a message has 50).
MAX_BLOCKS = 100
#: A section's text, at most (Slack's 3000, with room for the link).
_SECTION = 2900
#: The block of an ask on the Home: its message in Slack, where its answer is pressed.
BLOCK_PREFIX = "theloop-home:"
CALLBACK = "theloop-home"
#: What the Home says of the asks answered, at most.
ANSWERED_SHOWN = 5

#: ``(action id, label, value, style)`` of an ask's one-tap answer, or None.
Answer = tuple[str, str, str, str]


def one_tap(ask: Ask, state: ItemState) -> Answer | None:
    """The answer one tap can give, as the ask's own message offers it: Approve on a
    gate, "Defaults are fine" on a question stating its default, Execute on the phase
    selection (as drawn); none where the ask needs words (a question, a change request)."""
    if ask.kind == "gate" and _same(state.gate, ask):
        return buttons.APPROVE, buttons.NAMES[buttons.APPROVE], "approve", "primary"
    if ask.kind == "ask" and _same(state.ask, ask) and state.ask and state.ask.default:
        return buttons.DEFAULT, buttons.NAMES[buttons.DEFAULT], state.ask.default[:2000], ""
    if ask.kind == "selection" and _same(state.selection, ask) and not state.selection_done:
        return buttons.EXECUTE, "Execute as drawn", state.rows().fingerprint, "primary"
    return None


def _same(question: Any, ask: Ask) -> bool:
    return question is not None and (question.channel, question.ts) == (ask.channel, ask.ts)


def view(
    waiting: Sequence[Ask],
    answered: Sequence[Ask],
    now: float,
    answer_of: Callable[[Ask], Answer | None],
) -> dict[str, Any]:
    """The Home view: never more than :data:`MAX_BLOCKS` blocks."""
    head = [
        _header(f"Waiting on you ({len(waiting)})"),
        _context(
            f"the oldest first · drawn at {times.clock(now)} · an ask that needs words is "
            "answered in its thread"
        ),
    ]
    tail = _answered(answered[:ANSWERED_SHOWN], now)
    room = MAX_BLOCKS - len(head) - len(tail)
    if not waiting:
        body = [_section("Nothing waits on you.")]
    elif len(waiting) <= room:
        body = [_ask(ask, now, answer_of(ask)) for ask in waiting]
    else:
        shown = room - 1
        body = [_ask(ask, now, answer_of(ask)) for ask in waiting[:shown]]
        more = len(waiting) - shown
        body.append(_context(f"_… and {more} more waiting on you, newer than these._"))
    return {"type": "home", "callback_id": CALLBACK, "blocks": [*head, *body, *tail]}


def block_of(ask: Ask) -> str:
    """The block id of an ask on the Home: where its message is (Slack allows 255)."""
    return f"{BLOCK_PREFIX}{ask.channel}:{ask.ts}"[:255]


def where(block_id: str) -> tuple[str, str] | None:
    """The ask's ``(channel, ts)`` a Home block names; None for any other block."""
    if not block_id.startswith(BLOCK_PREFIX):
        return None
    channel, _, ts = block_id.removeprefix(BLOCK_PREFIX).partition(":")
    return (channel, ts) if channel and ts else None


def _ask(ask: Ask, now: float, answer: Answer | None) -> dict[str, Any]:
    block = _section(listing.line(ask, now), block_of(ask))
    if answer is not None:
        action_id, label, value, style = answer
        button: dict[str, Any] = {
            "type": "button",
            "action_id": action_id,
            "text": {"type": "plain_text", "text": label},
            "value": value,
        }
        if style:
            button["style"] = style
        block["accessory"] = button
    return block


def _answered(answered: Sequence[Ask], now: float) -> list[dict[str, Any]]:
    if not answered:
        return []
    lines = "\n".join(listing.line(ask, now) for ask in answered)
    return [{"type": "divider"}, _header("You answered lately"), _section(lines)]


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _section(text: str, block_id: str = "") -> dict[str, Any]:
    if len(text) > _SECTION:
        text = text[: _SECTION - 1] + "…"
    block: dict[str, Any] = {"type": "section", "text": {"type": "mrkdwn", "text": text}}
    if block_id:
        block["block_id"] = block_id
    return block
