"""A whole document drawn as Slack mrkdwn — the words unchanged.

Headings (ATX and setext) → a bold line; lists → ``•`` bullets or the author's
numbers (an ordered list keeps its start), nested by three spaces a level, task
boxes ☐/☑; block quotes → ``>`` lines; fences and indented code → ``` blocks,
verbatim but escaped; tables → a ``` block of aligned rows; a rule → ``———``;
HTML → escaped text without its comments, ``<details>`` shown open with its
summary a bold line; front matter → nothing; text nested deeper than
markdown-it goes → escaped text. Blocks are separated by a blank line, which a
heading keeps too (GitHub shows one there).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._blocks import dropped, dropped_lines, inline_source, task_box
from ._html import html_lines
from ._inline import render_inline
from ._markdown import normalise, parse_blocks
from ._nodes import Node, nodes_of
from ._scope import Scope
from ._slack import escape

__all__ = ["code_block", "to_mrkdwn"]

INDENT = "   "
RULE = "———"
_FENCE_RUN = re.compile(r"``(?=`)")
_CODE_TYPES = ("fence", "code_block", "table")


def to_mrkdwn(text: str) -> str:
    """``text`` drawn as Slack mrkdwn: every word kept, in order; HTML comments
    gone; nothing Slack would act on (no mention, no broadcast)."""
    src = normalise(text)
    env: dict = {}
    scope = Scope(env, src.split("\n"))
    return _join(_draw(node, scope) for node in nodes_of(parse_blocks(src, env)))


def _join(parts: Iterable[str], sep: str = "\n\n") -> str:
    return sep.join(part for part in parts if part)


def _draw(node: Node, scope: Scope) -> str:
    kind = node.type
    if dropped(node):
        return "\n".join(dropped_lines(node, scope)).strip()
    if kind == "paragraph":
        return _inline(node, scope)
    if kind == "heading":
        words = _inline(node, scope, bold=True).strip()
        return f"*{words}*" if words else ""
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, scope)
    if kind == "blockquote":
        return _quote(_join(_draw(child, scope) for child in node.children))
    if kind in ("fence", "code_block"):
        return code_block(node.content)
    if kind == "table":
        return code_block(_table_rows(node))
    if kind == "html_block":
        return _html(node.content)
    return RULE if kind == "hr" else ""


def _html(content: str) -> str:
    """HTML as the reader sees it: escaped text, ``<details>`` open, each summary
    a bold line."""
    return "\n".join(f"*{text}*" if bold else text for text, bold in html_lines(content)).strip()


def _inline(node: Node, scope: Scope, bold: bool = False) -> str:
    tokens, _ = scope.inline(inline_source(node))
    return render_inline(tokens, bold=bold).text


def _quote(body: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))


def code_block(content: str) -> str:
    """Code as Slack draws it: a ``` block; a run of three backticks inside is
    broken by a zero-width space, or Slack would end the block there."""
    body = escape(_FENCE_RUN.sub("``\u200b", content))
    if body and not body.endswith("\n"):
        body += "\n"
    return f"```\n{body}```"


def _list(node: Node, scope: Scope) -> str:
    ordered = node.type == "ordered_list"
    start = int(node.attrs.get("start", 1)) if ordered else 1
    return "\n".join(
        _item(item, _marker(item, ordered, start + n), scope)
        for n, item in enumerate(node.children)
    )


def _marker(item: Node, ordered: bool, number: int) -> str:
    box = task_box(item)
    glyph = "" if box is None else ("☑" if box else "☐")
    if ordered:
        return f"{number}. {glyph}".rstrip()
    return glyph or "•"


def _item(item: Node, marker: str, scope: Scope) -> str:
    """One list item: the marker on its first line, the rest indented (code
    blocks stay at the margin, where Slack recognises them)."""
    lines = [marker]
    children = [item] if dropped(item) else item.children
    for child in children:
        drawn = _draw(child, scope)
        if not drawn:
            continue
        if child.type in _CODE_TYPES:
            lines.append(drawn)
        elif len(lines) == 1 and child is children[0]:
            first, _, rest = drawn.partition("\n")
            lines[0] = f"{marker} {first}"
            if rest:
                lines.append(_indented(rest))
        else:
            lines.append(_indented(drawn))
    return "\n".join(lines)


def _indented(text: str) -> str:
    return "\n".join(INDENT + line if line else line for line in text.split("\n"))


def _table_rows(node: Node) -> str:
    """A table's rows, each cell's source padded to its column, a rule under the
    header: readable in a code block."""
    rows = [
        [inline_source(cell) for cell in row.children]
        for part in node.children
        for row in part.children
    ]
    width = max((len(row) for row in rows), default=0)
    sizes = [max((len(row[i]) for row in rows if i < len(row)), default=0) for i in range(width)]
    lines = [
        " | ".join(cell.ljust(sizes[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    ]
    if lines:
        lines.insert(1, "-|-".join("-" * size for size in sizes))
    return "\n".join(lines) + "\n"
