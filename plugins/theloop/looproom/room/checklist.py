"""The phase-selection checklist as the bot last saw it, and the clauses read against it.

the-loop asks which phases a work item needs with a markdown checklist on the ticket
(its ``phase-selection`` hook), mirrored into the room as a ``comment.agent`` event. This
module reads that checklist into rows, offers the-loop's default work-item loop when no
checklist was seen, and resolves ``execute without 2, 5`` / ``skip design`` against the
rows — refusing, in the-loop's own words, anything unknown, unskippable or ambiguous, so
that no selection other than the one asked for can ever be relayed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

#: The hook's marker: only the-loop's own checklist comment carries it.
SELECTION_MARKER = "<!-- the-loop:phase-selection -->"

#: One row, as the hook writes it and its parser reads it: ``- [x] design`` or
#: ``- [ ] `explainer` — words``. A leading ``>`` is a quoted row, still a row.
_ROW = re.compile(
    r"^\s*(?:>\s*)*[-*]\s*\[(?P<mark>[ xX])\]\s*`?(?P<token>[A-Za-z0-9][A-Za-z0-9._-]*)`?"
    r"(?P<about>[^\n]*)",
    re.MULTILINE,
)
#: A bare bullet naming one node: the checklist's "always runs" list.
_PLAIN = re.compile(r"^[ \t]*[-*][ \t]+(?P<token>[A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*$", re.MULTILINE)
#: What a name may look like to be echoed back or written into a relayed row.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_NUMBER = re.compile(r"^[0-9]{1,6}$")

#: Rows that are settings, not phases: unticking one is never a skip.
_SETTING_TOKENS = frozenset({"outer-loop-on-pull-request", "claude-artifact", "explainer"})
_SETTING_PREFIXES = ("pr-sessions-", "harness-", "model-", "effort-")

#: A prefix shorter than this never selects a phase: "d" is not a choice.
_MIN_PREFIX = 3


@dataclass(frozen=True)
class Row:
    """One box: its token, whether it is ticked, and the words beside it."""

    token: str
    ticked: bool
    about: str = ""

    @property
    def is_setting(self) -> bool:
        return self.token in _SETTING_TOKENS or self.token.startswith(_SETTING_PREFIXES)


@dataclass(frozen=True)
class Checklist:
    """The rows a phase-selection checklist offers.

    ``phases`` are numbered 1.. in checklist order — the numbers ``execute without``
    counts; ``settings`` are carried through a relayed selection unchanged; ``always``
    names the phases that run whatever is said. ``seen`` is False for the-loop's
    default work-item loop, used when no checklist reached the room.
    """

    phases: tuple[Row, ...]
    settings: tuple[Row, ...] = ()
    always: tuple[str, ...] = ()
    seen: bool = True

    @property
    def fingerprint(self) -> str:
        """A short digest of the rows, so a press on an older drawing is detectable."""
        rows = ";".join(f"{r.token}={int(r.ticked)}" for r in (*self.phases, *self.settings))
        return hashlib.sha256(rows.encode()).hexdigest()[:12]

    def offered(self) -> str:
        """The-loop's closing sentence of every refusal: what may be left out, numbered."""
        listed = ", ".join(f"{n}. `{row.token}`" for n, row in enumerate(self.phases, 1))
        text = (
            f"The phases you may leave out: {listed} — say `execute without 2, 5` or "
            "`skip <phase>`."
        )
        if not self.seen:
            text += " (No checklist for this work item reached this room, so these are "
            text += "the-loop's default work-item loop.)"
        return text


@dataclass(frozen=True)
class Unticked:
    """The phases a ``without``/``skip`` clause resolved to, in checklist order."""

    tokens: tuple[str, ...]


@dataclass(frozen=True)
class Refused:
    """Why a clause was refused (``reason`` is the log label) and what to tell the member."""

    reason: str
    text: str


UNKNOWN = "unknown-phase"
UNSKIPPABLE = "unskippable-phase"
AMBIGUOUS = "ambiguous-phase"
EMPTY = "empty-clause"
#: Every reason a phase selection is refused for.
REFUSALS = frozenset({UNKNOWN, UNSKIPPABLE, AMBIGUOUS, EMPTY})


def is_checklist(text: str) -> bool:
    """Whether ``text`` is the hook's own checklist comment (it carries the marker)."""
    return SELECTION_MARKER in (text or "")


def parse(text: str) -> Checklist | None:
    """The rows of a checklist body — ``None`` for any text that is not one."""
    if not is_checklist(text):
        return None
    phases: list[Row] = []
    settings: list[Row] = []
    seen: set[str] = set()
    for match in _ROW.finditer(text):
        token = match.group("token")
        if token in seen:
            continue
        seen.add(token)
        about = " ".join(match.group("about").strip().lstrip("—-–:").split())
        row = Row(token, bool(match.group("mark").strip()), about)
        (settings if row.is_setting else phases).append(row)
    always = tuple(
        dict.fromkeys(
            m.group("token") for m in _PLAIN.finditer(text) if m.group("token") not in seen
        )
    )
    return Checklist(tuple(phases), tuple(settings), always)


