"""Sentences, clauses and the cut.

A sentence ends at ``.``, ``!`` or ``?`` (any closing quote, bracket or emphasis
mark after it) followed by whitespace or the end, or at a line end; a clause at
``,`` ``;`` ``:`` before whitespace, or before a spaced dash. None of them inside
an atom — a code span, a link token, a bare URL — and none inside an entity
(``&amp;``'s ``;`` is no clause). The cut keeps the longest prefix that ends at a
sentence, else at a clause, else at whitespace, else (one giant token) at a
character that splits no atom and no entity.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator

from ._run import Run

__all__ = ["cut", "first_question", "first_reply", "sentences"]

_CLOSERS = ")]\"'’”»*_~"
_SENTENCE_END = re.compile(r"[.!?]+[)\]\"'’”»*_~]*(?=\s|$)|\n")
_CLAUSE = re.compile(r"(?<!&amp)(?<!&lt)(?<!&gt)[,;:](?=\s)|\s[—–](?=\s)")
_SPACE = re.compile(r"\s")
_LAST_WORD = re.compile(r"[\w.]+$")
#: A ``.`` after these is no sentence end.
_ABBREVIATIONS = frozenset({"e.g", "i.e", "vs", "cf", "approx", "fig", "al", "etc"})
_REPLY = re.compile(r"\breply\b", re.IGNORECASE)
ELLIPSIS = "…"


def _sentence_marks(run: Run, stop: int) -> Iterator[re.Match[str]]:
    """Sentence ends before ``stop``, outside atoms and abbreviations."""
    text = run.text
    for match in _SENTENCE_END.finditer(text):
        if match.start() >= stop:
            return
        if run.is_atom_text(match.start()) or _abbreviation(text, match):
            continue
        yield match


def _abbreviation(text: str, match: re.Match[str]) -> bool:
    """A lone ``.`` after ``e.g`` or an initial: no sentence end."""
    if match.group(0).rstrip(_CLOSERS) != ".":
        return False
    word = _LAST_WORD.search(text, max(0, match.start() - 12), match.start())
    token = word.group(0).lower() if word else ""
    return token in _ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def sentences(run: Run) -> Iterator[tuple[int, int, bool]]:
    """``(start, end, is_question)`` for each sentence of ``run``, in order."""
    start = 0
    for match in _sentence_marks(run, len(run.text)):
        end = match.end()
        if run.text[start:end].strip():
            yield start, end, "?" in match.group(0)
        start = end
    if run.text[start:].strip():
        yield start, len(run.text), False


def first_question(run: Run) -> tuple[int, int] | None:
    """The span of the first sentence ending in ``?`` outside code."""
    if "?" not in run.text:
        return None
    return next(((s, e) for s, e, question in sentences(run) if question), None)


def first_reply(run: Run) -> tuple[int, int] | None:
    """The span of the first sentence asking for a reply: the word *reply* in its
    words — not in a code span, so ``test_ask_reply.py`` is none — and a code
    span."""
    if not _REPLY.search(run.text):
        return None
    code = [a for a, _ in run.atoms if run.text[a] == "`"]
    for start, end, _ in sentences(run):
        first_code = bisect_left(code, start)
        if first_code == len(code) or code[first_code] >= end:
            continue
        if any(not run.is_atom_text(m.start()) for m in _REPLY.finditer(run.text, start, end)):
            return start, end
    return None


def cut(run: Run, room: int) -> Run | None:
    """``run`` within ``room`` characters, cut at the best boundary;
    ``None`` when nothing fits."""
    if len(run.text) <= room:
        return run
    if room <= 1:
        return None
    for end in reversed([m.end() for m in _sentence_marks(run, room)]):
        if end <= room and (part := run.slice(0, end).strip()).text:
            return part
    for end in _boundaries(run, room):
        part = run.slice(0, end).strip()
        if part.text:
            return part + Run(ELLIPSIS)
    return None


def _boundaries(run: Run, room: int) -> Iterator[int]:
    """Clause ends, then whitespace, then a hard cut — best first, each leaving a
    character for the ellipsis."""
    limit = room - 1
    yield from reversed(_outside(run, _CLAUSE, limit))
    yield from reversed(_outside(run, _SPACE, limit))
    yield _hard_cut(run, limit)


def _outside(run: Run, pattern: re.Pattern[str], limit: int) -> list[int]:
    found = []
    for match in pattern.finditer(run.text, 0, limit + 1):
        if match.start() > limit:
            break
        if not run.is_atom_text(match.start()):
            found.append(match.start())
    return found


def _hard_cut(run: Run, limit: int) -> int:
    """The last offset within ``limit`` that splits no atom and no ``&…;``."""
    pos = limit
    atom = run.atom_at(pos)
    if atom is not None and atom[0] < pos:
        pos = atom[0]
    amp = run.text.rfind("&", max(0, pos - 5), pos)
    if amp >= 0 and ";" not in run.text[amp:pos]:
        pos = amp
    return pos
