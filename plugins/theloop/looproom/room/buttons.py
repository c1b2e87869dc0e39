"""The buttons and checkboxes a room message carries, as Block Kit.

The phase-selection checklist becomes checkboxes pre-ticked as the checklist ticks them,
with an Execute button; an approval-pending message gets Approve / Request changes; an
ask that states a default gets "Defaults are fine"; anything with a URL gets Open. Every
action id carries :data:`PREFIX`, the only actions :mod:`looproom.decide.presses` acts on.
The checklist's block ids carry its fingerprint, so a press on an older drawing of it is
recognised as stale. Where the room cannot receive presses, no control is drawn: the
checklist says it is edited on GitHub, with the link. Built with ``slack_sdk.models.blocks``,
so Slack's limits are checked here.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    BlockElement,
    ButtonElement,
    CheckboxesElement,
    ContextBlock,
    MarkdownTextObject,
    Option,
    PlainTextObject,
    SectionBlock,
)

from looproom import verb_names
from looproom.events import Event
from looproom.room import checklist as checklists
from looproom.room import event_types

PREFIX = "theloop:"
APPROVE = PREFIX + verb_names.APPROVE
CHANGES = PREFIX + verb_names.CHANGES
EXECUTE = PREFIX + verb_names.EXECUTE
DEFAULT = f"{PREFIX}default"
#: On a new work item's first thread reply: relays `start`.
START = PREFIX + verb_names.START
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
OPTION_VALUE_LIMIT = 150  # Slack's ceiling on an option's value: a box's is its row's name
_TEXT_LIMIT = 75  # an option's text and description
_VALUE_LIMIT = 2000  # a button's value


def _mrkdwn(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text)


def _plain(text: str) -> PlainTextObject:
    # Plain text: Slack draws it literally, so a producer's `<!here>` can ping no one.
    return PlainTextObject(text=text)


def _button(action_id: str, text: str, value: str = "", style: str = "") -> ButtonElement:
    return ButtonElement(
        action_id=action_id,
        text=_plain(text),
        value=value[:_VALUE_LIMIT] or None,
        style=style or None,
    )


def open_button(url: str) -> ButtonElement:
    return ButtonElement(action_id=OPEN, text=_plain("Open"), url=url)


def is_selection(event: Event) -> bool:
    """The checklist mirror — the-loop's own comment carrying the hook's marker."""
    return event_types.of(event).opens_selection


def blocks_for(event: Event, *, interactive: bool) -> list[dict[str, Any]]:
    """The control blocks to append to ``event``'s message (none for most events), as
    Slack's JSON."""
    return [block.to_dict() for block in controls(event, interactive=interactive)]


def controls(event: Event, *, interactive: bool) -> list[Block]:
    """:func:`blocks_for` as slack_sdk's models."""
    if is_selection(event):
        rows = checklists.parse(event.text) or checklists.DEFAULT
        if interactive and _drawable(rows):
            return selection_blocks(rows)
        return [_github_note(event.url)]
    buttons: list[BlockElement] = [open_button(event.url)] if event.url else []
    if interactive:
        buttons += _answer_buttons(event)
    return [ActionsBlock(elements=buttons)] if buttons else []


def _answer_buttons(event: Event) -> list[BlockElement]:
    row = event_types.of(event)
    if row.approval:
        return [
            _button(APPROVE, NAMES[APPROVE], verb_names.APPROVE, "primary"),
            _button(CHANGES, NAMES[CHANGES], verb_names.CHANGES, "danger"),
        ]
    default = str(event.detail.get("default") or "").strip()
    if row.family == event_types.ASK and default:
        return [_button(DEFAULT, NAMES[DEFAULT], default, "primary")]
    return []


def _drawable(rows: checklists.Checklist) -> bool:
    """Whether every row fits a box Slack takes: a name longer than a value may be cannot
    be a box, and a box cut short would name another row — the checklist is GitHub's then."""
    return all(len(row.token) <= OPTION_VALUE_LIMIT for row in rows.phases)


def _github_note(url: str) -> ContextBlock:
    where = f"<{url}|on GitHub>" if url else "on GitHub"
    text = (
        f"✍️ This checklist is edited {where}: tick the boxes there, then reply `the-loop execute`."
    )
    return ContextBlock(elements=[_mrkdwn(text)])


def selection_blocks(rows: checklists.Checklist) -> list[Block]:
    """The checklist as checkboxes (pre-ticked as drawn) and an Execute button."""
    tag = f"{SELECTION}:{rows.fingerprint}"
    lead = (
        "Untick what it does not need, tick anything optional it does want, then press "
        "*Execute* — or type `execute`, `execute without 2, 5`, `skip <phase>`."
    )
    blocks: list[Block] = [SectionBlock(block_id=f"{tag}:lead", text=_mrkdwn(lead))]
    for start in range(0, len(rows.phases), CHECKBOX_LIMIT):
        group = start // CHECKBOX_LIMIT
        chunk = rows.phases[start : start + CHECKBOX_LIMIT]
        options = [_option(start + n + 1, row) for n, row in enumerate(chunk)]
        ticked = [option for option, row in zip(options, chunk, strict=True) if row.ticked]
        element = CheckboxesElement(
            action_id=f"{PHASES}:{group}", options=options, initial_options=ticked or None
        )
        blocks.append(ActionsBlock(block_id=f"{tag}:phases:{group}", elements=[element]))
    blocks.extend(_outer_loop(rows, tag))
    blocks.append(_selection_note(rows, f"{tag}:note"))
    execute = _button(EXECUTE, NAMES[EXECUTE], rows.fingerprint, "primary")
    blocks.append(ActionsBlock(block_id=f"{tag}:execute", elements=[execute]))
    return blocks


def _outer_loop(rows: checklists.Checklist, tag: str) -> list[Block]:
    """Where the outer loop happens: a question of its own, answered in the same press."""
    row = next((r for r in rows.settings if r.token == OUTER_LOOP_ROW), None)
    if row is None:
        return []
    option = Option(
        value=OUTER_LOOP_ROW,
        text=_mrkdwn("On a pull request"),
        description=_plain("Untick to iterate the spec on the work item instead"),
    )
    element = CheckboxesElement(
        action_id=OUTER_LOOP, options=[option], initial_options=[option] if row.ticked else None
    )
    question = SectionBlock(
        block_id=f"{tag}:outer-lead", text=_mrkdwn("📍 *Where should the outer loop happen?*")
    )
    return [question, ActionsBlock(block_id=f"{tag}:outer", elements=[element])]


def _option(number: int, row: checklists.Row) -> Option:
    about = row.about or ("" if row.ticked else "optional — runs only if ticked")
    return Option(
        value=row.token,
        text=_mrkdwn(f"{number}. `{row.token}`"[:_TEXT_LIMIT]),
        description=_plain(about[:_TEXT_LIMIT]) if about else None,
    )


def _selection_note(rows: checklists.Checklist, block_id: str) -> ContextBlock:
    notes = []
    if rows.always:
        notes.append("Always run: " + ", ".join(f"`{name}`" for name in rows.always) + ".")
    if [row for row in rows.settings if row.token != OUTER_LOOP_ROW]:
        notes.append(
            "The other settings (sessions, harness, model…) stay as the checklist on the "
            "ticket shows them — Open it to change them."
        )
    text = " ".join(notes) or "Ticked phases run."
    return ContextBlock(block_id=block_id, elements=[_mrkdwn(text)])
