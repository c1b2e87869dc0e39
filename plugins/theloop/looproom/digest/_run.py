"""A run of drawn mrkdwn that knows which spans must never be split.

An inline rendering is more than its string: a code span, a link token
``<url|label>``, a bare URL or a pointer is *atomic* — never cut inside, never
searched for a sentence end, a path or the word "reply" — and each emphasis mark
has a partner, so a slice that keeps one mark of a pair drops it rather than
leave a stray ``*`` for Slack to draw.

A run whose source was cut short for the inline budget (``_scope``) is ``cut``:
its end is not the author's, so the digest never draws it whole.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

__all__ = ["Run", "RunBuilder"]


@dataclass(slots=True)
class Run:
    """Drawn text; ``atoms`` and ``pairs`` are offsets into ``text``."""

    text: str
    atoms: list[tuple[int, int]] = field(default_factory=list)  # [start, end), sorted
    pairs: list[tuple[int, int, str]] = field(default_factory=list)  # (open, close, mark)
    replaced: bool = False  # stands for more of the text: a path's head, code
    cut: bool = False  # its source was cut short: the end is not the author's

    def __len__(self) -> int:
        return len(self.text)

    def atom_at(self, pos: int) -> tuple[int, int] | None:
        """The atom that covers ``pos`` (start inclusive), if any."""
        i = bisect_right(self.atoms, (pos, len(self.text) + 1)) - 1
        if i >= 0 and self.atoms[i][0] <= pos < self.atoms[i][1]:
            return self.atoms[i]
        return None

    def is_atom_text(self, pos: int) -> bool:
        """Whether the character at ``pos`` belongs to an atom."""
        return self.atom_at(pos) is not None

    def slice(self, start: int, end: int, drop_marks: str = "") -> Run:
        """``text[start:end]`` as a run: marks whose partner falls outside dropped,
        and every mark in ``drop_marks`` too (the ask is bold as a whole)."""
        drop = set()
        for opening, closing, mark in self.pairs:
            inside = (start <= opening < end, start <= closing < end)
            if inside[0] != inside[1] or (mark in drop_marks and any(inside)):
                drop.update(p for p, keep in zip((opening, closing), inside, strict=True) if keep)
        return self._cut_out(start, end, drop)

    def _cut_out(self, start: int, end: int, drop: set[int]) -> Run:
        if not drop:
            return self._shifted(start, end, lambda p: p - start)
        gone = sorted(drop)
        text = "".join(
            self.text[a + 1 : b] for a, b in zip([start - 1, *gone], [*gone, end], strict=True)
        )

        def shift(pos: int) -> int:
            return pos - start - bisect_right(gone, pos - 1)

        return self._shifted(start, end, shift, text, drop)

    def _shifted(self, start, end, shift, text=None, drop=frozenset()) -> Run:
        atoms = [(shift(a), shift(b - 1) + 1) for a, b in self.atoms if a >= start and b <= end]
        pairs = [
            (shift(o), shift(c), m)
            for o, c, m in self.pairs
            if start <= o < end and start <= c < end and o not in drop
        ]
        body = self.text[start:end] if text is None else text
        return Run(body, atoms, pairs, self.replaced, self.cut and end >= len(self.text))

    def strip(self) -> Run:
        """Surrounding whitespace removed."""
        left = len(self.text) - len(self.text.lstrip())
        right = len(self.text.rstrip())
        if (left, right) == (0, len(self.text)):
            return self
        stripped = self.slice(left, right)
        stripped.cut = self.cut
        return stripped

    def __add__(self, other: Run) -> Run:
        offset = len(self.text)
        return Run(
            self.text + other.text,
            self.atoms + [(a + offset, b + offset) for a, b in other.atoms],
            self.pairs + [(o + offset, c + offset, m) for o, c, m in other.pairs],
            self.replaced or other.replaced,
            self.cut or other.cut,
        )

    @staticmethod
    def join(runs: list[Run], sep: str = " ") -> Run:
        """``runs`` end to end, ``sep`` between those that are not empty."""
        parts: list[str] = []
        atoms: list[tuple[int, int]] = []
        pairs: list[tuple[int, int, str]] = []
        offset = 0
        for run in runs:
            if not run.text:
                continue
            if parts:
                parts.append(sep)
                offset += len(sep)
            parts.append(run.text)
            atoms.extend((a + offset, b + offset) for a, b in run.atoms)
            pairs.extend((o + offset, c + offset, m) for o, c, m in run.pairs)
            offset += len(run.text)
        replaced, cut = any(run.replaced for run in runs), any(run.cut for run in runs)
        return Run("".join(parts), atoms, pairs, replaced, cut)


class RunBuilder:
    """Appends text, atoms and emphasis marks, keeping their offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.atoms: list[tuple[int, int]] = []
        self.pairs: list[tuple[int, int, str]] = []
        self.open: list[tuple[int, str]] = []
        self.replaced = False

    def text(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def atom(self, text: str) -> None:
        self.atoms.append((self.size, self.size + len(text)))
        self.text(text)

    def opening(self, mark: str) -> None:
        self.open.append((self.size, mark))
        self.text(mark)

    def closing(self) -> None:
        if self.open:
            start, mark = self.open.pop()
            self.pairs.append((start, self.size, mark))
            self.text(mark)

    def build(self) -> Run:
        return Run("".join(self.parts), self.atoms, sorted(self.pairs), self.replaced)
