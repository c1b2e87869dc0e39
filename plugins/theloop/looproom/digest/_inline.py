"""Inline tokens drawn as Slack mrkdwn.

``**b**``/``__b__`` → ``*b*``, ``*i*``/``_i_`` → ``_i_``, ``~~s~~`` → ``~s~``, code
spans kept as written (escaped: Slack requires it everywhere), links →
``<url|label>``, autolinks → ``<url>``, images → ``<url|alt>``, inline HTML →
escaped text with comments removed, hard breaks → a new line, soft breaks → a
space (GitHub joins wrapped lines; Slack would break them), escaped characters →
the character.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it.token import Token

from ._paths import shorten_paths
from ._run import Run, RunBuilder
from ._slack import escape, is_absolute, safe_url

__all__ = ["plain_text", "render_inline"]

_MARKS = {"strong_open": "*", "em_open": "_", "s_open": "~"}
_CLOSES = {"strong_close", "em_close", "s_close"}
#: A bare URL in text: Slack links it itself; we only keep it whole. Trailing
#: punctuation is the sentence's, not the URL's.
_BARE_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>]*[^\s<>.,;:!?)\]'\"]")
_FILE_SUFFIX = re.compile(r"\.\w")


def render_inline(children: Sequence[Token], *, shorten: bool = False, bold: bool = False) -> Run:
    """The drawn run of one block's inline tokens.

    ``shorten``: absolute paths lose their head (the digest). ``bold``: the
    line is drawn bold as a whole (a heading, the ask), so its own strong marks
    are left out — Slack cannot nest bold.
    """
    writer = _Writer(shorten)
    literal: set[int] | None = None  # found at the first ``_`` mark: most lines have none
    index = 0
    while index < len(children):
        token = children[index]
        if token.type == "link_open":
            index = writer.link(children, index)
            continue
        if token.type in _MARKS or token.type in _CLOSES:
            if literal is None and token.markup[:1] == "_":
                literal = _literal_underscores(children)
            writer.mark(token, literal is not None and index in literal, bold)
        else:
            writer.leaf(token)
        index += 1
    return writer.finish()


def plain_text(children: Sequence[Token]) -> str:
    """The words of inline tokens without marks (a link label, an image's alt)."""
    out: list[str] = []
    for token in children:
        if token.type in ("text", "text_special", "code_inline"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif token.type == "image" or (token.type == "html_inline" and not _comment(token)):
            out.append(token.content)
    return "".join(out)


def _comment(token: Token) -> bool:
    return token.content.startswith("<!--")


class _Writer:
    """Accumulates plain text, flushing it escaped (and its URLs atomic)."""

    def __init__(self, shorten: bool) -> None:
        self.out = RunBuilder()
        self.buffer: list[str] = []
        self.shorten = shorten

    def finish(self) -> Run:
        self.flush()
        return self.out.build()

    def flush(self) -> None:
        if not self.buffer:
            return
        raw = "".join(self.buffer)
        self.buffer.clear()
        if "://" not in raw:
            self.prose(raw)
            return
        pos = 0
        for match in _BARE_URL.finditer(raw):
            self.prose(raw[pos : match.start()])
            self.out.atom(escape(match.group(0)))
            pos = match.end()
        self.prose(raw[pos:])

    def prose(self, raw: str) -> None:
        if self.shorten and "/" in raw:
            short = shorten_paths(raw)
            self.out.replaced |= short != raw
            raw = short
        self.out.text(escape(raw))

    def leaf(self, token: Token) -> None:
        kind = token.type
        if kind in ("text", "text_special"):
            self.buffer.append(token.content)
        elif kind == "softbreak":
            self.buffer.append(" ")
        elif kind == "hardbreak":
            self.buffer.append("\n")
        elif kind == "code_inline":
            self.flush()
            self.out.atom(f"`{escape(token.content)}`")
        elif kind == "image":
            self.image(token)
        elif kind == "html_inline" and not _comment(token):
            self.buffer.append(token.content)  # drawn as the text it is (escaped)

    def mark(self, token: Token, literal: bool, bold: bool) -> None:
        if literal:
            self.buffer.append(token.markup)
        elif token.type.startswith("strong") and bold:
            return
        else:
            self.flush()
            if token.type in _CLOSES:
                self.out.closing()
            else:
                self.out.opening(_MARKS[token.type])

    def image(self, token: Token) -> None:
        src = token.attrs.get("src", "")
        if isinstance(src, str) and is_absolute(src):
            self.flush()
            alt = escape(" ".join(token.content.split()))
            self.out.atom(f"<{safe_url(src)}|{alt}>" if alt else f"<{safe_url(src)}>")
        else:
            self.buffer.append(token.content)

    def link(self, children: Sequence[Token], index: int) -> int:
        """Draw the link opening at ``index``; return the index after it."""
        href = children[index].attrs.get("href", "")
        if not (isinstance(href, str) and is_absolute(href)):
            # A relative link cannot be opened from Slack: its words are drawn,
            # and its closing token is passed over like any unknown one.
            return index + 1
        close = index + 1
        while close < len(children) and children[close].type != "link_close":
            close += 1
        self.flush()
        label = escape(" ".join(plain_text(children[index + 1 : close]).split()))
        url = safe_url(href)
        bare = not label or (children[index].markup == "autolink" and label == escape(href))
        drawn = f"<{url}>" if bare else f"<{url}|{label}>"
        self.out.atom(drawn)
        return close + 1


def _literal_underscores(children: Sequence[Token]) -> set[int]:
    """Indexes of ``_``/``__`` marks that are a file name's, not emphasis:
    ``__init__.py`` — the closing mark followed by a suffix — is drawn as written
    (GitHub draws it bold, the author never meant that)."""
    literal: set[int] = set()
    stack: list[int] = []
    for index, token in enumerate(children):
        if token.type in _MARKS:
            stack.append(index)
        elif token.type in _CLOSES and stack:
            opening = stack.pop()
            if children[opening].markup[:1] == "_" and _suffix_follows(children, index):
                literal.update((opening, index))
    return literal


def _suffix_follows(children: Sequence[Token], closing: int) -> bool:
    after = children[closing + 1] if closing + 1 < len(children) else None
    return after is not None and after.type == "text" and bool(_FILE_SUFFIX.match(after.content))