#: the-loop's default work-item loop (``pdlc-work-item-loop``) as its checklist draws it
#: with default settings. A contract test renders the real hook and compares, so this
#: cannot drift from the pinned the-loop. The sessions-per-PR rows are left out on
#: purpose: their default is the operator's, and an absent row means "that default".
_DEFAULT_PHASES = (
    ("brainstorming", False),
    ("brainstorm-approval", False),
    ("requirements-definition", True),
    ("requirements-approval", True),
    ("design", True),
    ("test-planning", True),
    ("design-approval", True),
    ("tasks-breakdown", True),
    ("implementation", True),
    ("verification", True),
    ("self-review", True),
    ("critic-review", True),
    ("security-review", True),
    ("evidence", True),
    ("capability-docs", True),
    ("reviewer-briefing", True),
    ("human-approval", True),
    ("design-critic-review", False),
)
_DEFAULT_SETTINGS = (
    ("outer-loop-on-pull-request", True),
    ("claude-artifact", True),
    ("explainer", True),
)
DEFAULT = Checklist(
    phases=tuple(Row(token, ticked) for token, ticked in _DEFAULT_PHASES),
    settings=tuple(Row(token, ticked) for token, ticked in _DEFAULT_SETTINGS),
    seen=False,
)


def leave_out(checklist: Checklist, items: tuple[str, ...], verb: str) -> Unticked | Refused:
    """Resolve a clause's names and numbers to phases, or refuse the whole clause.

    Any one item that is not an offered phase refuses everything: a typo
    must never freeze a selection nobody asked for. An exact name wins; otherwise a
    unique prefix of at least three characters; several matches are ambiguous.
    """
    if not items:
        return Refused(EMPTY, f"`{verb}` needs the phases to leave out. " + checklist.offered())
    chosen: list[str] = []
    for position, item in enumerate(items, 1):
        found = _one(checklist, item, position, verb)
        if isinstance(found, Refused):
            return found
        if found not in chosen:
            chosen.append(found)
    order = [row.token for row in checklist.phases]
    return Unticked(tuple(sorted(chosen, key=order.index)))


def _one(checklist: Checklist, item: str, position: int, verb: str) -> str | Refused:
    """One item as a phase token, or the refusal naming why it is not one."""
    offered = checklist.offered()
    if _NUMBER.match(item):
        number = int(item)
        if not 1 <= number <= len(checklist.phases):
            text = f"There is no phase {number} on this checklist, so nothing was recorded. "
            return Refused(UNKNOWN, text + offered)
        return checklist.phases[number - 1].token
    if not _NAME.match(item):
        # Prose, markup or a mention is named by its position, never echoed.
        return Refused(
            UNKNOWN,
            f"that name (word {position} after `{verb}`) reads as markup, a mention or "
            "prose, not a phase name, so nothing was recorded. Put only phase names or "
            f"numbers on the `{verb}` line. " + offered,
        )
    wanted = item.lower()
    exact = [row.token for row in checklist.phases if row.token.lower() == wanted]
    if exact:
        return exact[0]
    if wanted in {name.lower() for name in checklist.always}:
        text = f"`{item}` always runs on this work item and cannot be skipped, so nothing "
        return Refused(UNSKIPPABLE, text + "was recorded. " + offered)
    return _by_prefix(checklist, item)


def _by_prefix(checklist: Checklist, item: str) -> str | Refused:
    wanted = item.lower()
    numbered = list(enumerate(checklist.phases, 1))
    matches = [
        (n, row.token)
        for n, row in numbered
        if len(wanted) >= _MIN_PREFIX and row.token.lower().startswith(wanted)
    ]
    if len(matches) == 1:
        return matches[0][1]
    if matches:
        could = " or ".join(f"{n}. `{token}`" for n, token in matches)
        text = f"`{item}` could be {could}, so nothing was recorded. "
        return Refused(AMBIGUOUS, text + checklist.offered())
    text = f"`{item}` is not a phase this checklist offers, so nothing was recorded. "
    return Refused(UNKNOWN, text + checklist.offered())


def rows(
    checklist: Checklist, untick: tuple[str, ...] = (), ticks: dict[str, bool] | None = None
) -> tuple[str, ...]:
    """The checklist as reply rows: every phase, then every setting.

    ``untick`` names phases to leave out; ``ticks`` (a press's checkbox state) overrides
    any row it names. Phases are written bare and settings in backticks, exactly as the
    hook writes them, so the gate's parser reads the relayed list as a typed one.
    """
    ticks = ticks or {}
    lines = []
    for row in checklist.phases:
        ticked = ticks.get(row.token, row.ticked and row.token not in untick)
        lines.append(f"- [{'x' if ticked else ' '}] {row.token}")
    for row in checklist.settings:
        ticked = ticks.get(row.token, row.ticked)
        lines.append(f"- [{'x' if ticked else ' '}] `{row.token}`")
    return tuple(lines)
