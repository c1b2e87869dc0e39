"""Button and checkbox presses as Slack sends them: verified, read, and drawn over after.

Slack delivers a press as a ``block_actions`` payload — over Socket Mode, or as a signed
``POST /theloop/slack/interactive`` (verified with slack_sdk's ``SignatureVerifier``;
anything unverifiable is 401, and no signing secret means 503: fail closed). What a press
decides is judged in ``looproom.decide.judging`` and checked by its kind's row in
``looproom.decide.kinds``. After a press the message's controls give way to a line saying
who did what, when.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import ContextBlock, MarkdownTextObject, SectionBlock

from looproom import strict_json, times
from looproom.relay.decision import Decision
from looproom.room import buttons
from looproom.room import checklist as checklists
from looproom.slack.signed import Checked, signed_body
from looproom.strict_json import obj


@dataclass(frozen=True)
class Press:
    """One press, read from a ``block_actions`` payload."""

    member: str
    channel: str
    ts: str
    action_id: str
    thread_ts: str = ""
    value: str = ""
    block_id: str = ""
    values: Mapping[str, Any] = field(default_factory=dict)
    blocks: tuple[Mapping[str, Any], ...] = ()
    text: str = ""


def verify(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Checked:
    """Slack's signature on an interactive request, then its ``payload=`` form field."""
    checked = signed_body(headers, body, secret, now)
    if checked.status != 200:
        return checked
    text = body.decode("utf-8")
    try:
        raw = urllib.parse.parse_qs(text, strict_parsing=True)["payload"][0]
    except (ValueError, KeyError):
        return Checked(400, error="expected a form with a JSON payload field")
    try:
        payload = strict_json.loads(raw, what="payload")
    except strict_json.StrictJSONError as exc:
        return Checked(400, error="; ".join(exc.errors))
    if not isinstance(payload, dict):
        return Checked(400, error="payload is not a JSON object")
    wrong = [name for name in _OBJECTS if not isinstance(payload.get(name, {}), dict | None)]
    if not isinstance(payload.get("actions", []), list | None):
        wrong.append("actions (a list)")
    if wrong:
        return Checked(400, error=f"payload fields must be JSON objects: {', '.join(wrong)}")
    return Checked(200, payload)


#: The payload's fields :func:`read` looks into, which Slack always sends as objects.
_OBJECTS = ("channel", "container", "message", "state", "user")


def read(payload: Mapping[str, Any]) -> Press | None:
    """The press in a ``block_actions`` payload — ``None`` for anything we do not act on."""
    if payload.get("type") != "block_actions":
        return None
    actions = payload.get("actions")
    action = obj(actions[0]) if isinstance(actions, list) and actions else {}
    action_id = str(action.get("action_id") or "")
    if not action_id.startswith(buttons.PREFIX):
        return None
    message, container = obj(payload.get("message")), obj(payload.get("container"))
    channel = str(obj(payload.get("channel")).get("id") or container.get("channel_id") or "")
    ts = str(message.get("ts") or container.get("message_ts") or "")
    member = str(obj(payload.get("user")).get("id") or "")
    if not (channel and ts and member):
        return None
    listed = message.get("blocks")
    blocks = tuple(b for b in listed if isinstance(b, Mapping)) if isinstance(listed, list) else ()
    values = obj(payload.get("state")).get("values") or {}
    return Press(
        member=member,
        channel=channel,
        ts=ts,
        action_id=action_id,
        thread_ts=str(message.get("thread_ts") or container.get("thread_ts") or ""),
        value=str(action.get("value") or ""),
        block_id=str(action.get("block_id") or ""),
        values=values if isinstance(values, Mapping) else {},
        blocks=blocks,
        text=str(message.get("text") or ""),
    )


def ticked(values: Mapping[str, Any], rows: checklists.Checklist) -> dict[str, bool]:
    """Each drawn phase box as the press's ``state.values`` says it is ticked.

    Fail closed like the-loop: a group the state does not carry keeps its drawn ticks,
    and a value that is not a row of the checklist is not a box and is ignored.
    """
    tag = f"{buttons.SELECTION}:{rows.fingerprint}:phases:"
    ticks: dict[str, bool] = {}
    for start in range(0, len(rows.phases), buttons.CHECKBOX_LIMIT):
        group = start // buttons.CHECKBOX_LIMIT
        chosen = _selected(values, f"{tag}{group}", f"{buttons.PHASES}:{group}")
        if chosen is None:
            continue
        for row in rows.phases[start : start + buttons.CHECKBOX_LIMIT]:
            ticks[row.token] = row.token in chosen
    outer = f"{buttons.SELECTION}:{rows.fingerprint}:outer"
    chosen = _selected(values, outer, buttons.OUTER_LOOP)
    if chosen is not None and any(r.token == buttons.OUTER_LOOP_ROW for r in rows.settings):
        ticks[buttons.OUTER_LOOP_ROW] = buttons.OUTER_LOOP_ROW in chosen
    return ticks


def _selected(values: Mapping[str, Any], block_id: str, action_id: str) -> set[str] | None:
    element = (values.get(block_id) or {}).get(action_id) if isinstance(values, Mapping) else None
    options = element.get("selected_options") if isinstance(element, Mapping) else None
    if not isinstance(options, list):
        return None
    return {str(o.get("value") or "") for o in options if isinstance(o, Mapping)}


def pressed_line(press: Press, decision: Decision, at: float) -> str:
    """Who did what, when — the line the controls give way to."""
    clock = times.clock(at)
    name = buttons.NAMES.get(press.action_id, "A button")
    # Only a phase selection carries rows: the phases it leaves out are said.
    left = [row[6:].strip("`") for row in decision.rows if row.startswith("- [ ]")]
    extra = " — not running: " + ", ".join(f"`{t}`" for t in left) if left else ""
    return f"👀 *{name}* — pressed by <@{press.member}> at {clock}{extra}; relaying to the-loop."


def after_press(press: Press, line: str) -> list[dict[str, Any]]:
    """The pressed message's blocks with its controls replaced by ``line`` (links stay)."""
    blocks: list[dict[str, Any]] = []
    source = press.blocks or (
        SectionBlock(text=MarkdownTextObject(text=press.text or " ")).to_dict(),
    )
    for block in source:
        if str(block.get("block_id") or "").startswith(buttons.SELECTION):
            continue
        if block.get("type") != "actions":
            blocks.append(dict(block))
            continue
        links = [e for e in block.get("elements") or [] if isinstance(e, Mapping) and e.get("url")]
        if links:
            blocks.append({**block, "elements": links})
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text=line)]).to_dict())
    return blocks
