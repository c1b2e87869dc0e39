"""What an ask says to the people it asks: the mention in its thread, the direct message
(the ask's own digest and answers, under a line saying whose and where), the reminder,
the escalation, and the direct message once the ask is answered.

Only the members asked are mentioned, never ``@channel``/``@here``: a user group is named
only where ``attention.escalateTo`` names it. Every line is drawn here; nothing is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from looproom import times
from looproom.attention.record import ANSWERED, Ask
from looproom.decide.talk import thread_link
from looproom.slack.text import escape

#: The blocks the direct message adds around the ask's own: dropped again before a press
#: in the direct message is read as a press on the ask.
BLOCK_PREFIX = "theloop-attention:"
#: "I'm on it": the member claims the ask (the others are not reminded).
CLAIM_ACTION = "theloop-attention:claim"
#: "Remind me later": the member's reminder of this ask put back (``attention.snoozeFor``).
SNOOZE_ACTION = "theloop-attention:snooze"
#: A claim said with a reaction on the ask: 👀.
CLAIM_REACTIONS = frozenset({"eyes"})
_WHAT = {"ask": "a question", "gate": "a gate", "selection": "the phase selection"}


def link(ask: Ask) -> str:
    return thread_link(ask.channel, ask.thread or ask.ts)


def mentions(members: Iterable[str]) -> str:
    """Each member or user group as Slack mentions it; an ``@handle`` as written."""
    said = []
    for whom in members:
        if whom.startswith("S"):
            said.append(f"<!subteam^{whom}>")
        elif whom.startswith("@"):
            said.append(escape(whom))
        else:
            said.append(f"<@{whom}>")
    return " ".join(said)


def mention_text(ask: Ask) -> str:
    """The thread's line naming the members asked."""
    return f"🔔 {mentions(ask.asked)} — {_WHAT.get(ask.kind, 'this')} here waits on you."


def _head(ask: Ask, line: str) -> dict[str, Any]:
    text = f"{line} · <{link(ask)}|open the thread>"
    return {
        "type": "context",
        "block_id": f"{BLOCK_PREFIX}head",
        "elements": [{"type": "mrkdwn", "text": text}],
    }


def dm_text(ask: Ask) -> str:
    return f"🔔 `{ask.work_item}` waits on you: {_WHAT.get(ask.kind, 'an ask')}."


def dm_blocks(
    ask: Ask, original: list[Mapping[str, Any]], waited: float = 0.0, *, taps: bool = True
) -> list[dict]:
    """The direct message: whose ask and where, the ask's own blocks (its digest and its
    answers, pressable here), and "I'm on it" — where a press reaches the bot (``taps``)."""
    line = dm_text(ask)
    if waited:
        line = f"⏰ Still waiting on you — `{ask.work_item}`, for {_duration(waited)}."
    claim = {
        "type": "actions",
        "block_id": f"{BLOCK_PREFIX}claim",
        "elements": [
            {
                "type": "button",
                "action_id": CLAIM_ACTION,
                "text": {"type": "plain_text", "text": "I'm on it"},
                "value": ask.id[:2000],
            },
            {
                "type": "button",
                "action_id": SNOOZE_ACTION,
                "text": {"type": "plain_text", "text": "Remind me later"},
                "value": ask.id[:2000],
            },
        ],
    }
    kept = [dict(block) for block in original if not _ours(block)]
    return [_head(ask, line), *kept[:45], *([claim] if taps else [])]


def closed_blocks(ask: Ask) -> list[dict]:
    """The direct message once the ask is closed: who answered, when, and how."""
    return [_head(ask, closed_text(ask))]


def closed_text(ask: Ask) -> str:
    when = times.clock(ask.closed)
    if ask.outcome == ANSWERED:
        how = f" ({ask.answered_how})" if ask.answered_how else ""
        return f"✅ `{ask.work_item}`: answered by <@{ask.answered_by}> at {when}{how}."
    return f"✅ `{ask.work_item}`: the work item moved on at {when}; nothing waits on you."


def claimed_text(member: str) -> str:
    return f"👀 <@{member}> is on it."


def with_claim(blocks: list[dict[str, Any]], member: str) -> list[dict[str, Any]]:
    """The ask's own blocks with one line under them saying who is on it (a line drawn
    before is replaced, not repeated; Slack's 50 blocks kept)."""
    line = {
        "type": "context",
        "block_id": f"{BLOCK_PREFIX}claimed",
        "elements": [{"type": "mrkdwn", "text": claimed_text(member)}],
    }
    kept = [b for b in blocks if b.get("block_id") != line["block_id"]]
    return [*kept[:49], line]


def escalation_text(ask: Ask, whom: Iterable[str], waited: float) -> str:
    return (
        f"⏫ {mentions(whom)} — {_WHAT.get(ask.kind, 'this')} here has waited "
        f"{_duration(waited)} on {mentions(ask.asked) or 'nobody who may answer'}."
    )


def without_ours(blocks: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ask's own blocks of a direct message (what the room's message carries)."""
    return [block for block in blocks if not _ours(block)]


def _ours(block: Mapping[str, Any]) -> bool:
    return str(block.get("block_id") or "").startswith(BLOCK_PREFIX)


def _duration(seconds: float) -> str:
    minutes = int(seconds // 60)
    if minutes < 1:
        return f"{int(seconds)} s"
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h"
