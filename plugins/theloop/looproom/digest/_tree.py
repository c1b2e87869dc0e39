"""markdown-it's flat block tokens as a tree: containers hold their children."""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it.token import Token

__all__ = ["Node", "tree"]


@dataclass(slots=True, init=False)
class Node:
    """A block: its opening (or only) token, its children, its inline token."""

    token: Token
    children: list[Node]
    inline: Token | None
    type: str  # the token's type without ``_open``

    def __init__(self, token: Token) -> None:
        # Written out: one is made for every block read (performance).
        self.token, self.children, self.inline = token, [], None
        self.type = token.type.removesuffix("_open")


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
