"""Regular expressions over whole lines, found fast.

A pattern anchored with ``^`` under ``re.MULTILINE`` is tried at every
character of a text; one that opens with a line end is found by ``re``'s scan
for that one character, several times as fast over a long text. A
``LinePattern`` is the second kind, the first line of the stretch searched
checked on its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["LinePattern"]


class LinePattern:
    """Lines that ``body`` matches from their start (``$`` is a line's end)."""

    def __init__(self, body: str) -> None:
        self._first = re.compile(body, re.MULTILINE)
        self._after_line_end = re.compile(f"\n(?:{body})", re.MULTILINE)

    def finditer(self, src: str, start: int = 0, end: int | None = None) -> Iterator[re.Match]:
        """The matches on lines of ``src[start:end]``, ``start`` being a line's
        start; each but the first opens with the line end before its line."""
        end = len(src) if end is None else end
        first = self._first.match(src, start, end)
        if first is not None:
            yield first
        yield from self._after_line_end.finditer(src, start, end)

    def search(self, src: str) -> bool:
        """Whether any line of ``src`` matches."""
        return self._first.match(src) is not None or self._after_line_end.search(src) is not None
