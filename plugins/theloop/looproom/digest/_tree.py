"""markdown-it's flat block tokens as a tree: containers hold their children."""

from __future__ import annotations

from dataclasses import dataclass, field

from markdown_it.token import Token

__all__ = ["Node", "tree"]


@dataclass(slots=True)
class Node:
    """A block: its opening (or only) token, its children, its inline token."""

    token: Token
    children: list[Node] = field(default_factory=list)
    inline: Token | None = None
    type: str = field(init=False)  # the token's type without ``_open``

    def __post_init__(self) -> None:
        self.type = self.token.type.removesuffix("_open")


def tree(tokens: list[Token]) -> list[Node]:
    """The top-level nodes of ``tokens`` (one pass, no recursion: A1)."""
    roots: list[Node] = []
    stack: list[Node] = []
    for token in tokens:
        if token.nesting == -1:
            if stack:
                stack.pop()
            continue
        if token.type == "inline" and stack:
            stack[-1].inline = token
            continue
        node = Node(token)
        (stack[-1].children if stack else roots).append(node)
        if token.nesting == 1:
            stack.append(node)
    return roots
