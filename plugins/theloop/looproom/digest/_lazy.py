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

A list is where most of agent documents' words are, and the digest shows only
its first items: a caller with ``room`` for so many characters gets, of a long
list, the items that lie wholly within about that much source — the list rule
run over those lines only, as if the window ended there.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from markdown_it.rules_block import StateBlock
from markdown_it.token import Token

from ._parser import new_state, top_rule

__all__ = ["Block", "LazyBlocks"]

#: The first window, in characters; a window always ends at a line end.
FIRST_WINDOW = 4096
#: The characters a list item's line may start with (the list rule's own first check).
LIST_MARKERS = frozenset("*-+0123456789")
#: A list is read up to this many times the caller's room, and this many
#: characters more: drawn items are mostly a little shorter than their source
#: (their markup goes, a path is shortened, code becomes a pointer).
ROOM_FACTOR, ROOM_SLACK = 1.5, 128


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

    def get(self, index: int, room: int | None = None) -> Block | None:
        """Block ``index``, parsing as far as needed; ``None`` past the last one.

        ``room``: the characters the caller will draw of it at most. A long list
        may then come back as its first items only — those that lie wholly within
        about ``room`` characters or the window: the same items, with the same
        words and numbers, as in the whole list (only its tightness, which the
        digest never draws, may differ) — marked ``partial`` and not kept. Asking
        again without ``room`` parses the whole list."""
        while len(self.blocks) <= index:
            if not self._step(room):
                break
            if self._partial is not None:
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
        state = new_state(self.src[start:end], self.env, cells=False)
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

    def _step(self, room: int | None = None) -> bool:
        """Parse one more top-level block — or, given ``room``, stop at a long list
        (``_partial``); ``False`` once the source is spent."""
        while not self.done:
            state = self._state
            assert state is not None
            line = state.skipEmptyLines(state.line)
            if line >= state.lineMax:
                self._advance(state, line)
                continue
            if self._parse_one(state, line, room) or self._partial is not None:
                return True
        return False

    def _advance(self, state: StateBlock, line: int) -> None:
        """The window is spent: the next one starts at ``line`` (blank lines skipped)."""
        if self._last:
            self.done = True
            return
        self._open(self._base + state.bMarks[line], self._first)

    def _parse_one(self, state: StateBlock, line: int, room: int | None = None) -> bool:
        mark = len(state.tokens)
        refs = self.env.setdefault("references", {})
        known = len(refs)
        stop = self._list_stop(state, line, room)
        if stop < state.lineMax:
            state.line = line
            self._rule(state, line, stop, False)
            if not self._may_be_cut(state, line, mark, stop):
                return self._keep(state, line, mark)
            if len(refs) == known:
                self._partial = self._whole_items(state, line, mark)
            self._forget(state, line, mark, refs, known)
            if self._partial is not None:
                return False
        state.line = line
        self._rule(state, line, state.lineMax, False)
        if not self._last and self._may_be_cut(state, line, mark, state.lineMax):
            if room is not None and len(refs) == known:
                self._partial = self._whole_items(state, line, mark)
            self._forget(state, line, mark, refs, known)
            self._grow(state, line)
            return False
        return self._keep(state, line, mark)

    def _list_stop(self, state: StateBlock, line: int, room: int | None) -> int:
        """Where a list opening at ``line`` is read to, given the caller's ``room``:
        the window's end, unless the line may open a list and the window goes on
        well past the room."""
        src, pos = state.src, state.bMarks[line] + state.tShift[line]
        if room is None or pos >= len(src) or src[pos] not in LIST_MARKERS:
            return state.lineMax
        end = state.bMarks[line] + ROOM_FACTOR * room + ROOM_SLACK
        return bisect_right(state.bMarks, end, line + 1, state.lineMax)

    def _keep(self, state: StateBlock, line: int, mark: int) -> bool:
        start = self._base + state.bMarks[line]
        end = self._base + state.bMarks[state.line]
        self.blocks.append(Block(state.tokens[mark:], start, end))
        del state.tokens[mark:]
        return True

    def _whole_items(self, state: StateBlock, line: int, mark: int) -> Block | None:
        """A list read only in part, without its last item (which may go on); it
        ends where that item begins."""
        tokens = state.tokens[mark:]
        if tokens[0].type not in ("bullet_list_open", "ordered_list_open"):
            return None
        items = [i for i, t in enumerate(tokens) if t.type == "list_item_open" and t.level == 1]
        if len(items) < 2:
            return None
        last = tokens[items[-1]]
        assert last.map is not None
        start, end = (self._base + state.bMarks[n] for n in (line, last.map[0]))
        return Block(tokens[: items[-1]], start, end, partial=True)

    def _may_be_cut(self, state: StateBlock, line: int, mark: int, end: int) -> bool:
        """Whether lines from ``end`` on could have changed the block just parsed.

        Only blank lines after it up to ``end``: an indented code block, a list
        or a fence may go on past them. Or the text opens with ``---`` and no
        front matter was found: the rule gives up, rather than running to the
        end, when it sees no closing line — which may lie past the window.
        """
        if state.skipEmptyLines(state.line) >= end:
            return True
        return (
            line == 0
            and self._base == 0
            and self.src.startswith("---")
            and state.tokens[mark].type != "front_matter"
        )

    def _forget(self, state: StateBlock, line: int, mark: int, refs: dict, known: int) -> None:
        """Forget the block just parsed: its tokens and the link definitions it recorded."""
        del state.tokens[mark:]
        for label in list(refs)[known:]:
            del refs[label]
        state.line = line

    def _grow(self, state: StateBlock, line: int) -> None:
        """The block reached the window's end: parse it again in a larger window."""
        start = self._base + state.bMarks[line]
        window_end = self._base + len(state.src)
        self._open(start, max(self._first, 2 * (window_end - start)))
