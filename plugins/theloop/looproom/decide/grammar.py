"""The typed grammar: a message in a room becomes a command, an answer, or a refusal.

``execute`` · ``execute without 2, 5`` · ``skip <phase>[, <phase>…]`` · ``approve [words]`` ·
``changes <why>`` — each optionally followed by a work item (``github:o/r#7``, ``o/r#7`` or
``#7``) — and anything else is text that may answer an open question (issue 4; seed 003
R9.3, F1, R10). One rule, no model: the first word is the verb or the message is not a
command. Nothing here looks anything up; the pipeline resolves and validates.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from looproom import workitem

EXECUTE, SKIP, APPROVE, CHANGES = "execute", "skip", "approve", "changes"
VERBS = (EXECUTE, SKIP, APPROVE, CHANGES)
WITHOUT = "without"

#: Words a clause may carry that name nothing: "skip the design and tests phases".
_FILLER = frozenset({"and", "&", "the", "phase", "phases"})
#: What a clause's words are stripped of: quoting, brackets, punctuation, Slack markup.
_WRAPPERS = "`'\"“”.:!?()[]{}*_~"
#: A connector's trailing signature ("Sent using @Claude") is not a phase name.
_SIGNATURE = re.compile(
    r"\s*[*_~]*sent[ \t]+using[*_~]*[ \t]+(?:<@[^>\n]*>|@?[^\s*_~]+)[*_~]*\s*$", re.IGNORECASE
)
#: A leading "the-loop" — the ticket's keyword, typed by habit — or a mention of us.
_ADDRESS = re.compile(r"^(?:the-loop\s+|<@[UW][A-Z0-9]+(?:\|[^>]*)?>\s*)", re.IGNORECASE)


@dataclass(frozen=True)
class Command:
    """A decision a member typed: the verb, an optional work item, and its arguments."""

    verb: str
    ref: str = ""
    items: tuple[str, ...] = ()
    words: str = ""
    without: bool = False


@dataclass(frozen=True)
class Text:
    """Not a command: words that answer an open question, or conversation."""

    text: str


@dataclass(frozen=True)
class Refusal:
    """A command that cannot be read; ``reason`` is the log label, ``text`` the reply."""

    reason: str
    text: str
    ref: str = ""


Parsed = Command | Text | Refusal


def parse(text: str) -> Parsed:
    """Read one typed message (issue 4 "Typed commands")."""
    body = _ADDRESS.sub("", (text or "").strip(), count=1)
    head, _, rest = body.partition("\n")
    parts = head.split(None, 1)
    verb = parts[0].lower().rstrip(".!:") if parts else ""
    tail = (parts[1] if len(parts) > 1 else "").strip()
    if verb == "request" and tail.lower().split(None, 1)[:1] == [CHANGES]:
        verb, tail = CHANGES, tail[len(CHANGES) :].strip()
    if verb not in VERBS:
        return Text(text or "")
    ref, tail = _leading_ref(tail)
    words = "\n".join(part for part in (tail, rest.strip()) if part).strip()
    return _READERS[verb](ref, tail, words)


def _leading_ref(tail: str) -> tuple[str, str]:
    """A work item named right after the verb, and what follows it."""
    first, _, after = tail.partition(" ")
    if workitem.is_typed(first.rstrip(",:")):
        return first.rstrip(",:"), after.strip()
    return "", tail


def _execute(ref: str, tail: str, words: str) -> Parsed:
    if not tail:
        return Command(EXECUTE, ref)
    first, _, clause = tail.partition(" ")
    if first.lower() != WITHOUT:
        return Refusal(
            "execute-words",
            "`execute` takes nothing but `without <phases>` — say `execute` or "
            "`execute without 2, 5`; nothing was recorded.",
            ref,
        )
    return Command(EXECUTE, ref, items(clause), without=True)


def _skip(ref: str, tail: str, words: str) -> Parsed:
    return Command(SKIP, ref, items(tail))


def _approve(ref: str, tail: str, words: str) -> Parsed:
    return Command(APPROVE, ref, words=words)


def _changes(ref: str, tail: str, words: str) -> Parsed:
    if not words:
        return Refusal(
            "changes-without-reason",
            "`changes` needs the reason — say `changes <what should change>`; "
            "nothing was recorded.",
            ref,
        )
    return Command(CHANGES, ref, words=words)


_READERS = {EXECUTE: _execute, SKIP: _skip, APPROVE: _approve, CHANGES: _changes}


def items(clause: str) -> tuple[str, ...]:
    """The names and numbers of a ``without``/``skip`` clause — every word of its line.

    A word that is not a phase is kept so the clause is refused rather than half-read.
    """
    clause = _SIGNATURE.sub("", clause.split("\n", 1)[0], count=1)
    found = []
    for raw in re.split(r"[\s,;]+", clause):
        bare = "".join(ch for ch in raw if unicodedata.category(ch) != "Cf")
        item = bare.strip().strip(_WRAPPERS)
        if item and item.lower() not in _FILLER:
            found.append(item)
    return tuple(found)
