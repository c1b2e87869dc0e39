"""A document's top-level blocks, parsed only as far as someone asks.

The digest never shows more than ``limit`` characters, so it reads a long
document only as far as the budget and the search for the ask need (§6 bench).
markdown-it's block parser runs over a *window* of lines. A top-level block
followed by a non-blank line of the window is final — every rule decides where a
block ends from the lines it has seen — while a block followed only by blank
lines may have been cut short (an indented code block, a list, a fence go on
past blank lines), so it is forgotten (its tokens and any link definition it
recorded) and parsed again from its first line in a window twice as large.
The windows grow geometrically, so a document costs at most a small multiple
of one parse however its blocks fall (A1).
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from ._parser import new_state, top_rule

__all__ = ["Block", "LazyBlocks"]

#: The first window, in characters; a window always ends at a line end.
FIRST_WINDOW = 4096


@dataclass(slots=True)
class Block:
    """One top-level block: its tokens and where it sits in the source."""

    tokens: list[Token]
    start: int  # offset of its first line
    end: int  # offset just past its last line (a partial block: of the window)
    partial: bool = False  # a list's first items only: the rest was not read


class LazyBlocks:
    """The top-level blocks of ``src`` (normalised), parsed on demand."""

    def __init__(self, src: str, first_window: int = FIRST_WINDOW) -> None:
        """``first_window``: characters to parse first (the caller's estimate of
        what it needs; the windows grow as needed)."""
        self.src = src
        self.env: dict = {}
        self.blocks: list[Block] = []
        self.done = not src.strip()
        self._rule = top_rule()
        self._first = max(first_window, 256)
        self._state: StateBlock | None = None
        self._base = 0  # source offset of the window's line 0
        self._last = False  # the window reaches the end of the source
        self._partial: Block | None = None  # the items of a list cut by the window
        if not self.done:
            self._open(0, self._first)

    @property
    def parsed_to(self) -> int:
        """Offset where the source not yet parsed into blocks begins."""
        return len(self.src) if self.done else (self.blocks[-1].end if self.blocks else 0)

    def get(self, index: int, partial: bool = False) -> Block | None:
        """Block ``index``, parsing as far as needed; ``None`` past the last one.

        ``partial``: a long list may come back as its first items only (those the
        window holds whole: the same items, with the same words and numbers, as in
        the whole list), marked ``partial`` and not kept — asking again without
        ``partial`` parses the whole list."""
        while len(self.blocks) <= index:
            if not self._step(partial):
                break
            if partial and self._partial is not None:
                block, self._partial = self._partial, None
                return block
        return self.blocks[index] if index < len(self.blocks) else None

    def skip_to(self, offset: int) -> None:
        """Go on from ``offset`` — a line start past the parsed part, where the
        caller knows a top-level block begins; what lies between is never parsed."""
        if not self.done and offset > self.parsed_to:
            self._open(offset, self._first)

    def finish(self) -> None:
        """Parse the rest of the document (its link definitions, say)."""
        while self._step():
            pass

    def _open(self, start: int, size: int) -> None:
        end = self._window_end(start + size)
        state = new_state(self.src[start:end], self.env)
        state.doc_start = start == 0  # front matter is only ever on line 0 of the text
        self._state, self._base, self._last = state, start, end >= len(self.src)

    def _window_end(self, pos: int) -> int:
        """A window ends one line into a block that follows a blank line, so the
        block before it is final and only that one line is parsed twice."""
        blank = self.src.find("\n\n", pos)
        if blank < 0:
            return len(self.src)
        line_end = self.src.find("\n", blank + 2)
        return len(self.src) if line_end < 0 else line_end + 1

    def _step(self, partial: bool = False) -> bool:
        """Parse one more top-level block — or, with ``partial``, stop at a list the
        window cut; ``False`` once the source is spent."""
        while not self.done:
            state = self._state
            assert state is not None
            line = state.skipEmptyLines(state.line)
            if line >= state.lineMax:
                self._advance(state, line)
                continue
            if self._parse_one(state, line, partial) or self._partial is not None:
                return True
        return False

    def _advance(self, state: StateBlock, line: int) -> None:
        """The window is spent: the next one starts at ``line`` (blank lines skipped)."""
        if self._last:
            self.done = True
            return
        self._open(self._base + state.bMarks[line], self._first)

    def _parse_one(self, state: StateBlock, line: int, partial: bool = False) -> bool:
        mark = len(state.tokens)
        refs = self.env.setdefault("references", {})
        known = len(refs)
        state.line = line
        self._rule(state, line, state.lineMax, False)
        if not self._last and self._may_be_cut(state, line, mark):
            if partial and len(refs) == known:
                self._partial = self._whole_items(state, line, mark)
            self._retry(state, line, mark, refs, known)
            return False
        start = self._base + state.bMarks[line]
        end = self._base + state.bMarks[state.line]
        self.blocks.append(Block(state.tokens[mark:], start, end))
        del state.tokens[mark:]
        return True

    def _whole_items(self, state: StateBlock, line: int, mark: int) -> Block | None:
        """A list cut by the window, without its last item (which may go on)."""
        tokens = state.tokens[mark:]
        if tokens[0].type not in ("bullet_list_open", "ordered_list_open"):
            return None
        items = [i for i, t in enumerate(tokens) if t.type == "list_item_open" and t.level == 1]
        if len(items) < 2:
            return None
        start = self._base + state.bMarks[line]
        return Block(tokens[: items[-1]], start, self._base + len(state.src), partial=True)

    def _may_be_cut(self, state: StateBlock, line: int, mark: int) -> bool:
        """Whether more lines could have changed the block just parsed.

        Only blank lines after it in the window: an indented code block, a list
        or a fence may go on past them. Or the text opens with ``---`` and no
        front matter was found: the rule gives up, rather than running to the
        end, when it sees no closing line — which may lie past the window.
        """
        if state.skipEmptyLines(state.line) >= state.lineMax:
            return True
        return (
            line == 0
            and self._base == 0
            and self.src.startswith("---")
            and state.tokens[mark].type != "front_matter"
        )

    def _retry(self, state: StateBlock, line: int, mark: int, refs: dict, known: int) -> None:
        """The block reached the window's end: forget it, reparse in a larger window."""
        del state.tokens[mark:]
        for label in list(refs)[known:]:
            del refs[label]
        start = self._base + state.bMarks[line]
        window_end = self._base + len(state.src)
        self._open(start, max(self._first, 2 * (window_end - start)))
