"""Top-level blocks as the digest draws them (R2.2, R2.3, R3.1, R3.2).

Paragraphs are their sentences; headings a bold line; lists one numbered line an
item (``1. ☑ item``; a nested item ``1.2. item``, three spaces in a level; an
ordered list keeps the author's numbers); code, tables and stack traces a
pointer (``_⟨code: 3 lines⟩_`` — inside a list item, at the end of its line);
quotes ``>`` lines; HTML its escaped text, comments gone, ``<details>`` open and
its summary a bold line; rules and front matter
nothing. Only a paragraph or a heading at the top level may hold the ask.

Lines are drawn when first asked for, so a list of 500 items costs what the
budget shows of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ._html import HtmlLine, html_lines
from ._inline import render_inline
from ._mrkdwn import inline_children
from ._parser import parse_inline
from ._run import Run
from ._slack import escape, strip_comments
from ._tree import Node

__all__ = ["Line", "Unit", "pointer", "units_of"]

INDENT = "   "
_LISTS = ("bullet_list", "ordered_list")
_CODE = ("fence", "code_block")
_TRACE_HEAD = re.compile(
    r"\s*(?:Traceback \(most recent call last\)|File \"[^\"]*\", line \d+"
    r"|at \S[^()]*\([^()]*\)\s*$)"
)
_TRACE_LINE = re.compile(
    r"(?:\s*Traceback \(most recent call last\)|\s*File \"[^\"]*\", line \d+"
    r"|\s*at \S|[\w.$]*(?:Error|Exception)\b|\s*\^+\s*$| {2})"
)


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

    def drawn(self) -> list[Line]:
        """The lines drawn so far."""
        return self._lines

    def __iter__(self) -> Iterator[Line]:
        index = 0
        while (line := self.line(index)) is not None:
            yield line
            index += 1

    def draw(self) -> str:
        return "\n".join(drawn for line in self if (drawn := line.draw()))


def pointer(what: str, count: int, noun: str) -> Run:
    """``_⟨code: 3 lines⟩_`` — one atom; ``1 line``, not ``1 lines`` (§5)."""
    text = f"_⟨{what}: {count} {noun}{'' if count == 1 else 's'}⟩_"
    return Run(text, [(0, len(text))], replaced=True)


def units_of(node: Node, env: dict) -> list[Unit]:
    """The digest's units for one top-level block, in the author's order."""
    kind = node.type
    if kind in ("html_block", "deep_text"):
        return [Unit(_text_lines(node))]
    if kind == "paragraph":
        return _paragraph(node, env)
    if kind == "heading":
        return [Unit([Line(_words(node, env, bold=True), wrap="*")], candidate=True)]
    if kind in _LISTS:
        return [Unit(_list_lines(node, env, ()))]
    if kind == "blockquote":
        return [Unit(_quoted(line) for line in _nested_lines(node.children, env))]
    line = _leaf_line(node)
    return [Unit([line])] if line else []


def _words(node: Node, env: dict, bold: bool = False) -> Run:
    if node.inline is None:
        return Run("")
    return render_inline(inline_children(node.inline, env), shorten=True, bold=bold).strip()


def _leaf_line(node: Node) -> Line | None:
    """Code, a table: a pointer; HTML or text too deep to nest, inside a list
    item: its escaped text on the item's line."""
    kind = node.type
    if kind in _CODE:
        lines = node.token.content.rstrip("\n").split("\n") if node.token.content else []
        what = "stack trace" if _trace_span(lines) == (0, len(lines)) else "code"
        return Line(pointer(what, len(lines), "line"))
    if kind == "table":
        rows = sum(len(part.children) for part in node.children if part.type == "tbody")
        return Line(pointer("table", rows, "row"))
    if kind in ("html_block", "deep_text"):
        words = [(" ".join(text.split()), bold) for text, bold in _html_of(node)]
        run = Run.join([_bold(text) if bold else Run(text) for text, bold in words])
        return Line(run) if run.text else None
    return None


