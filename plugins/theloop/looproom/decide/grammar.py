"""The typed grammar: a message in a room becomes a command, an answer, or a refusal.

A verb — the first word, or a phrase like ``request changes`` — optionally followed by a
work item (``github:o/r#7``, ``o/r#7`` or ``#7``), then the verb's own arguments, which its
reader in the table of ``looproom.decide.kinds`` reads; anything else is text that may
answer an open question. One rule, no model: the first word is the verb or the message
is not a command. Nothing here looks anything up; the judging resolves and validates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from looproom import workitem

WITHOUT = "without"

#: Words a clause may carry that name nothing: "skip the design and tests phases".
_FILLER = frozenset({"and", "&", "the", "phase", "phases"})
#: What a clause's words are stripped of: quoting, brackets, punctuation, Slack markup.
_WRAPPERS = "`'\"“”.:!?()[]{}*_~"
#: A connector's trailing signature ("Sent using @Claude") is not a phase name.
_SIGNATURE = re.compile(
    r"\s*[*_~]*sent[ \t]+using[*_~]*[ \t]+(?:<@[^>\n]*>|@?[^\s*_~]+)[*_~]*\s*$", re.IGNORECASE
)
#: A leading "the-loop" — the ticket's keyword, typed by habit — or a mention (of us, if it
#: is to address us).
_ADDRESS = re.compile(r"^(?:the-loop\s+|<@([UW][A-Z0-9]+)(?:\|[^>]*)?>\s*)", re.IGNORECASE)


@dataclass(frozen=True)
class Command:
    """A decision a member typed: the verb, an optional work item, and its arguments."""

    verb: str
    ref: str = ""
    items: tuple[str, ...] = ()
    words: str = ""
    without: bool = False
    addressed: bool = False  # opened with a mention of the bot or ``the-loop``


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
    verb: str = ""  # the verb it was read as, so the refusal is only for who may use it
    prose: bool = False  # unless addressed to the bot, these are ordinary words
    addressed: bool = False


Parsed = Command | Text | Refusal
#: A verb's reader: ``(ref, tail, words)`` → the command, or why it cannot be read.
#: ``tail`` is the first line after the verb and the ref, ``words`` every line of it.
Reader = Callable[[str, str, str], Parsed]


def parse(text: str, readers: Mapping[str, Reader], own_id: str = "") -> Parsed:
    """Read one typed message; ``readers`` holds each verb (or two-word phrase) and its reader.

    A message that opens by mentioning someone other than the bot (``own_id``, where it is
    known) is said to that person: "@alice approve it" asks Alice, it does not approve.
    """
    if to_another(text, own_id):
        return Text(text or "")
    said = (text or "").strip()
    address = _ADDRESS.match(said)
    body, addressed = (said[address.end() :], True) if address else (said, False)
    head, _, rest = body.partition("\n")
    parts = head.split(None, 2)
    first = parts[0].lower().rstrip(".!:") if parts else ""
    phrase = f"{first} {parts[1].lower()}" if len(parts) > 1 else ""
    if phrase in readers:
        verb, tail = phrase, (parts[2] if len(parts) > 2 else "").strip()
    elif first in readers:
        verb, tail = first, head.split(None, 1)[1].strip() if len(parts) > 1 else ""
    else:
        return Text(text or "")
    ref, tail = _leading_ref(tail)
    words = "\n".join(part for part in (tail, rest.strip()) if part).strip()
    parsed = readers[verb](ref, tail, words)
    if isinstance(parsed, Refusal):
        return replace(parsed, verb=verb, addressed=bool(addressed))
    return replace(parsed, addressed=bool(addressed)) if isinstance(parsed, Command) else parsed


def to_another(text: str, own_id: str) -> bool:
    """Whether a message opens by mentioning a member other than the bot (``own_id``)."""
    address = _ADDRESS.match((text or "").strip())
    return bool(own_id and address and address.group(1) and address.group(1) != own_id)


def _leading_ref(tail: str) -> tuple[str, str]:
    """A work item named right after the verb, and what follows it."""
    first, _, after = tail.partition(" ")
    if workitem.is_typed(first.rstrip(",:")):
        return first.rstrip(",:"), after.strip()
    return "", tail


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
