"""Where the ask can be, checked on the raw source before anything is drawn.

The ask is the first sentence ending in ``?`` in a top-level paragraph or
heading, outside code; else the first sentence there with the word *reply* and
a code span (docs/digest.md, "The digest"). Drawing a block costs an inline
parse, so a block is drawn for the ask only when its source could hold one, and
the document is read no further once its unread rest could hold none. Both
checks over-approximate: a ``?`` that could end a sentence once drawn is one not
followed by a letter, a digit or a URL's ``=/%#``, or the character reference
of a ``?``; a *reply* needs a backtick between the same blank lines.
"""

from __future__ import annotations

import re

__all__ = ["in_list_or_quote_line", "may_ask", "may_reply", "next_question", "next_reply"]

# Two patterns, not an alternation: each opens with a literal, which ``re``
# finds by a fast scan over the unread rest of a long document.
_QUESTION = re.compile(r"\?(?![0-9A-Za-z=/%#])")
_QUESTION_REF = re.compile(r"&(?:#0*63|#[xX]0*3[fF]|quest);")
_REPLY = re.compile(r"[Rr][Ee][Pp][Ll][Yy]")  # "reply", any case
#: A line that opens a bullet item or a quote: such a line interrupts any
#: paragraph, so nothing on it is in a top-level paragraph or heading. (An
#: ordered item may be a paragraph's next line unless it is numbered 1.)
_ITEM_OR_QUOTE = re.compile(r" {0,3}(?:[-*+][ \t]+\S|>)")


def may_ask(raw: str) -> bool:
    """Whether a block's source could hold a question."""
    return next_question(raw, 0) >= 0


def may_reply(raw: str) -> bool:
    """Whether a block's source could hold a *reply `…`* instruction."""
    return "`" in raw and _REPLY.search(raw) is not None


def next_question(src: str, pos: int) -> int:
    """Offset of the next possible question at or after ``pos``, or -1."""
    found = [m.start() for m in (_QUESTION.search(src, pos), _QUESTION_REF.search(src, pos)) if m]
    return min(found, default=-1)


def in_list_or_quote_line(src: str, pos: int) -> bool:
    """Whether ``pos`` is on a line that opens a bullet item or a quote."""
    return _ITEM_OR_QUOTE.match(src, src.rfind("\n", 0, pos) + 1) is not None


def next_reply(src: str, pos: int) -> int:
    """Offset of the next *reply* at or after ``pos`` whose stretch between blank
    lines — a paragraph never crosses one — holds a backtick, or -1."""
    while (match := _REPLY.search(src, pos)) is not None:
        begin = src.rfind("\n\n", 0, match.start()) + 1
        end = src.find("\n\n", match.end())
        end = len(src) if end < 0 else end
        if src.find("`", begin, end) >= 0:
            return match.start()
        pos = end
    return -1