def _text_lines(node: Node) -> Iterator[Line]:
    """HTML (or text nested too deep), escaped and without its comments, a line
    for each of its lines; a ``<details>`` summary a bold line."""
    for text, bold in _html_of(node):
        if text.strip():
            yield Line(Run(text.strip()), wrap="*" if bold else "")


def _html_of(node: Node) -> list[HtmlLine]:
    if node.type == "html_block":
        return html_lines(node.token.content)
    return [(line, False) for line in escape(strip_comments(node.token.content)).split("\n")]


def _bold(words: str) -> Run:
    """A summary inside a list item's line: bold, its marks a pair."""
    return Run(f"*{words}*", pairs=[(0, len(words) + 1, "*")])


def _paragraph(node: Node, env: dict) -> list[Unit]:
    """A paragraph; a stack trace inside it becomes a pointer between its prose."""
    content = node.inline.content if node.inline is not None else ""
    lines = content.split("\n")
    span = _trace_span(lines) if len(lines) > 1 else None
    if span is None:
        return [Unit([Line(_words(node, env))], candidate=True)]
    start, end = span
    before = _prose("\n".join(lines[:start]), env)
    after = _prose("\n".join(lines[end:]), env)
    parts = [
        Unit([Line(before)], candidate=True),
        Unit([Line(pointer("stack trace", end - start, "line"))]),
        Unit([Line(after)], candidate=True),
    ]
    return [part for part in parts if part.draw()]


def _prose(content: str, env: dict) -> Run:
    return render_inline(parse_inline(content, env), shorten=True).strip() if content else Run("")


def _trace_span(lines: list[str]) -> tuple[int, int] | None:
    """The first run of two or more trace-shaped lines that opens like a trace
    (R3.1): Python's ``Traceback``/``File "…", line N``, or ``at f(file:1)``."""
    index = 0
    while index < len(lines):
        if _TRACE_HEAD.match(lines[index]):
            end = index + 1
            while end < len(lines) and _TRACE_LINE.match(lines[end]):
                end += 1
            if end - index >= 2:
                return index, end
            index = end
        else:
            index += 1
    return None


def _list_lines(node: Node, env: dict, path: tuple[int, ...]) -> Iterator[Line]:
    """One line an item, numbered ``1.``, ``1.2.`` …; an ordered list keeps the
    author's numbers (§5: the start is not lost)."""
    ordered = node.type == "ordered_list"
    first = int(node.token.attrs.get("start", 1)) if ordered else 1
    for offset, item in enumerate(node.children):
        number = (*path, first + offset)
        checked = (item.token.meta or {}).get("checked")
        box = "" if checked is None else ("☑ " if checked else "☐ ")
        prefix = INDENT * len(path) + ".".join(map(str, number)) + ". " + box
        yield from _item_lines(item, env, number, prefix)


def _item_lines(item: Node, env: dict, number: tuple[int, ...], prefix: str) -> Iterator[Line]:
    """An item's words on its line — its code as a pointer in place, so a fence
    inside an item keeps the numbering (§5) — then its nested items and quotes,
    and words after those on a line of their own: the author's order."""
    runs: list[Run] = []
    for child in item.children:
        if child.type in (*_LISTS, "blockquote"):
            if runs or prefix.strip():
                yield Line(Run.join(runs), prefix)
            runs, prefix = [], " " * len(prefix)
            if child.type == "blockquote":
                for line in _nested_lines(child.children, env):
                    yield Line(line.run, prefix + "> " + line.prefix.lstrip(), line.wrap)
            else:
                yield from _list_lines(child, env, number)
        elif child.type in ("paragraph", "heading"):
            runs.append(_words(child, env))
        elif (line := _leaf_line(child)) is not None:
            runs.append(line.run)
    if runs or prefix.strip():
        yield Line(Run.join(runs), prefix)


def _nested_lines(children: list[Node], env: dict) -> Iterator[Line]:
    for child in children:
        for unit in units_of(child, env):
            yield from unit


def _quoted(line: Line) -> Line:
    return Line(line.run, "> " + line.prefix, line.wrap)
