"""Top-level blocks as the digest draws them (docs/digest.md, "The digest").

Paragraphs are their sentences; headings a bold line; lists one numbered line an
item (``1. ☑ item``; a nested item ``1.2. item``, three spaces a level; an
ordered list keeps the author's numbers) so a member can answer by number;
code, tables and stack traces a pointer (``_⟨code: 3 lines⟩_`` — inside a list
item, at the end of its line); quotes ``>`` lines; HTML its escaped text,
comments gone, ``<details>`` open and its summary a bold line; rules and front
matter nothing. Only a paragraph or a heading at the top level may hold the ask.

Lines are drawn when first asked for, so a list of 500 items costs what the
budget shows of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ._blocks import code_lines, dropped, dropped_lines, inline_source, task_box
from ._html import HtmlLine, html_lines
from ._inline import render_inline
from ._nodes import Node
from ._run import Run
from ._scope import Scope
from ._traces import is_trace, trace_span

__all__ = ["Line", "Unit", "pointer", "units_of"]

INDENT = "   "
_LISTS = ("bullet_list", "ordered_list")
_CODE = ("fence", "code_block")


@dataclass(slots=True)
class Line:
    """One drawn line: ``prefix`` (a number, a box, ``> ``), the run, ``wrap``
    (``*`` around a bold line)."""

    run: Run
    prefix: str = ""
    wrap: str = ""

    def draw(self) -> str:
        return f"{self.prefix}{self.wrap}{self.run.text}{self.wrap}" if self.run.text else ""


class Unit:
    """What one block (or one part of a paragraph) becomes: lines, drawn when
    first asked for."""

    __slots__ = ("_lines", "_more", "candidate")

    def __init__(self, lines: Iterable[Line], candidate: bool = False) -> None:
        self._lines: list[Line] = []
        self._more: Iterator[Line] | None = iter(lines)
        self.candidate = candidate  # a top-level paragraph or heading: may hold the ask

    def line(self, index: int) -> Line | None:
        """Line ``index``, drawn if need be; ``None`` past the last."""
        while self._more is not None and len(self._lines) <= index:
            line = next(self._more, None)
            if line is None:
                self._more = None
            else:
                self._lines.append(line)
        return self._lines[index] if index < len(self._lines) else None

    def __iter__(self) -> Iterator[Line]:
        index = 0
        while (line := self.line(index)) is not None:
            yield line
            index += 1

    def draw(self) -> str:
        return "\n".join(drawn for line in self if (drawn := line.draw()))


def pointer(what: str, count: int, noun: str) -> Run:
    """``_⟨code: 3 lines⟩_`` — one atom; ``1 line``, not ``1 lines``."""
    text = f"_⟨{what}: {count} {noun}{'' if count == 1 else 's'}⟩_"
    return Run(text, [(0, len(text))], replaced=True)


def units_of(node: Node, scope: Scope) -> list[Unit]:
    """The digest's units for one block, in the author's order."""
    kind = node.type
    if dropped(node):
        return [Unit(Line(Run(text)) for text in dropped_lines(node, scope) if text)]
    if kind == "html_block":
        return [Unit(_html(line) for line in html_lines(node.content) if line[0].strip())]
    if kind == "paragraph":
        return _paragraph(node, scope)
    if kind == "heading":
        return [Unit([Line(_words(node, scope, bold=True), wrap="*")], candidate=True)]
    if kind in _LISTS:
        return [Unit(_list_lines(node, scope, ()))]
    if kind == "blockquote":
        return [Unit(_quoted(line) for line in _nested_lines(node.children, scope))]
    line = _leaf_line(node, scope)
    return [Unit([line])] if line else []


def _words(node: Node, scope: Scope, bold: bool = False) -> Run:
    return _prose(inline_source(node), scope, bold)


def _prose(content: str, scope: Scope, bold: bool = False) -> Run:
    """Inline source drawn, within the budget."""
    tokens, cut = scope.inline(content)
    run = render_inline(tokens, shorten=True, bold=bold).strip()
    run.cut = run.cut or cut
    return run


def _html(line: HtmlLine) -> Line:
    text, bold = line
    return Line(Run(text.strip()), wrap="*" if bold else "")


def _leaf_line(node: Node, scope: Scope) -> Line | None:
    """Code, a table: a pointer; inside a list item, HTML or text nested too
    deep: its escaped words on the item's line."""
    kind = node.type
    if kind in _CODE:
        lines = code_lines(node)
        return Line(pointer("stack trace" if is_trace(lines) else "code", len(lines), "line"))
    if kind == "table":
        rows = sum(len(part.children) for part in node.children if part.type == "tbody")
        return Line(pointer("table", rows, "row"))
    if kind == "html_block" or dropped(node):
        lines = html_lines(node.content) if kind == "html_block" else _plain(node, scope)
        words = [(" ".join(text.split()), bold) for text, bold in lines]
        run = Run.join([_bold(text) if bold else Run(text) for text, bold in words])
        return Line(run) if run.text else None
    return None


