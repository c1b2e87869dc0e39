"""A document's top-level blocks, parsed a window at a time as the reader asks.

The digest shows at most ``limit`` characters, so it parses a document only as
far as drawing and the search for the ask need. A *window* is a stretch of whole
lines starting where the final blocks end, cut one line into a block after a
blank line (else at a line end). Every top-level block of a window but its last
is final — the block after it begins inside the window, so no line past the
window can change it — and so is the last when a line that is not blank, and in
no block (a reference definition), follows it; otherwise the last is parsed
again, from its first line, in the next window. Only the first window may hold
front matter, and it reaches the line that would close it.

Reading is bounded by *work* too. markdown-it's block parser spends about as
long on a line, or on a list item, as on six tokens, whatever the markdown, so
a block costs its tokens, ``WORK_PER_ITEM`` more for each list item and
``WORK_PER_LINE`` for each of its lines (a reference definition before it, twice
that); the blocks read may cost ``WORK_PER_CHAR`` a character of the document
(at least ``WORK_FLOOR``). Agent prose costs 0.32 a character and is read to its
end; thousands of one-word list items or table cells cost two or more, and what
lies past the bound is not read — the digest's footer points to the full text.
A lazy and a whole reading charge the same blocks in the same order; a window
is never much longer than the work left allows at the density just seen, and
one a wide table's delimiter row opens holds no more rows than that allows
(markdown-it makes a cell for every column in every row). See docs/digest.md,
"What a digest costs".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate

from markdown_it.token import Token

from ._lines import LinePattern
from ._markdown import parse_blocks
from ._nodes import Node, nodes_of

_NOT_BLANK = re.compile(r"\S")
_NOT_BLANK_LINE = re.compile(r"^[ \t]*\S", re.MULTILINE)
#: A blank line, then one that neither goes on with a list, a quote or a table
#: nor is indented: a window cut there leaves its block before it final.
_FRESH = re.compile(r"\n\n(?=[^\s\-*+>|0-9])")
#: A table's delimiter row, as markdown-it reads one: dashes between pipes.
_DELIMITER_ROW = LinePattern(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
_DEFINED = re.compile(r"\[([^\[\]]*)\]:")

__all__ = ["WORK_FLOOR", "WORK_PER_CHAR", "WORK_PER_ITEM", "WORK_PER_LINE", "Block", "Document"]

#: What a line, and a list item, costs markdown-it's block parser, in tokens' worth.
WORK_PER_LINE = 6
WORK_PER_ITEM = 6
WORK_PER_CHAR = 0.5
WORK_FLOOR = 8192


@dataclass(slots=True)
class Block:
    """One top-level block: its tokens, and the line its tokens' maps count from."""

    tokens: list[Token]
    base: int
    _node: Node | None = field(default=None, repr=False)

    @property
    def node(self) -> Node:
        """The block as a syntax tree, built when first asked for."""
        if self._node is None:
            self._node = nodes_of(self.tokens)[0]
        return self._node

    @property
    def kind(self) -> str:
        return self.tokens[0].type.removesuffix("_open")

    @property
    def raw(self) -> str:
        """The inline source of a paragraph or a heading; ``""`` for other blocks."""
        return self.tokens[1].content if self.kind in ("paragraph", "heading") else ""


