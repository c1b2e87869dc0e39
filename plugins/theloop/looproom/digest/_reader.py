"""Reading a document for its digest: as far as the budget and the ask need.

Blocks become entries in the author's order; an entry is drawn (its units) when
first needed. Reading stops once what was drawn passes the budget and nothing
later can hold the ask (R2.1); past the budget only a possible ask is looked at,
and the reader jumps over what cannot hold one (``_ask.restart_before``) or takes
only the first items of a long list. Reading less never changes the digest — a
document read whole gives the same one (``test_digest_properties.py``); should a
shortcut turn out to matter, ``ReadEverything`` says so and the caller reads all.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from markdown_it.token import Token

from ._ask import (
    Lookahead,
    ReplyScan,
    may_ask,
    may_reply,
    next_question,
    next_risky,
    restart_before,
)
from ._lazy import Block, LazyBlocks
from ._run import Run
from ._text import first_question, first_reply
from ._tree import Node, tree
from ._units import Unit, units_of

__all__ = ["SEP", "Ask", "ReadEverything", "Reader"]

SEP = "\n\n"


class ReadEverything(Exception):
    """What the reader jumped over or left unread turns out to be needed: a
    moved ask made room for more (rare) — read the whole document instead."""


@dataclass(slots=True)
class _Entry:
    """One top-level block, drawn when first needed."""

    node: Node
    units: list[Unit] | None = None
    refs_seen: int = 0  # link definitions known when it was drawn

    @property
    def raw(self) -> str:
        inline = self.node.inline
        return inline.content if inline is not None else ""

    @property
    def candidate(self) -> bool:
        return self.node.type in ("paragraph", "heading")


@dataclass(slots=True)
class Ask:
    """Where the ask is: the entry, its unit, the sentence's span in its line."""

    entry: int
    unit: int
    span: tuple[int, int]


