"""An HTML block as GitHub shows it to a reader: ``<details>`` opened.

the-loop's checklists fold their explanations into ``<details><summary>…
</summary> … </details>``. GitHub shows the summary's words and, once opened,
what was folded; Slack cannot fold, so what was folded is simply shown: the
``<details>``/``</details>`` tags go (a line left blank by them with them), and
a ``<summary>…</summary>`` pair becomes a bold line of the summary's words.
Every other character stays escaped text (so nothing can ping), comments
removed. One forward scan: linear however the tags are crafted.
"""

from __future__ import annotations

import re

from ._slack import escape, strip_comments

__all__ = ["HtmlLine", "html_lines"]

#: A drawn line of an HTML block: its escaped text, and whether it is a summary
#: (drawn bold).
HtmlLine = tuple[str, bool]

_TAG = re.compile(r"<(?P<close>/?)(?P<name>details|summary)(?:\s[^<>]*)?>", re.IGNORECASE)
_SUMMARY_CLOSE = re.compile(r"</summary\s*>", re.IGNORECASE)
_MAY_FOLD = re.compile(r"</?(?:details|summary)", re.IGNORECASE)


def html_lines(content: str) -> list[HtmlLine]:
    """The lines of an HTML block's ``content`` as the reader sees them."""
    html = strip_comments(content)
    if _MAY_FOLD.search(html) is None:
        return [(line, False) for line in escape(html).split("\n")]
    return _Unfolder(html).lines()


class _Unfolder:
    """Walks the block once, tag by tag, building its lines."""

    def __init__(self, html: str) -> None:
        self.html = html
        self.out: list[HtmlLine] = []
        self.line: list[str] = []  # raw text of the line being built
        self.touched = False  # a tag was removed from this line
        self.closes = True  # a ``</summary>`` may still lie ahead

    def lines(self) -> list[HtmlLine]:
        html, pos = self.html, 0
        while (tag := _TAG.search(html, pos)) is not None:
            self.text(html[pos : tag.start()])
            pos = self.tag(tag)
        self.text(html[pos:])
        self.end_line()
        return self.out

    def tag(self, tag: re.Match[str]) -> int:
        """Handle ``tag``; return where the scan goes on."""
        if tag["name"].lower() == "details":
            self.touched = True
            return tag.end()
        closing = _SUMMARY_CLOSE.search(self.html, tag.end()) if self.closes else None
        if tag["close"] or closing is None:
            # A lone ``</summary>``, or a ``<summary>`` nothing closes (nor any
            # later one: the search would fail again): text, as any other HTML.
            self.closes = closing is not None
            self.text(tag.group(0))
            return tag.end()
        self.summary(self.html[tag.end() : closing.start()])
        return closing.end()

    def summary(self, words: str) -> None:
        """The summary, a bold line of its own between what surrounds it."""
        self.touched = True
        self.end_line()
        self.touched = True
        words = " ".join(words.split())
        if words:
            self.out.append((escape(words), True))

    def text(self, text: str) -> None:
        first, *rest = text.split("\n")
        self.line.append(first)
        for part in rest:
            self.end_line()
            self.line.append(part)

    def end_line(self) -> None:
        """Close the line: one a tag was taken from loses the space around it,
        and goes if nothing else is left; an author's blank line stays."""
        raw = "".join(self.line)
        if self.touched:
            raw = raw.strip()
        if raw or not self.touched:
            self.out.append((escape(raw), False))
        self.line, self.touched = [], False
