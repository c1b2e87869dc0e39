"""How an event looks in the room: Block Kit for Slack, plain text elsewhere.

A threaded event message is a lead line (one emoji, what happened, the node), the text
through the digest, the agent's summary, verbose context lines, and the controls (an
"Open" link button, and the decision controls of :mod:`looproom.room.buttons` where the room
can receive presses). Verbosity levels are strict supersets as in the-loop's
``render``: quiet is the lead, the summary and the controls; normal adds the text (and the
artifact excerpt when there is no summary);
verbose adds the detail. The parent message names the work item, links it and shows its
latest state. Every producer-written string is escaped and its mentions neutralised.
Blocks are built with ``slack_sdk.models.blocks`` so Slack's limits are checked here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    MarkdownTextObject,
    SectionBlock,
)

from looproom import digest, workitem
from looproom.inbound.events import Event
from looproom.room import budget, buttons
from looproom.room.slack_text import button_url, escape, neutralise

SECTION_LIMIT = 3000
SUMMARY_LIMIT = 600  # a summary is 2–3 sentences; anything longer is cut
DETAIL_VALUE_LIMIT = 300
CONTEXT_LIMIT = 2000
LEAD_LIMIT = 300
TEXT_LIMIT = 40_000  # Slack's ceiling on the notification text

#: Event type → (emoji, what happened). Unknown types get a neutral speech mark.
_LEADS: dict[str, tuple[str, str]] = {
    "session.awaiting_input": ("🤔", "Question for you"),
    "decision-pending": ("🤔", "Decision needed"),
    "phase-approval-pending": ("📋", "Approval needed"),
    "pr-review-pending": ("👀", "Pull request ready for review"),
    "security-sign-off-pending": ("🔐", "Security sign-off needed"),
    "conflict-escalated": ("⚠️", "Escalated"),
    "work-item-complete": ("🎉", "Done"),
    "phase.started": ("🔨", "Phase started"),
    "phase.completed": ("✅", "Phase completed"),
    "phase.progress": ("🔨", "Progress"),
    "work-item.closed": ("🎉", "Closed"),
    "standing.started": ("🚀", "Standing session up"),
    "comment.agent": ("💬", "The agent commented"),
    "comment.human": ("💬", "New comment"),
}
_DEFAULT_LEAD = ("💬", "Update")

#: Event type → the state the parent shows afterwards ("{where}" = the node or phase).
#: Types absent here (comments, unknown) leave the parent's state as it was.
_STATES: dict[str, str] = {
    "session.awaiting_input": "🤔 Waiting for your answer",
    "decision-pending": "🤔 Waiting for a decision{where}",
    "phase-approval-pending": "📋 Waiting for approval{where}",
    "pr-review-pending": "👀 Waiting for pull request review{where}",
    "security-sign-off-pending": "🔐 Waiting for security sign-off{where}",
    "conflict-escalated": "⚠️ Escalated{where}",
    "work-item-complete": "🎉 Done",
    "work-item.closed": "🎉 Closed",
    "phase.started": "🔨 Working{where}",
    "phase.progress": "🔨 Working{where}",
    "phase.completed": "✅ Finished{where}",
    "standing.started": "🚀 Standing session up",
}
_NEW_STATE = "🆕 Started"

_SLACK_LINK = re.compile(r"<(https?://[^|>\s]+)\|([^>]+)>")


class RenderSettings(Protocol):
    """What rendering reads from ``looproom.settings.Settings``."""

    verbosity: str
    max_chars: int
    long_messages: str


@dataclass(frozen=True)
class Rendering:
    """One Slack message: Block Kit ``blocks`` and the notification ``text`` fallback."""

    blocks: list[dict[str, Any]]
    text: str


# -- the summary ---------------------------------------------------------------------------------


def sanitise_summary(summary: str, settings: RenderSettings, url: str = "") -> str:
    """The agent's summary as mrkdwn: mentions neutralised, escaped, at most 600 chars."""
    cleaned = neutralise(summary.strip())
    return digest.fit(cleaned, SUMMARY_LIMIT, settings.long_messages, url) if cleaned else ""