class Reader:
    """The entries of one document, read on demand, and its ask."""

    def __init__(self, src: str, limit: int, eager: bool) -> None:
        self.src = src
        self.limit = limit
        self.doc = LazyBlocks(src, first_window=2 * limit)
        if eager:
            self.doc.finish()
        self.entries: list[_Entry] = []
        self.blocks = 0  # blocks turned into entries
        self.read_to = 0  # source offset the entries reach
        self.size = 0  # drawn length of the entries so far, separators included
        self.question: Ask | None = None
        self.reply: Ask | None = None
        self.questions = Lookahead(src, next_question)
        self.replies = Lookahead(src, ReplyScan())
        self.risky = Lookahead(src, next_risky)
        self.restart = (-1, 0, -1)  # the last restart_before: (stop, start, found)
        self.drawable = sys.maxsize  # entries past a jump are read for the ask only
        self.shortcut = False  # blocks jumped over, or a list read in part only
        self.whole_at = -1  # a block whose first items fell short: read it whole

    def more(self, threshold: int) -> int:
        """Everything read fitted but the text goes on: read twice as far."""
        if self.shortcut:
            raise ReadEverything
        return threshold * 2

    def exhausted(self) -> bool:
        """Every block of the document is an entry the digest may draw."""
        if self.shortcut:
            return False  # something was jumped over or left unread
        return self.drawable >= len(self.entries) and self.doc.get(self.blocks) is None

    def read(self, threshold: int) -> None:
        """Blocks into entries until ``threshold`` is spent and the ask is settled."""
        while not (self.size > threshold and self._settled()):
            if self.size > threshold and not self.doc.done:
                self._skip_ahead()
            block = self.doc.get(self.blocks, room=self._room(threshold))
            if block is None:
                return
            if block.partial:
                if self._take_partial(block, threshold):
                    return
                continue
            self.blocks += 1
            self.read_to = block.end
            for node in tree(block.tokens):
                self.entries.append(_Entry(node))
                index = len(self.entries) - 1
                if self.size <= threshold:
                    self._measure(index, threshold)
                self._look_for_ask(index)

    def _room(self, threshold: int) -> int | None:
        """What is left of the budget, when the next block may be read for that
        much only: its words are to be drawn, the ask is settled past it, and its
        first items have not fallen short already."""
        if self.size > threshold or self.whole_at == self.blocks or not self._settled():
            return None
        return threshold - self.size

    def _take_partial(self, block: Block, threshold: int) -> bool:
        """A long list's first items: enough (``True``: reading is done) when they
        spend the budget — a partial list is only asked for once the ask is
        settled past it (``_room``). Items that fall short are forgotten, and the
        list is read whole."""
        entries, size = len(self.entries), self.size
        for node in tree(block.tokens):
            self.entries.append(_Entry(node))
            self._measure(len(self.entries) - 1, threshold)
        if self.size > threshold:
            self.shortcut = True
            return True
        del self.entries[entries:]
        self.size = size
        self.whole_at = self.blocks
        return False

    def _measure(self, index: int, threshold: int) -> None:
        """Count the entry's drawn lines into ``size`` — exactly what ``_assemble``
        lays out, separators included — no further than past ``threshold`` (lines
        are drawn as they are counted)."""
        for unit in self.units(index):
            gap = len(SEP) if self.size else 0
            for line in unit:
                text = line.draw()
                if text:
                    self.size += gap + len(text)
                    gap = 1
                    if self.size > threshold:
                        return

    def _skip_ahead(self) -> None:
        """Past the budget only the ask matters: jump to the last line before the
        next possible ask that surely begins a top-level block (``restart_before``),
        unless a link definition lies in between (correctness first)."""
        start = self.read_to
        wanted = [self.questions.at(start)]
        if self.reply is None:
            wanted.append(self.replies.at(start))
        found = [pos for pos in wanted if pos >= 0]
        if not found:
            return
        stop = self.src.rfind("\n", 0, min(found)) + 1
        risky = self.risky.at(start)
        if 0 <= risky < stop:
            stop = risky
        line = self._restart(start, stop)
        if line > start and self.src.find("]:", start, line) < 0:
            self.doc.skip_to(line)
            self.read_to = line
            self.shortcut = True
            self.drawable = min(self.drawable, len(self.entries))

    def _restart(self, start: int, stop: int) -> int:
        """``restart_before``, remembered: asked again for the same ``stop`` from
        further on, the answer is known — so the search stays linear (A1)."""
        known_stop, searched, found = self.restart
        if known_stop == stop and start >= searched and (found < 0 or found > start):
            return found
        found = restart_before(self.src, start, stop)
        self.restart = (stop, start, found)
        return found

    def _settled(self, pos: int | None = None) -> bool:
        """No block after ``pos`` (default: what was read) can change the ask."""
        pos = self.read_to if pos is None else pos
        if self.question is not None:
            return True
        if self.questions.beyond(pos):
            return False
        return self.reply is not None or not self.replies.beyond(pos)

    def units(self, index: int) -> list[Unit]:
        """The units of entry ``index``, drawn on first asking."""
        entry = self.entries[index]
        if entry.units is None:
            entry.refs_seen = len(self.doc.env.get("references", {}))
            entry.units = units_of(entry.node, self.doc.env)
        return entry.units

    def _look_for_ask(self, index: int) -> None:
        """R2.1: the first question; failing any, the first reply instruction."""
        entry = self.entries[index]
        if self.question is not None or not entry.candidate:
            return
        if may_ask(entry.raw):
            self.question = self._find(index, first_question)
        if self.question is None and self.reply is None and may_reply(entry.raw):
            self.reply = self._find(index, first_reply)

    def _find(self, index: int, finder: Callable[[Run], tuple[int, int] | None]) -> Ask | None:
        for number, unit in enumerate(self.units(index)):
            line = unit.line(0)
            if unit.candidate and line and (span := finder(line.run)) is not None:
                return Ask(index, number, span)
        return None

    def resolve_links(self) -> None:
        """A reference drawn before its definition was read — a ``]`` left as
        text — read the definitions, then draw again what could have used one
        (correctness first; rare)."""
        waiting = [entry for entry in self.entries if _bracket_drawn(entry)]
        if not waiting:
            return
        if not self.doc.done and self.src.find("]:", self.doc.parsed_to) >= 0:
            self.doc.finish()
        known = len(self.doc.env.get("references", {}))
        stale = [entry for entry in waiting if entry.refs_seen < known]
        if not stale:
            return
        for entry in stale:
            entry.units = None
            for inline in _inlines(entry.node):
                inline.children = []  # parsed again, with the definitions
        self.question = self.reply = None
        for index in range(len(self.entries)):
            self._look_for_ask(index)

    @property
    def ask(self) -> Ask | None:
        """The question, else the reply instruction, else none (R2.1)."""
        return self.question or self.reply

    def surely_over(self) -> bool:
        """What was measured cannot fit the limit: moving the ask first only ever
        adds characters (its bold marks, its separator)."""
        return self.size > self.limit


def _bracket_drawn(entry: _Entry) -> bool:
    """Whether a line drawn of ``entry`` shows a ``]`` as text — what is left of
    a reference link whose definition was not known yet."""
    return entry.units is not None and any(
        any(not line.run.is_atom_text(pos) for pos in _positions(line.run.text, "]"))
        for unit in entry.units
        for line in unit.drawn()
    )


def _positions(text: str, char: str) -> list[int]:
    found, pos = [], text.find(char)
    while pos >= 0:
        found.append(pos)
        pos = text.find(char, pos + 1)
    return found


def _inlines(node: Node) -> list[Token]:
    """The inline tokens of ``node`` and of every block inside it."""
    found: list[Token] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.inline is not None:
            found.append(current.inline)
        stack.extend(current.children)
    return found
