"""Reading a document for its digest: as far as the budget and the ask need.

Top-level blocks come from a ``Document`` in the author's order, each drawn (its
units) when first needed. ``read`` draws blocks until what was drawn passes a
threshold; ``find_ask`` draws the blocks whose source could hold the ask until
the first question is found or nothing unread could hold one. Both go in the
same order whether the document was parsed whole first or a window at a time,
and so spend the inline budget alike: reading less never changes the digest
(``test_digest_properties.py`` checks the two readings against each other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._ask import in_list_or_quote_line, may_ask, may_reply, next_question, next_reply
from ._document import Document
from ._run import Run
from ._scope import InlineBudget, Scope
from ._text import first_question, first_reply
from ._units import Unit, units_of

__all__ = ["SEP", "Ask", "Reader"]

SEP = "\n\n"
#: The least source parsed first: below a small limit, a window this long costs
#: hardly more to parse than a shorter one.
FIRST_WINDOW = 1024
#: Candidates for the ask passed over, at most, for being in a list item or a
#: quote without parsing up to them (a crafted text can hold thousands).
MAX_SKIPPED = 64


@dataclass(slots=True)
class Ask:
    """Where the ask is: the block, its unit, the sentence's span in its line."""

    block: int
    unit: int
    span: tuple[int, int]


class _Next:
    """``find(src, pos)`` — the offset of the next match at or after ``pos``, or
    -1 — remembered: a match found from an earlier ``pos`` is still the next one
    from any ``pos`` up to it, so the search for the ask scans the rest of a long
    document once, not once for each candidate it passes over."""

    __slots__ = ("find", "found", "since")

    def __init__(self, find: Callable[[str, int], int]) -> None:
        self.find = find
        self.since = self.found = -1

    def __call__(self, src: str, pos: int) -> int:
        still = 0 <= self.since <= pos and (self.found < 0 or pos <= self.found)
        if not still:
            self.since, self.found = pos, self.find(src, pos)
        return self.found


class Reader:
    """The blocks of one document, read and drawn on demand, and its ask."""

    def __init__(self, src: str, limit: int, eager: bool) -> None:
        self.limit = limit
        self.doc = Document(src, max(limit, FIRST_WINDOW), whole=eager)
        self.budget = InlineBudget(limit)
        self.size = 0  # drawn length of the blocks measured, separators included
        self.question: Ask | None = None
        self.reply: Ask | None = None
        self._units: dict[int, list[Unit]] = {}
        self._measured = 0  # blocks measured
        self._searched = 0  # blocks looked at for the ask
        self._stopped = False  # a line was cut short: nothing after it is drawn
        self._questions = _Next(next_question)
        self._replies = _Next(next_reply)

    @property
    def blocks(self) -> int:
        """How many blocks were read."""
        return len(self.doc.blocks)

    @property
    def ask(self) -> Ask | None:
        """The question, else the reply instruction, else none."""
        return self.question or self.reply

    def read(self, threshold: int) -> None:
        """Draw blocks until what was drawn passes ``threshold``."""
        while self.size <= threshold and not self._stopped:
            if self.doc.get(self._measured) is None:
                return
            self._measure(self._measured, threshold)
            self._measured += 1

    def _measure(self, index: int, threshold: int) -> None:
        """Count the block's drawn lines into ``size`` — exactly what the digest
        lays out, separators included — no further than past ``threshold``."""
        for unit in self.units(index):
            gap = len(SEP) if self.size else 0
            for line in unit:
                text = line.draw()
                if text:
                    self.size += gap + len(text)
                    gap = 1
                self._stopped = line.run.cut
                if self._stopped or self.size > threshold:
                    return

    def find_ask(self) -> None:
        """The first question; failing any, the first reply instruction."""
        while self.question is None and not self.budget.spent:
            if self._searched == self.blocks:
                candidate = self._next_candidate()
                if candidate < 0:
                    return
                self.doc.reach(candidate)
            if self._searched == self.blocks:
                return  # nothing more can be read
            self._look_for_ask(self._searched)
            self._searched += 1

    def _next_candidate(self) -> int:
        """Where the unread rest of the document could first hold the ask, or -1."""
        src, pos = self.doc.src, self.doc.unread
        for _ in range(MAX_SKIPPED):
            found = [
                self._questions(src, pos),
                self._replies(src, pos) if self.reply is None else -1,
            ]
            at = min((at for at in found if at >= 0), default=-1)
            if at < 0 or not in_list_or_quote_line(src, at):
                return at
            pos = src.find("\n", at) + 1 or len(src)
        return pos  # so many in lists: parse on, which the work bound limits

    def _look_for_ask(self, index: int) -> None:
        raw = self.doc.blocks[index].raw  # a paragraph's or a heading's, at the top level
        if may_ask(raw):
            self.question = self._find(index, first_question)
        if self.question is None and self.reply is None and may_reply(raw):
            self.reply = self._find(index, first_reply)

    def _find(self, index: int, finder: Callable[[Run], tuple[int, int] | None]) -> Ask | None:
        for number, unit in enumerate(self.units(index)):
            line = unit.line(0)
            if unit.candidate and line and (span := finder(line.run)) is not None:
                return Ask(index, number, span)
        return None

    def units(self, index: int) -> list[Unit]:
        """The units of block ``index``, drawn on first asking."""
        units = self._units.get(index)
        if units is None:
            block, doc = self.doc.blocks[index], self.doc
            scope = Scope(doc.env, doc.lines, block.base, self.budget, doc.complete_references)
            units = self._units[index] = units_of(block.node, scope)
        return units

    def exhausted(self) -> bool:
        """Every block of the document was read."""
        return self.doc.done and not self.doc.capped

    def can_read_more(self) -> bool:
        """Whether reading on could draw more."""
        return not (self._stopped or self.doc.done or self.doc.capped)

    def surely_over(self) -> bool:
        """What was measured cannot fit the limit: moving the ask first only ever
        adds characters (its bold marks, its separator)."""
        return self.size > self.limit