# -- the work item -------------------------------------------------------------------------------


def work_item_label(work_item: str) -> str:
    """``owner/repo#7`` for a GitHub ref; the ref itself otherwise."""
    ref = workitem.parse(work_item)
    return ref.label if ref is not None else work_item


def work_item_url(work_item: str, fallback: str = "") -> str:
    """The issue's page for a GitHub ref (GitHub redirects a PR number), else ``fallback``."""
    ref = workitem.parse(work_item)
    if ref is not None and ref.issue_url:
        return button_url(ref.issue_url)
    return button_url(fallback.split("#", 1)[0]) if fallback else ""


def _where(event: Event) -> str:
    """The node a gate waits at; for lifecycle events, the phase they belong to."""
    first, second = (
        ("phase", "node") if event.event_type.startswith("phase.") else ("node", "phase")
    )
    return str(event.detail.get(first) or event.detail.get(second) or "").strip()[:80]


def state_after(event: Event, previous: str) -> str:
    """The state line the parent shows once ``event`` is posted (``previous`` if unchanged)."""
    template = _STATES.get(event.event_type)
    if template is None:
        return previous or _NEW_STATE
    where = _where(event)
    return template.format(where=f": {where}" if where else "")


# -- the event message --------------------------------------------------------------------------


def lead(event: Event) -> str:
    """The first line, mrkdwn: emoji, what happened, the node; producer text escaped."""
    emoji, title = _LEADS.get(event.event_type, _DEFAULT_LEAD)
    if event.event_type not in _LEADS:
        title = f"{title} ({event.event_type})"
    where = _where(event)
    line = f"{emoji} *{escape(neutralise(title))}*"
    if where:
        line += f" · `{escape(neutralise(where))}`"
    return line[:LEAD_LIMIT]


def controls(event: Event, *, interactive: bool = False) -> list[Block]:
    """The message's controls: what :func:`looproom.room.buttons.blocks_for`
    draws for ``event`` — Open, and where the room can receive presses (``interactive``)
    Approve / Request changes, "Defaults are fine", the checklist's boxes and Execute — with
    only a web link for Open. The checklist's controls carry no link: Open goes above them."""
    url = button_url(event.url)
    drawn = buttons.blocks_for(replace(event, url=url), interactive=interactive)
    if url and not any(_links(block) for block in drawn):
        drawn.insert(0, {"type": "actions", "elements": [buttons.open_button(url)]})
    # Parsed into slack_sdk's models, so Slack's limits are checked here too.
    return [block for block in map(Block.parse, drawn) if block is not None]


def _links(block: Mapping[str, Any]) -> bool:
    if block.get("type") != "actions":
        return False
    return any(element.get("url") for element in block.get("elements") or [])


def _section(mrkdwn: str) -> SectionBlock:
    return SectionBlock(text=MarkdownTextObject(text=mrkdwn[:SECTION_LIMIT]))


def _fit(text: str, settings: RenderSettings, url: str) -> str:
    limit = min(max(settings.max_chars, 1), SECTION_LIMIT)
    return budget.ROOM.run(
        lambda: digest.fit(text, limit, settings.long_messages, url),
        lambda: plain_fit(text, limit),
        f"{len(text)} characters",
    )


