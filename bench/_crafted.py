"""Crafted inputs up to the webhook's body limit, and prose to measure them by.

Each crafted input is a shape that could make a markdown parser — or the digest
around it — cost more than the text is worth: unclosed openers by the thousand,
runs of delimiters, nesting far past any limit, one token without a boundary,
and block markup so dense that markdown-it's block parser makes a token of
every character or two. ``prose(size)`` is ordinary agent markdown of the same
size whose only question is its last sentence, so its digest reads all of it.
``bench_digest.py`` prints each input's time over prose's; the unit tests check
that each digests within the limit and within the digest's inline budget.
"""

from __future__ import annotations

from collections.abc import Callable

#: 64 KB, and the webhook's body limit.
SIZES = (64 * 1024, 256 * 1024)

_PARAGRAPH = (
    "## Design notes\n\n"
    "The scheduler hands each **work item** to one session at a time, so a second "
    "delivery of the same event is a no-op rather than a race. See "
    "[decision-042](https://github.com/o/r/blob/main/docs/decisions/decision-042.md) "
    "and `the_loop/scheduler.py` for the lock.\n\n"
    "- [x] the lock is taken before the graph is read\n"
    "- [ ] the lease is renewed on every heartbeat, not only on progress\n"
    "  - a stale lease is reclaimed after `lease_ttl` seconds\n\n"
    "```python\nwith lock(item):\n    advance(item)\n```\n\n"
    "| phase | owner |\n|---|---|\n| design | agent |\n| review | human |\n\n"
)
QUESTION = "\n\nShall we ship the lease renewal now?"


def _fill(piece: str, size: int) -> str:
    return (piece * (size // len(piece) + 1))[:size]


def prose(size: int) -> str:
    """Agent prose of ``size`` characters, its one question at the very end."""
    return _fill(_PARAGRAPH, size - len(QUESTION)) + QUESTION


def _backticks(size: int) -> str:
    runs, n = [], 1
    while sum(map(len, runs)) < size:
        runs.append("`" * n + " x ")
        n += 1
    return "".join(runs)[:size]


def _wide_header(columns: int, size: int) -> str:
    """A header of ``columns`` cells over rows of one ``|``: markdown-it fills each
    row up to the header's width, a cell for every column."""
    head = "|a" * columns + "\n" + "|-" * columns + "\n"
    return head + _fill("|\n", size - len(head))


def _then_question(piece: str) -> Callable[[int], str]:
    return lambda size: _fill(piece, size - len(QUESTION)) + QUESTION


_SHAPES: dict[str, Callable[[int], str]] = {
    "[ openers": lambda size: _fill("[a ", size),
    "[ runs": lambda size: "[" * size,
    "![ openers": lambda size: _fill("![a ", size),
    "** runs": lambda size: _fill("** a ", size),
    "__ runs": lambda size: _fill("__a ", size),
    "* runs": lambda size: "*" * size,
    "backtick runs": _backticks,
    "< openers": lambda size: _fill("<a ", size),
    "& runs": lambda size: _fill("&#x &amp ", size),
    "entities": lambda size: _fill("&amp; &#x3f; &copy; &NotAnEntity; ", size),
    "unclosed <!--": lambda size: _fill("<!-- a ", size),
    "unclosed <!-- per line": lambda size: _fill("<!-- x\n", size),
    "HTML comments": lambda size: _fill("<!-- a -->\n", size),
    "<summary> openers": lambda size: "<details>\n" + _fill("<summary>a <details ", size)[10:],
    "<summary> pairs": lambda size: "<details>\n" + _fill("</summary><summary>a\n", size)[10:],
    "fence openers": lambda size: _fill("```\n~~~~\n````` `\n", size),
    "500-deep quote": lambda size: _fill(">" * 500 + " x\n", size),
    "quote lines": lambda size: _fill("> a quoted line\n", size),
    "500-deep list": lambda size: _fill("- " * 500 + "x\n", size),
    "500-deep ordered list": lambda size: _fill("1. " * 500 + "x\n", size),
    "nested lists": lambda size: _fill("- a\n  - b\n    - c\n      - d\n", size),
    "list items, then a question": _then_question("- item\n"),
    "| table": lambda size: "| a | b |\n|---|---|\n" + _fill("| 1 | 2 |\n", size - 20),
    "| table, 100 columns": lambda size: _fill("|a" * 100 + "\n" + "|-" * 100 + "\n", size),
    "| table, 1000 columns over empty rows": lambda size: _wide_header(1000, size),
    "one-letter paragraphs, then a question": _then_question("a\n\n"),
    "reference definitions": lambda size: "[a]\n\n" + _fill("[b]: c\n", size - 5),
    "`?` in code": lambda size: _fill("`a?` b\n\n", size),
    "one token": lambda size: "a" * size,
    "one URL": lambda size: "https://e.com/" + "a" * (size - 14),
    "? runs": lambda size: _fill("? ", size),
}


def crafted(size: int) -> dict[str, str]:
    """Every crafted input at ``size`` characters."""
    return {name: shape(size) for name, shape in _SHAPES.items()}


PROSE = prose(SIZES[0])
CRAFTED = crafted(SIZES[0])
