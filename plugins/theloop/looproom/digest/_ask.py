"""Where the ask can be, checked on the raw source before anything is drawn.

The ask (R2.1) is the first sentence ending in ``?`` in a top-level paragraph or
heading, outside code; else the first sentence there with the word *reply* and a
code span. Drawing a block costs an inline parse, so a block is drawn for the ask
only when its source could hold one — and the document is read no further once
its unread rest could hold none (performance: the digest reads only what it
shows). Both checks over-approximate: a ``?`` that could end a sentence once
drawn is one not followed by a letter, a digit or a URL's ``=/%#``, or the
character reference of a ``?``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "Lookahead",
    "ReplyScan",
    "may_ask",
    "may_reply",
    "next_question",
    "next_reply",
    "next_risky",
    "restart_before",
]

# Each pattern opens with a literal, which ``re`` finds by a fast scan: these
# run over the unread rest of every document (an alternation of the two, or
# ``^`` with MULTILINE, would try every position).
_QUESTION = re.compile(r"\?(?![0-9A-Za-z=/%#])")
_QUESTION_REF = re.compile(r"&(?:#0*63|#[xX]0*3[fF]|quest);")
_REPLY = re.compile(r"[Rr][Ee][Pp][Ll][Yy]")  # "reply", any case
#: A line that may open what a blank line does not end: a fence (top-level, or
#: seen as such), an HTML block (``<script``, ``<!--`` …) — at ``pos``, or after
#: a line end.
_RISKY_HERE = re.compile(r"[ \t]*(?:```|~~~|<)")
_RISKY = re.compile(r"\n[ \t]*(?:```|~~~|<)")


def may_ask(raw: str) -> bool:
    """Whether a block's source could hold a question."""
    return _QUESTION.search(raw) is not None or _QUESTION_REF.search(raw) is not None


def may_reply(raw: str) -> bool:
    """Whether a block's source could hold a *reply `…`* instruction."""
    return "`" in raw and _REPLY.search(raw) is not None


def next_question(src: str, pos: int) -> int:
    """Offset of the next possible question at or after ``pos``, or -1."""
    found = [m.start() for m in (_QUESTION.search(src, pos), _QUESTION_REF.search(src, pos)) if m]
    return min(found, default=-1)


def next_reply(src: str, pos: int) -> int:
    """Offset of the next *reply* whose stretch between blank lines — a paragraph
    never crosses one — holds a backtick, or -1."""
    return ReplyScan()(src, pos)


class ReplyScan:
    """:func:`next_reply` for one document, asked again and again: its UTF-8
    bytes with ASCII letters lowered, made once, where *reply* in any case is
    one literal — found by a fast scan, where a case-blind pattern tries every
    position. No other character lowers to one of its letters, and lowering
    ASCII leaves every other character's bytes as they are. The bytes start
    where the first search does (the reader asks from further and further on)."""

    __slots__ = ("_base", "_data")

    def __init__(self) -> None:
        self._base = 0
        self._data: bytes | None = None

    def __call__(self, src: str, pos: int) -> int:
        if self._data is None or pos < self._base:
            self._base, self._data = pos, src[pos:].encode("utf-8", "surrogatepass").lower()
        data, base = self._data, self._base
        start = len(src[base:pos].encode("utf-8", "surrogatepass"))
        while (found := data.find(b"reply", start)) >= 0:
            begin = data.rfind(b"\n\n", 0, found) + 1
            end = data.find(b"\n\n", found)
            end = len(data) if end < 0 else end
            if data.find(b"`", begin, end) >= 0:
                return base + len(data[:found].decode("utf-8", "surrogatepass"))
            start = end
        return -1


def next_risky(src: str, pos: int) -> int:
    """Offset of the next line at or after ``pos`` (a line start) that may open a
    fence or an HTML block, or -1."""
    if (pos == 0 or src[pos - 1 : pos] == "\n") and _RISKY_HERE.match(src, pos):
        return pos
    match = _RISKY.search(src, pos)
    return match.start() + 1 if match else -1


def restart_before(src: str, start: int, stop: int) -> int:
    """The last line start in ``(start, stop]`` that follows a blank line and
    begins with a non-blank character; -1 if none.

    Such a line begins a top-level block whatever came before it — a paragraph,
    a table, a quote, an HTML block of the kinds a blank line ends, and any list
    item (it is not indented) end at that blank line; an indented code block ends
    at an unindented line — unless a fence or an HTML block that only its own
    closing ends is open. The caller rules that out by seeing no line that could
    open one (:func:`next_risky`) between a known top-level boundary and here.
    """
    pos = src.rfind("\n\n", start, stop)
    while pos >= start:
        line = pos + 2
        if line <= stop and line < len(src) and not src[line].isspace():
            return line
        pos = src.rfind("\n\n", start, pos + 1)
    return -1


class Lookahead:
    """``find(src, pos)`` asked with (mostly) growing ``pos``, searched again only
    when the last answer lies before ``pos`` or ``pos`` went back."""

    def __init__(self, src: str, find: Callable[[str, int], int]) -> None:
        self.src = src
        self.find = find
        self.next = -2  # not searched yet
        self.origin = -1  # where the last search started

    def beyond(self, pos: int) -> bool:
        """Whether a candidate lies at or after ``pos``."""
        return self.at(pos) >= 0

    def at(self, pos: int) -> int:
        """The first candidate at or after ``pos``, or -1."""
        if pos < self.origin or (self.next != -1 and self.next < pos):
            self.next = self.find(self.src, pos)
            self.origin = pos
        return self.next