class Document:
    """The top-level blocks of ``src`` (normalised), parsed on demand."""

    def __init__(self, src: str, first_window: int, whole: bool = False) -> None:
        """``first_window``: characters to parse first; ``whole``: parse everything
        at once (the reference a lazy reading must equal)."""
        self.src = src
        self.lines = src.split("\n")
        self.env: dict = {}
        self.blocks: list[Block] = []
        self.done = not src.strip()
        self.capped = False  # the work bound stopped the reading
        self._starts = [0, *accumulate(map((1).__add__, map(len, self.lines)))]
        self._first = max(first_window, 1)
        self._size = self._first  # the next window's least length
        self._whole = whole
        self._line = 0  # where the next window starts: the first line not yet final
        self._end = 0  # the line just past the last final block
        self._parsed_to = 0  # the source before this offset has been parsed
        self._work_left = max(WORK_FLOOR, int(WORK_PER_CHAR * len(src)))
        self._density = 0.0  # work a character, in the last window parsed
        self._window = (-1, -1)  # where the last window started and ended

    @property
    def unread(self) -> int:
        """Offset of the source no final block covers yet."""
        return len(self.src) if self.done or self.capped else self._starts[self._line]

    def get(self, index: int) -> Block | None:
        """Block ``index``, parsing as far as needed; ``None`` past the last one read."""
        while len(self.blocks) <= index and self._step(self.unread + self._size):
            pass
        return self.blocks[index] if index < len(self.blocks) else None

    def reach(self, offset: int) -> None:
        """Parse until the final blocks cover ``offset``."""
        while self.unread <= offset and self._step(offset):
            pass

    def complete_references(self, content: str) -> None:
        """Parse the rest of the document when it may define a label ``content``
        may use: a link drawn now must resolve as it would in the whole document."""
        if not self.done and _may_define(self.src, self._parsed_to, content):
            self._step(len(self.src), whole=True)

    def _step(self, target: int, whole: bool = False) -> bool:
        """Parse one more window, past ``target``; ``False`` once nothing more
        can be read. ``whole``: to the end, the work bound spent or not (for the
        reference definitions)."""
        if self.done or (self.capped and not whole):
            return False
        start = self._starts[self._line]
        end = len(self.src) if whole or self._whole else self._window_end(start, target)
        self._window = (start, end)
        tokens = parse_blocks(self.src[start:end], self.env, at_start=start == 0)
        self._parsed_to = max(self._parsed_to, end)
        groups = _top_level(tokens)
        if end >= len(self.src):
            for group in groups:
                self._take(group)
            last = len(self.lines)
            if not self.capped:
                self._charge(self._work(last, last))  # what follows the last block
            self.done = True
            return False
        rest = groups[-1] if groups and not self._followed(groups[-1], end) else None
        for group in groups if rest is None else groups[:-1]:
            self._take(group)
        self._next_window(rest, start, end, _token_work(tokens))
        return not self.capped

    def _followed(self, group: list[Token], end: int) -> bool:
        """Whether a line that is not blank follows ``group`` in the window: then
        markdown-it ended the block at a line it saw, and it is final."""
        after = self._starts[self._line + _lines(group)[1]]
        return _NOT_BLANK.search(self.src, after, end) is not None

    def _take(self, group: list[Token]) -> None:
        """Keep a final block, unless the work bound is spent."""
        if self.capped:
            # Nothing more is kept; measuring the lines since the last kept block would
            # rescan them for every later block of a whole reading.
            return
        first, last = (self._line + line for line in _lines(group))
        if self._charge(self._work(first, last, _token_work(group))):
            self._end = last
            self.blocks.append(Block(group, self._line))

    def _work(self, first: int, end: int, tokens: int = 0) -> int:
        """What a block from line ``first`` to ``end`` with ``tokens`` costs, the
        lines since the last final block with it — those before ``first`` that
        are not blank are reference definitions, which cost twice a line."""
        lines = end - self._end
        between = self.src[self._starts[self._end] : self._starts[first]]
        return tokens + WORK_PER_LINE * (lines + len(_NOT_BLANK_LINE.findall(between)))

    def _charge(self, work: int) -> bool:
        """Spend ``work``; ``False`` once the work bound is spent."""
        if self.capped or work > self._work_left:
            self.capped = True
            return False
        self._work_left -= work
        return True

    def _next_window(self, rest: list[Token] | None, start: int, end: int, tokens: int) -> None:
        """The next window starts at the block left unfinished, or after the last
        final one. When even the part of it seen costs more than the work left,
        reading stops: the whole would cost more still. ``tokens``: what the
        window's tokens cost."""
        line = self._line
        if rest is None:
            self._line = max(self._end, line)
            last = self._end + self.src.count("\n", self._starts[self._end], end)
            seen = self._work(last, last)
        else:
            first, last = _lines(rest)
            self._line = line + first
            seen = self._work(line + first, line + last, _token_work(rest))
        if seen > self._work_left:
            self.capped = True
        work = tokens + WORK_PER_LINE * self.src.count("\n", start, end)
        if not tokens:  # reference definitions only: twice a line each
            work += WORK_PER_LINE * len(_NOT_BLANK_LINE.findall(self.src, start, end))
        self._density = max(work / (end - start), 0.01)
        length = end - start
        if self._line != line:
            self._size = self._first
        else:  # one block fills the window: grow fast, and not far past the bound
            reach = 8 * length
            if rest is not None and rest[0].type == "table_open":
                # All of a table is drawn (its pointer counts its rows), and a blank
                # line ends it: read to there at once, not through windows 8 times
                # as long, each parsing again the rows the last one parsed.
                blank = self.src.find("\n\n", start)
                reach = (len(self.src) if blank < 0 else blank + 2) - start
            self._size = max(length + length // 4, min(reach, self._affordable() * 9 // 8))

    def _affordable(self) -> int:
        """How much more source the work left allows, at the density seen last."""
        return int(self._work_left / self._density) if self._density else len(self.src)

    def _window_end(self, start: int, target: int) -> int:
        """Where a window from ``start`` ends: one line into the block after a
        blank line — best one that no list, quote or table goes on into — so the
        block before it is final and only that line is parsed twice; or, with no
        blank line near, at a line end. It reaches ``target`` as far as the work
        left allows, and the first reaches any front matter's closing line."""
        target = max(target, start + self._size)
        target = min(target, start + max(self._size, self._affordable()))
        if start == 0:
            target = max(target, _front_matter_end(self.src))
        fresh = _FRESH.search(self.src, target, target + 2 * self._first)
        blank = fresh.start() if fresh else self.src.find("\n\n", target, target + self._first)
        if blank >= 0:
            target = blank + 2
        end = _line_end(self.src, target)
        bounded = self._rows_bound(start, end)
        # Bounded once already without finishing the table: it was no table.
        return bounded if (start, bounded) > self._window else end

    def _rows_bound(self, start: int, end: int) -> int:
        """``end``, or earlier: a table makes a cell for every column in every row,
        even in a row of one ``|``, so after a wide delimiter row a window holds
        no more rows than the work left allows."""
        for row in _DELIMITER_ROW.finditer(self.src, start, end):
            rows = self._work_left // (3 * (row.group().count("|") + 1)) + 1
            if self.src.count("\n", row.end(), end) > rows:
                pos = row.end()
                for _ in range(rows):
                    pos = _line_end(self.src, pos)
                return pos
        return end


def _line_end(src: str, pos: int) -> int:
    """The offset past the line end at or after ``pos``, or the text's end."""
    line_end = src.find("\n", pos)
    return len(src) if line_end < 0 else line_end + 1


def _may_define(src: str, pos: int, content: str) -> bool:
    """Whether ``src`` from ``pos`` may define a label that ``content`` uses: a
    label is the text of a pair of brackets, compared without whitespace or case.
    Escaped brackets, which a label may hold, are not told apart: then yes."""
    if src.find("]:", pos) < 0:
        return False
    if any(escape in content or src.find(escape, pos) >= 0 for escape in ("\\[", "\\]")):
        return True
    used = {_key(label) for label in _BRACKETS.findall(content)}
    return any(_key(match[1]) in used for match in _DEFINED.finditer(src, pos))


def _key(label: str) -> str:
    return "".join(label.split()).casefold()


def _token_work(tokens: list[Token]) -> int:
    """What ``tokens`` cost: one each, and a list item ``WORK_PER_ITEM`` more."""
    return len(tokens) + WORK_PER_ITEM * [token.type for token in tokens].count("list_item_open")


def _top_level(tokens: list[Token]) -> list[list[Token]]:
    """``tokens`` cut into top-level blocks."""
    ends = [
        index + 1 for index, token in enumerate(tokens) if token.level == 0 and token.nesting <= 0
    ]
    return [tokens[start:end] for start, end in zip([0, *ends], ends, strict=False)]


def _lines(group: list[Token]) -> tuple[int, int]:
    """The lines a block spans in its window, as markdown-it maps them."""
    first, last = group[0].map or (0, 0)
    return first, last


def _front_matter_end(src: str) -> int:
    """The end of the line that would close the front matter ``src`` opens with
    (a line of as many dashes, or ``...``), or 0."""
    opening = len(src) - len(src.lstrip("-"))
    if opening < 3:
        return 0
    line = src.find("\n") + 1
    for pattern in (rf"^ {{0,3}}-{{{opening},}}[ \t]*$", r"^\.\.\.[ \t]*$"):
        match = re.compile(pattern, re.MULTILINE).search(src, line) if line else None
        if match:
            return match.end()
    return 0
