"""A whole document drawn as Slack mrkdwn — the words unchanged (R3.4, R4.1).

Headings (ATX and setext) → a bold line; lists → ``•`` bullets or the author's
numbers (an ordered list keeps its start), nested by three spaces a level, task
boxes ☐/☑; block quotes → ``>`` lines; fences and indented code → ``` blocks,
verbatim but escaped; tables → a ``` block of aligned rows; a rule → ``———``;
HTML → escaped text without its comments, ``<details>`` shown open with its
summary a bold line; front matter → nothing. Blocks are
separated by a blank line, which a heading keeps too (§5).
"""

from __future__ import annotations

import re

from markdown_it.token import Token

from ._html import html_lines
from ._inline import render_inline
from ._parser import normalise, parse_blocks, parse_inline
from ._slack import escape, strip_comments
from ._tree import Node, tree

__all__ = ["to_mrkdwn"]

INDENT = "   "
RULE = "———"
_FENCE_RUN = re.compile(r"``(?=`)")
_CODE_TYPES = ("fence", "code_block", "table")


def to_mrkdwn(text: str) -> str:
    """``text`` drawn as Slack mrkdwn (R3.4): every word kept, in order; HTML
    comments gone (R3.3, A5); nothing Slack would act on (A2)."""
    env: dict = {}
    nodes = tree(parse_blocks(normalise(text), env))
    return _join(_draw(node, env) for node in nodes)


def _join(parts, sep: str = "\n\n") -> str:
    return sep.join(part for part in parts if part)


def _draw(node: Node, env: dict) -> str:
    kind = node.type
    if kind == "paragraph":
        return _inline(node, env)
    if kind == "heading":
        words = _inline(node, env, bold=True).strip()
        return f"*{words}*" if words else ""
    if kind in ("bullet_list", "ordered_list"):
        return _list(node, env)
    if kind == "blockquote":
        return _quote(_join(_draw(child, env) for child in node.children))
    if kind in ("fence", "code_block"):
        return code_block(node.token.content)
    if kind == "table":
        return code_block(_table_rows(node))
    if kind == "html_block":
        return _html(node.token.content)
    if kind == "deep_text":
        return escape(strip_comments(node.token.content)).strip()
    return RULE if kind == "hr" else ""


def _html(content: str) -> str:
    """HTML as the reader sees it: escaped text, ``<details>`` open, each summary
    a bold line (R3.3)."""
    return "\n".join(f"*{text}*" if bold else text for text, bold in html_lines(content)).strip()


def _inline(node: Node, env: dict, bold: bool = False) -> str:
    if node.inline is None:
        return ""
    return render_inline(inline_children(node.inline, env), bold=bold).text


def inline_children(inline: Token, env: dict) -> list[Token]:
    """The inline tokens of a block, parsed once (the block parser leaves them empty)."""
    if not inline.children and inline.content:
        inline.children = parse_inline(inline.content, env)
    return inline.children or []


def _quote(body: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in body.split("\n"))


def code_block(content: str) -> str:
    """Code as Slack draws it: a ``` block; a run of three backticks inside is
    broken by a zero-width space, or Slack would end the block there."""
    body = escape(_FENCE_RUN.sub("``\u200b", content))
    if body and not body.endswith("\n"):
        body += "\n"
    return f"```\n{body}```"


def _list(node: Node, env: dict) -> str:
    ordered = node.type == "ordered_list"
    start = int(node.token.attrs.get("start", 1)) if ordered else 1
    return "\n".join(
        _item(item, _marker(item, ordered, start + n), env) for n, item in enumerate(node.children)
    )


def _marker(item: Node, ordered: bool, number: int) -> str:
    checked = (item.token.meta or {}).get("checked")
    box = "" if checked is None else ("☑" if checked else "☐")
    if ordered:
        return f"{number}. {box}".rstrip()
    return box or "•"


def _item(item: Node, marker: str, env: dict) -> str:
    """One list item: the marker on its first line, the rest indented (code
    blocks stay at the margin, where Slack recognises them)."""
    lines = [marker]
    for child in item.children:
        drawn = _draw(child, env)
        if not drawn:
            continue
        if child.type in _CODE_TYPES:
            lines.append(drawn)
        elif len(lines) == 1 and child is item.children[0]:
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
        [_cell_source(cell) for cell in row.children]
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


def _cell_source(cell: Node) -> str:
    """A table cell's source text (escaped with the block)."""
    return cell.inline.content if cell.inline is not None else ""
