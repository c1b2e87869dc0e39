"""Crafted 64 KB inputs for abuse case A1, and 64 KB of prose to measure them by.

Each crafted input is what could make a naive markdown parser super-linear:
unclosed openers by the thousand, runs of delimiters, nesting far past any
limit, one token without a boundary. ``PROSE`` is ordinary agent markdown of
the same size whose only question is its last sentence, so the digest has to
read all of it too. ``bench_digest.py`` prints each input's time over prose's;
the unit tests only check that each digests within the limit.
"""

from __future__ import annotations

SIZE = 64 * 1024

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


def _fill(piece: str, size: int = SIZE) -> str:
    return (piece * (size // len(piece) + 1))[:size]


#: Prose of the same size, its one question at the very end.
PROSE = _fill(_PARAGRAPH, SIZE - 40) + "\n\nShall we ship the lease renewal now?"

CRAFTED: dict[str, str] = {
    "unclosed <!--": _fill("<!-- a "),
    "unclosed <!-- per line": _fill("<!-- x\n"),
    "** runs": _fill("** a "),
    "__ runs": _fill("__a "),
    "[ openers": _fill("[a "),
    "![ openers": _fill("![a "),
    "backtick runs": "".join("`" * n + " x " for n in range(1, 400))[:SIZE].ljust(SIZE, "`"),
    "fence openers": _fill("```\n~~~~\n````` `\n"),
    "< openers": _fill("<a "),
    "<summary> openers": "<details>\n" + _fill("<summary>a <details ")[10:],
    "<summary> pairs": "<details>\n" + _fill("</summary><summary>a\n")[10:],
    "& runs": _fill("&#x &amp "),
    "500-deep list": _fill("- " * 500 + "x\n"),
    "500-deep ordered list": _fill("1. " * 500 + "x\n"),
    "500-deep quote": _fill(">" * 500 + " x\n"),
    "one 64 KB token": "a" * SIZE,
    "one 64 KB URL": "https://e.com/" + "a" * (SIZE - 14),
    "64 KB of ?": _fill("? "),
}
