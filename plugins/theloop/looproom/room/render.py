"""How an event looks in the room: Block Kit for Slack, plain text elsewhere.

A threaded event message is a lead line (the voice's emoji and first-person line, from
:mod:`looproom.room.voice`), the text through the digest (not the runtime's template, which
the lead restates, and never a question the digest cut without saying so), the agent's
summary, verbose context lines, and the controls (an
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
from looproom.events import Event
from looproom.room import budget, buttons, event_types, pulls, voice
from looproom.room.pulls import PullRequest
from looproom.slack.text import button_url, escape, neutralise

SECTION_LIMIT = 3000
SUMMARY_LIMIT = 600  # a summary is 2–3 sentences; anything longer is cut
DETAIL_VALUE_LIMIT = 300
CONTEXT_LIMIT = 2000
LEAD_LIMIT = 300
TEXT_LIMIT = 40_000  # Slack's ceiling on the notification text
MESSAGE_BLOCKS = 50  # Slack's ceiling on a message's blocks

#: The runtime's own template texts ("the-loop: issue-9 is at *x* (y)"): the voice's line
#: says the same in a person's words, so the template is not shown beside it.
_TEMPLATE = re.compile(r"^\s*the-loop: ")
#: A question in the source: a sentence ending in "?" (not a URL's query).
_QUESTION = re.compile(r"[^.!?\n]*\?(?![0-9A-Za-z=/%#])")
_CODE_FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_NOT_WORDS = re.compile(r"[^0-9A-Za-z]+")
QUESTION_LIMIT = 150
#: The opening the lead restates: the confirmation's header, the PR gate's first sentence.
_SAID_BY_LEAD = re.compile(
    r"^\s*(?:🤖 _the-loop_ — \*\*phase selection recorded\*\*|👀 PR #\d+ is ready for review\.)"
)
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


def state_after(event: Event, previous: str) -> str:
    """The state line the parent shows once ``event`` is posted (``previous`` if unchanged)."""
    return voice.state(event) or previous or _NEW_STATE


# -- the event message --------------------------------------------------------------------------


def lead(event: Event, pull: PullRequest | None = None) -> str:
    """The first line, mrkdwn: one emoji and what happened, in the room's voice; a pull
    request's gate names the PR, its title and its size when GitHub told us them."""
    said = voice.line(event)
    if event_types.of(event).reads_pull:
        said = pulls.line(event, pull)
    emoji, _, words = said.partition(" ")
    return f"{emoji} *{escape(neutralise(words))}*"[:LEAD_LIMIT]


def controls(event: Event, *, interactive: bool = False) -> list[Block]:
    """The message's controls: what :func:`looproom.room.buttons.blocks_for`
    draws for ``event`` — Open, and where the room can receive presses (``interactive``)
    Approve / Request changes, "Defaults are fine", the checklist's boxes and Execute — with
    only a web link for Open. The checklist's controls carry no link: Open goes above them."""
    url = button_url(event.url)
    drawn = buttons.controls(replace(event, url=url), interactive=interactive)
    if url and not any(_links(block) for block in drawn):
        drawn.insert(0, ActionsBlock(elements=[buttons.open_button(url)]))
    return drawn


def _links(block: Block) -> bool:
    if not isinstance(block, ActionsBlock):
        return False
    return any(getattr(element, "url", None) for element in block.elements)


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


def render(
    event: Event,
    settings: RenderSettings,
    *,
    interactive: bool = False,
    pull: PullRequest | None = None,
) -> Rendering:
    """The threaded message for ``event`` at ``settings.verbosity`` (quiet ⊂ normal ⊂ verbose),
    with its controls (``interactive``: the room can receive presses, so draw the buttons;
    ``pull``: what GitHub says of the pull request a PR gate is about)."""
    blocks, fallback = _content(event, settings, interactive=interactive, pull=pull)
    drawn = controls(event, interactive=interactive)
    if len(blocks) + len(drawn) > MESSAGE_BLOCKS:
        # Slack refuses the whole message: a checklist too long to draw is ticked on GitHub.
        drawn = controls(event, interactive=False)
    blocks.extend(drawn)
    return Rendering([block.to_dict() for block in blocks], fallback)


def _content(
    event: Event,
    settings: RenderSettings,
    *,
    interactive: bool = False,
    pull: PullRequest | None = None,
) -> tuple[list[Block], str]:
    """The message's blocks but its controls, and the notification text."""
    quiet = settings.verbosity == "quiet"
    head = lead(event, pull)
    shown = _body_text(event, interactive=interactive)
    body = _fit(shown, settings, event.url) if shown.strip() and not quiet else ""
    summary = sanitise_summary(event.summary, settings, event.url)
    excerpt = str(event.detail.get("excerpt") or "").strip()
    # The agent's summary says what the artifact is about: it stands in for the excerpt.
    second = summary or (_fit(excerpt, settings, event.url) if excerpt and not quiet else "")
    blocks: list[Block] = [_section(text) for text in (head, body, second) if text]
    cut = cut_questions(shown, body, event.url) if body else ""
    if cut:
        blocks.append(_section(cut))
    detail = _detail_lines(event) if settings.verbosity == "verbose" else ""
    if detail:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=detail)]))
    # A notification shows what the message shows: the same digested strings.
    fallback = "\n\n".join(text for text in (head, body, summary) if text)
    return blocks, fallback[:TEXT_LIMIT]


def _body_text(event: Event, *, interactive: bool) -> str:
    """The text worth drawing under the lead: not the runtime's template (the lead says
    it), and not a checklist the room answers with its own boxes (GitHub's instructions
    for it would only mislead in Slack)."""
    if _TEMPLATE.match(event.text):
        return ""
    if interactive and buttons.is_selection(event):
        return ""
    # The lead already says these; the rest of the text is what is new.
    return _SAID_BY_LEAD.sub("", event.text, count=1).strip()


def questions(source: str) -> list[str]:
    """Every question a text asks, outside code, in order."""
    prose = _CODE_FENCE.sub("", source)
    found = (m.group(0).strip(" >*_-#\t") for m in _QUESTION.finditer(prose))
    return [q for q in found if len(_words(q)) > 3]


def cut_questions(source: str, shown: str, url: str) -> str:
    """What to add so no question is lost: the ones the digest cut, or a plain line that
    they were cut and where to read them; ``""`` when every question is shown."""
    visible = _words(html.unescape(shown))
    missing = [q for q in questions(source) if _words(q) not in visible]
    if not missing:
        return ""
    link = f"<{button_url(url)}|read them all>" if button_url(url) else "see the ticket"
    lines = [f"✂️ *{len(missing)} more question(s) were cut to fit* — {link}:"]
    for question in missing:
        line = escape(neutralise(question[:QUESTION_LIMIT]))
        if sum(len(x) + 1 for x in lines) + len(line) + 3 > SECTION_LIMIT:
            break
        lines.append(f"• {line}")
    return "\n".join(lines)


def _words(text: str) -> str:
    return _NOT_WORDS.sub(" ", text).strip().lower()


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
    head = f"{voice.line(event)} — {work_item_label(event.work_item)}"
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
