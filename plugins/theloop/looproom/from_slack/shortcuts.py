"""The two message shortcuts, as Slack sends them (``message_action`` payloads).

**Add as the-loop context** (``theloop_record_context``) records the thread the message is
in; **Record a decision** (``theloop_record_decision``) opens a form filled in from the
message. Either is read here into plain values; what they do is the talk desk's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looproom.strict_json import obj

RECORD_CONTEXT, RECORD_DECISION = "theloop_record_context", "theloop_record_decision"
SHORTCUTS = (RECORD_CONTEXT, RECORD_DECISION)


@dataclass(frozen=True)
class Shortcut:
    """A message shortcut used on a message: which, by whom, on what, and the trigger a
    form is opened with (it is also what makes a redelivery the same act)."""

    callback_id: str
    member: str
    channel: str
    ts: str
    thread: str
    text: str
    trigger_id: str


def read(payload: Mapping[str, Any]) -> Shortcut | None:
    """The shortcut in a ``message_action`` payload — ``None`` when it is not one of ours."""
    if payload.get("type") != "message_action":
        return None
    callback_id = str(payload.get("callback_id") or "")
    message = obj(payload.get("message"))
    channel = str(obj(payload.get("channel")).get("id") or "")
    member = str(obj(payload.get("user")).get("id") or "")
    ts = str(message.get("ts") or payload.get("message_ts") or "")
    trigger = str(payload.get("trigger_id") or "")
    if callback_id not in SHORTCUTS or not (channel and member and ts and trigger):
        return None
    return Shortcut(
        callback_id,
        member,
        channel,
        ts,
        str(message.get("thread_ts") or ts),
        str(message.get("text") or ""),
        trigger,
    )