def _plain(node: Node, scope: Scope) -> list[HtmlLine]:
    return [(text, False) for text in dropped_lines(node, scope)]


def _bold(words: str) -> Run:
    """A summary inside a list item's line: bold, its marks a pair."""
    return Run(f"*{words}*", pairs=[(0, len(words) + 1, "*")])


def _paragraph(node: Node, scope: Scope) -> list[Unit]:
    """A paragraph; a stack trace inside it becomes a pointer between its prose."""
    content = inline_source(node)
    lines = content.split("\n")
    span = trace_span(lines) if len(lines) > 1 else None
    if span is None:
        return [Unit([Line(_prose(content, scope))], candidate=True)]
    start, end = span
    before = _prose("\n".join(lines[:start]), scope)
    after = _prose("\n".join(lines[end:]), scope)
    parts = [
        Unit([Line(before)], candidate=True),
        Unit([Line(pointer("stack trace", end - start, "line"))]),
        Unit([Line(after)], candidate=True),
    ]
    return [part for part in parts if part.draw() or part.line(0).run.cut]


def _list_lines(node: Node, scope: Scope, path: tuple[int, ...]) -> Iterator[Line]:
    """One line an item, numbered ``1.``, ``1.2.`` …; an ordered list keeps the
    author's numbers (the start is not lost)."""
    ordered = node.type == "ordered_list"
    first = int(node.attrs.get("start", 1)) if ordered else 1
    for offset, item in enumerate(node.children):
        number = (*path, first + offset)
        box = task_box(item)
        glyph = "" if box is None else ("☑ " if box else "☐ ")
        prefix = INDENT * len(path) + ".".join(map(str, number)) + ". " + glyph
        yield from _item_lines(item, scope, number, prefix)


def _item_lines(item: Node, scope: Scope, number: tuple[int, ...], prefix: str) -> Iterator[Line]:
    """An item's words on its line — its code as a pointer in place, so a fence
    inside an item keeps the numbering — then its nested items and quotes, and
    words after those on a line of their own: the author's order."""
    runs: list[Run] = []
    # An item markdown-it left empty for its depth is its own words (``_leaf_line``).
    children = [item] if dropped(item) else item.children
    for child in children:
        if child.type in (*_LISTS, "blockquote") and not dropped(child):
            if runs or prefix.strip():
                yield Line(Run.join(runs), prefix)
            runs, prefix = [], " " * len(prefix)
            if child.type == "blockquote":
                for line in _nested_lines(child.children, scope):
                    yield Line(line.run, prefix + "> " + line.prefix.lstrip(), line.wrap)
            else:
                yield from _list_lines(child, scope, number)
        elif child.type in ("paragraph", "heading"):
            runs.append(_words(child, scope))
        elif (line := _leaf_line(child, scope)) is not None:
            runs.append(line.run)
    if runs or prefix.strip():
        yield Line(Run.join(runs), prefix)


def _nested_lines(children: list[Node], scope: Scope) -> Iterator[Line]:
    for child in children:
        for unit in units_of(child, scope):
            yield from unit


def _quoted(line: Line) -> Line:
    return Line(line.run, "> " + line.prefix, line.wrap)
