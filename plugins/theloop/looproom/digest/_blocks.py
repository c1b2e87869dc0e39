"""What both drawings read off a block node beyond markdown-it's tokens.

* **Task boxes.** A list item whose first paragraph opens, on the item's first
  line, with ``[ ]``, ``[x]`` or ``[X]`` and a space or tab has a box; the box is
  not part of the paragraph's words. Read here from the source, so every
  markdown-it release draws boxes alike.
* **Text nested too deep.** Past its nesting limit markdown-it leaves a
  container empty and drops its lines; they are drawn as escaped text instead
  (markers such as ``>`` and ``-`` left out), so a 500-deep quote loses no word.
"""

from __future__ import annotations

import re

from ._markdown import MAX_NESTING
from ._nodes import Node
from ._scope import Scope
from ._slack import escape, strip_comments

__all__ = ["code_lines", "dropped", "dropped_lines", "inline_source", "task_box"]

_BOXES = {"[ ]": False, "[x]": True, "[X]": True}
#: What opens a line of containers: quote marks, bullets, ordered markers.
_MARKERS = re.compile(r"(?:[ \t]*(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$)))*[ \t]*")


def task_box(item: Node) -> bool | None:
    """``True`` or ``False`` for a ticked or an open box, ``None`` for no box."""
    first = item.children[0] if item.children else None
    content = first.children[0].content if first and first.children else ""
    return _BOXES[content[:3]] if first and _opens_box(first, item.map, content) else None


def _opens_box(node: Node, item_map: list[int] | None, content: str) -> bool:
    """Whether ``node`` is a paragraph on the first line of the item that maps to
    ``item_map`` and its ``content`` opens with a box and a space or tab."""
    if node.type != "paragraph" or node.map is None or item_map is None:
        return False
    return node.map[0] == item_map[0] and content[:3] in _BOXES and content[3:4] in (" ", "\t")


def inline_source(node: Node) -> str:
    """The inline source of a paragraph, heading or table cell — without the
    task box that opens an item's first paragraph."""
    content = node.children[0].content if node.children else ""
    return content[4:].lstrip() if _opens_box(node, node.item_map, content) else content


def dropped(node: Node) -> bool:
    """Whether markdown-it left ``node`` empty because it lies too deep."""
    return node.is_nested and not node.children and node.level >= MAX_NESTING - 1


def dropped_lines(node: Node, scope: Scope) -> list[str]:
    """The lines markdown-it dropped inside ``node``: escaped text, without the
    container markers that open them, and without HTML comments."""
    text = "\n".join(line[_MARKERS.match(line).end() :] for line in scope.source(node))
    return [line.strip() for line in escape(strip_comments(text)).split("\n")]


def code_lines(node: Node) -> list[str]:
    """The lines of a fence or an indented code block."""
    return node.content.rstrip("\n").split("\n") if node.content else []
