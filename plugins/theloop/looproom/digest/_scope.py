"""What drawing a block needs besides its nodes: the document's ``env`` and
lines, and the budget of inline source the digest may parse.

The budget is what bounds the inline parse by the limit, not by the input's
shape: one block's content is read up to ``limit + 1024`` characters, cut at a
line end or a space (the rest counts as not shown, so the footer follows), and
``2 * limit + 4096`` characters in all; once those are spent, nothing more is
drawn or searched for the ask. markdown-it's inline parser can take twenty
times as long over crafted markup as over prose, and this is what keeps that
to a few milliseconds. ``to_mrkdwn`` draws every word, without a budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from markdown_it.token import Token

from ._markdown import parse_inline
from ._nodes import Node

__all__ = ["InlineBudget", "Scope"]


class InlineBudget:
    """How much inline source is left to hand to markdown-it; ``None``: no bound."""

    def __init__(self, limit: int | None = None) -> None:
        self.each = None if limit is None else limit + 1024
        self.left = None if limit is None else 2 * limit + 4096

    @property
    def spent(self) -> bool:
        return self.left is not None and self.left <= 0

    def take(self, content: str) -> tuple[str, bool]:
        """What of ``content`` may be parsed, and whether that is less than all of it."""
        if self.left is None or self.each is None:
            return content, False
        room = min(self.each, self.left)
        part = content if len(content) <= room else _prefix(content, room)
        self.left -= len(part)
        return part, len(part) < len(content)


def _prefix(content: str, room: int) -> str:
    """``content`` cut at the last line end or space within ``room`` characters
    (anywhere, when there is none)."""
    end = max(content.rfind("\n", 0, room + 1), content.rfind(" ", 0, room + 1))
    return content[: end if end > 0 else room]


def _nothing(content: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Scope:
    """One top-level block's surroundings: ``base`` is the document line its
    nodes' maps count from; ``before_links`` completes the document's reference
    definitions that content with a ``]`` may use, before it is parsed."""

    env: dict
    lines: list[str]
    base: int = 0
    budget: InlineBudget = field(default_factory=InlineBudget)
    before_links: Callable[[str], None] = _nothing

    def inline(self, content: str) -> tuple[list[Token], bool]:
        """The inline tokens of ``content`` within the budget, and whether
        ``content`` was cut short for it."""
        part, cut = self.budget.take(content)
        if "]" in part:
            self.before_links(part)
        return parse_inline(part, self.env), cut

    def source(self, node: Node) -> list[str]:
        """The document lines ``node`` spans."""
        first, last = node.map or (0, 0)
        return self.lines[self.base + first : self.base + last]
