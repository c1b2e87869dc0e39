"""Block tokens as a tree of nodes, the shape both drawings walk.

markdown-it's ``SyntaxTreeNode`` would do, but each of its nodes keeps its
parent besides its children, so every tree is a reference cycle that only
Python's cycle collector frees, and it builds a node for every token at once.
Over the corpus the digest spent about a tenth of its time in that collector
and 7 % building those trees — mostly the cells of tables drawn as a pointer
and the items of lists cut after a few. These nodes keep no parent (a
node knows instead where the list item it opens starts: all the drawing asks of
its parent), are freed as soon as the digest is done with them, and a
container's children are made when first asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

from markdown_it.token import Token

__all__ = ["Node", "nodes_of"]


class Node:
    """One block: a container (opened and closed by a pair of tokens, its
    children the blocks inside) or a leaf (one token: ``inline``, ``fence`` …)."""

    __slots__ = (
        "_children",
        "_inner",
        "attrs",
        "content",
        "is_nested",
        "item_map",
        "level",
        "map",
        "type",
    )

    def __init__(
        self,
        token: Token,
        inner: tuple[Sequence[Token], int, int] | None,
        item_map: list[int] | None,
    ) -> None:
        self.is_nested = inner is not None
        self.type = token.type.removesuffix("_open") if self.is_nested else token.type
        self.map = token.map
        self.level = token.level
        self.attrs = token.attrs
        self.content = token.content
        self.item_map = item_map  # the list item's map, when this is its first child
        self._inner = inner  # the tokens between a container's pair, until its children are made
        self._children: list[Node] | None = None if self.is_nested else []

    @property
    def children(self) -> list[Node]:
        if self._children is None:
            tokens, start, end = self._inner or ((), 0, 0)
            self._children = _nodes(tokens, start, end, self)
            self._inner = None
        return self._children


def nodes_of(tokens: Sequence[Token]) -> list[Node]:
    """The top-level nodes of a balanced run of block tokens."""
    return _nodes(tokens, 0, len(tokens), None)


def _nodes(tokens: Sequence[Token], start: int, end: int, owner: Node | None) -> list[Node]:
    """The nodes of ``tokens[start:end]``, a balanced run one level below ``owner``."""
    if start >= end:
        return []
    level = tokens[start].level
    # The run's own tokens: its leaves, and its containers' opening and closing ones.
    marks = [i for i in range(start, end) if tokens[i].level == level]
    nodes: list[Node] = []
    opened = -1
    for i in marks:
        token = tokens[i]
        if token.nesting > 0:
            opened = i
            continue
        item_map = _item_map(owner, nodes)
        if token.nesting < 0:
            nodes.append(Node(tokens[opened], (tokens, opened + 1, i), item_map))
        else:
            nodes.append(Node(token, None, item_map))
    return nodes


def _item_map(owner: Node | None, siblings: list[Node]) -> list[int] | None:
    """The map of the list item a node opens, when it is the item's first child."""
    if owner is None or owner.type != "list_item" or siblings:
        return None
    return owner.map
