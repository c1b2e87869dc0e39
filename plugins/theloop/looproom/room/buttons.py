"""The buttons and checkboxes a room message carries, as Block Kit.

The phase-selection checklist becomes checkboxes pre-ticked as the checklist ticks them,
with an Execute button; an approval-pending message gets Approve / Request changes; an
ask that states a default gets "Defaults are fine"; anything with a URL gets Open. Every
action id carries :data:`PREFIX`, the only actions :mod:`looproom.decide.presses` acts on.
The checklist's block ids carry its fingerprint, so a press on an older drawing of it is
recognised as stale. Where the room cannot receive presses, no control is drawn: the
checklist says it is edited on GitHub, with the link.
"""

from __future__ import annotations

from typing import Any

from looproom.events import APPROVAL_EVENTS, ASK, Event
from looproom.room import checklist as checklists

PREFIX = "theloop:"
APPROVE = f"{PREFIX}approve"
CHANGES = f"{PREFIX}changes"
EXECUTE = f"{PREFIX}execute"
DEFAULT = f"{PREFIX}default"
#: On a new work item's first thread reply: relays `start`.
START = f"{PREFIX}start"
OPEN = f"{PREFIX}open"
#: The parent message's link to the work item (a link: a press on it decides nothing).
OPEN_ITEM = f"{PREFIX}open-item"
PHASES = f"{PREFIX}phases"
#: The outer-loop question: its own box in the selection message.
OUTER_LOOP = f"{PREFIX}outer-loop"
OUTER_LOOP_ROW = "outer-loop-on-pull-request"
SELECTION = f"{PREFIX}selection"
#: What each button says — on the button, and in the line that replaces the controls
#: after a press.
NAMES = {
    APPROVE: "Approve",
    CHANGES: "Request changes",
    EXECUTE: "Execute",
    DEFAULT: "Defaults are fine",
    START: "Start",
}

CHECKBOX_LIMIT = 10  # Slack's ceiling on one checkboxes element's options
_TEXT_LIMIT = 75  # an option's text and description
_VALUE_LIMIT = 2000  # a button's value


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": text}


def _plain(text: str) -> dict[str, str]:
    # Plain text: Slack draws it literally, so a producer's `<!here>` can ping no one.
    return {"type": "plain_text", "text": text}


def _button(action_id: str, text: str, value: str = "", style: str = "") -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text},
    }
    if value:
        button["value"] = value[:_VALUE_LIMIT]
    if style:
        button["style"] = style
    return button


def open_button(url: str) -> dict[str, Any]:
    return {**_button(OPEN, "Open"), "url": url}


def is_selection(event: Event) -> bool:
    """The checklist mirror — the-loop's own comment carrying the hook's marker."""
    return event.event_type == "comment.agent" and checklists.is_checklist(event.text)


def blocks_for(event: Event, *, interactive: bool) -> list[dict[str, Any]]:
    """The control blocks to append to ``event``'s message (none for most events)."""
    if is_selection(event):
        rows = checklists.parse(event.text) or checklists.DEFAULT
        if interactive:
            return selection_blocks(rows)
        return [_github_note(event.url)]
    buttons = [open_button(event.url)] if event.url else []
    if interactive:
        buttons += _answer_buttons(event)
    return [{"type": "actions", "elements": buttons}] if buttons else []


def _answer_buttons(event: Event) -> list[dict[str, Any]]:
    if event.event_type in APPROVAL_EVENTS:
        return [
            _button(APPROVE, NAMES[APPROVE], "approve", "primary"),
            _button(CHANGES, NAMES[CHANGES], "changes", "danger"),
        ]
    default = str(event.detail.get("default") or "").strip()
    if event.event_type == ASK and default:
        return [_button(DEFAULT, NAMES[DEFAULT], default, "primary")]
    return []


def _github_note(url: str) -> dict[str, Any]:
    where = f"<{url}|on GitHub>" if url else "on GitHub"
    text = (
        f"✍️ This checklist is edited {where}: tick the boxes there, then reply `the-loop execute`."
    )
    return {"type": "context", "elements": [_mrkdwn(text)]}


def selection_blocks(rows: checklists.Checklist) -> list[dict[str, Any]]:
    """The checklist as checkboxes (pre-ticked as drawn) and an Execute button."""
    tag = f"{SELECTION}:{rows.fingerprint}"
    lead = (
        "Untick what it does not need, tick anything optional it does want, then press "
        "*Execute* — or type `execute`, `execute without 2, 5`, `skip <phase>`."
    )
    blocks: list[dict[str, Any]] = [
        {"type": "section", "block_id": f"{tag}:lead", "text": _mrkdwn(lead)}
    ]
    for start in range(0, len(rows.phases), CHECKBOX_LIMIT):
        group = start // CHECKBOX_LIMIT
        chunk = rows.phases[start : start + CHECKBOX_LIMIT]
        options = [_option(start + n + 1, row) for n, row in enumerate(chunk)]
        element: dict[str, Any] = {
            "type": "checkboxes",
            "action_id": f"{PHASES}:{group}",
            "options": options,
        }
        ticked = [option for option, row in zip(options, chunk, strict=True) if row.ticked]
        if ticked:
            element["initial_options"] = ticked
        blocks.append(
            {"type": "actions", "block_id": f"{tag}:phases:{group}", "elements": [element]}
        )
    blocks.extend(_outer_loop(rows, tag))
    blocks.append({**_selection_note(rows), "block_id": f"{tag}:note"})
    execute = _button(EXECUTE, NAMES[EXECUTE], rows.fingerprint, "primary")
    blocks.append({"type": "actions", "block_id": f"{tag}:execute", "elements": [execute]})
    return blocks


def _outer_loop(rows: checklists.Checklist, tag: str) -> list[dict[str, Any]]:
    """Where the outer loop happens: a question of its own, answered in the same press."""
    row = next((r for r in rows.settings if r.token == OUTER_LOOP_ROW), None)
    if row is None:
        return []
    option = {
        "text": _mrkdwn("On a pull request"),
        "value": OUTER_LOOP_ROW,
        "description": _plain("Untick to iterate the spec on the work item instead"),
    }
    element: dict[str, Any] = {"type": "checkboxes", "action_id": OUTER_LOOP, "options": [option]}
    if row.ticked:
        element["initial_options"] = [option]
    question = {
        "type": "section",
        "block_id": f"{tag}:outer-lead",
        "text": _mrkdwn("📍 *Where should the outer loop happen?*"),
    }
    return [question, {"type": "actions", "block_id": f"{tag}:outer", "elements": [element]}]


def _option(number: int, row: checklists.Row) -> dict[str, Any]:
    option: dict[str, Any] = {
        "text": _mrkdwn(f"{number}. `{row.token}`"[:_TEXT_LIMIT]),
        "value": row.token,
    }
    about = row.about or ("" if row.ticked else "optional — runs only if ticked")
    if about:
        option["description"] = _plain(about[:_TEXT_LIMIT])
    return option


def _selection_note(rows: checklists.Checklist) -> dict[str, Any]:
    notes = []
    if rows.always:
        notes.append("Always run: " + ", ".join(f"`{name}`" for name in rows.always) + ".")
    if [row for row in rows.settings if row.token != OUTER_LOOP_ROW]:
        notes.append(
            "The other settings (sessions, harness, model…) stay as the checklist on the "
            "ticket shows them — Open it to change them."
        )
    return {"type": "context", "elements": [_mrkdwn(" ".join(notes) or "Ticked phases run.")]}