def plain_fit(text: str, limit: int) -> str:
    """``text`` as it is, cut to ``limit``, nothing drawn: what a drawing over its time
    budget is replaced with (escaped and inert, so it is safe as mrkdwn)."""
    cut = text if len(text) <= limit else text[: max(0, limit - 1)] + "…"
    shown = escape(neutralise(cut))
    while len(shown) > limit:  # escaping lengthens: cut the text again, never an entity
        cut = cut[: len(cut) * 3 // 4] + "…"
        shown = escape(neutralise(cut))
    return shown


def _detail(event: Event) -> list[tuple[str, str]]:
    """The detail a verbose message shows: every non-empty value but the excerpt, capped."""
    pairs = []
    for key, value in event.detail.items():
        value = str(value).strip()
        if key != "excerpt" and value:
            capped = value if len(value) <= DETAIL_VALUE_LIMIT else value[: DETAIL_VALUE_LIMIT - 1]
            pairs.append((str(key), capped + ("…" if capped != value else "")))
    return pairs


def _detail_lines(event: Event) -> str:
    lines = [f"*{escape(neutralise(k))}:* {escape(neutralise(v))}" for k, v in _detail(event)]
    joined = "\n".join(lines)
    return joined if len(joined) <= CONTEXT_LIMIT else joined[: CONTEXT_LIMIT - 1] + "…"


def render(event: Event, settings: RenderSettings, *, interactive: bool = False) -> Rendering:
    """The threaded message for ``event`` at ``settings.verbosity`` (quiet ⊂ normal ⊂ verbose),
    with its controls (``interactive``: the room can receive presses, so draw the buttons)."""
    blocks, fallback = _content(event, settings)
    blocks.extend(controls(event, interactive=interactive))
    return Rendering([block.to_dict() for block in blocks], fallback)


def _content(event: Event, settings: RenderSettings) -> tuple[list[Block], str]:
    """The message's blocks but its controls, and the notification text."""
    quiet = settings.verbosity == "quiet"
    head = lead(event)
    body = _fit(event.text, settings, event.url) if event.text.strip() and not quiet else ""
    summary = sanitise_summary(event.summary, settings, event.url)
    excerpt = str(event.detail.get("excerpt") or "").strip()
    # The agent's summary says what the artifact is about: it stands in for the excerpt.
    second = summary or (_fit(excerpt, settings, event.url) if excerpt and not quiet else "")
    blocks: list[Block] = [_section(text) for text in (head, body, second) if text]
    detail = _detail_lines(event) if settings.verbosity == "verbose" else ""
    if detail:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=detail)]))
    # A notification shows what the message shows: the same digested strings.
    fallback = "\n\n".join(text for text in (head, body, summary) if text)
    return blocks, fallback[:TEXT_LIMIT]


def render_parent(work_item: str, state: str, url: str = "") -> Rendering:
    """The work item's parent message: its name linked, and the state it is in now."""
    label = escape(work_item_label(work_item))
    link = work_item_url(work_item, url)
    title = f"*<{link}|{label}>*" if link else f"*{label}*"
    line = escape(neutralise(state or _NEW_STATE))
    blocks: list[Block] = [_section(f"{title}\n{line}")]
    blocks.append(ContextBlock(elements=[MarkdownTextObject(text="Updates in the thread 🧵")]))
    if link:
        button = ButtonElement(text="Open", url=link, action_id=buttons.OPEN_ITEM)
        blocks.append(ActionsBlock(elements=[button]))
    return Rendering([block.to_dict() for block in blocks], f"{label} — {line}")


def render_plain(event: Event, settings: RenderSettings) -> str:
    """The event as plain text for a non-Slack backend (same supersets as :func:`render`)."""
    emoji, title = _LEADS.get(event.event_type, (_DEFAULT_LEAD[0], event.event_type))
    where = _where(event)
    head = f"{emoji} {title}" + (f" · {where}" if where else "")
    head += f" — {work_item_label(event.work_item)}"
    url = button_url(event.url)
    content = [block.to_dict() for block in _content(event, settings)[0]]
    sections = _section_texts(content)[1:]  # the lead is `head`
    parts = [head + (f"\n{url}" if url else ""), *(_unslack(text) for text in sections)]
    if settings.verbosity == "verbose":
        parts.append("\n".join(f"{key}: {value}" for key, value in _detail(event)))
    return neutralise("\n\n".join(part for part in parts if part.strip()))


def _unslack(mrkdwn: str) -> str:
    """The digest's mrkdwn as a console reads it: links spelled out, no entities."""
    return html.unescape(_SLACK_LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})", mrkdwn))


def _section_texts(blocks: list[Mapping[str, Any]]) -> list[str]:
    return [str(b["text"]["text"]) for b in blocks if b.get("type") == "section"]
