"""The configured markdown-it parsers, used through their public API only.

CommonMark plus GFM tables and strikethrough, and front matter (mdit-py-plugins)
at the start of a document. Blocks are parsed with markdown-it's core ``inline``
rule disabled: the digest shows a small part of a document, so it parses the
inline content of only the blocks it draws or searches for the ask, each on
its own with :func:`parse_inline` and the document's ``env`` (so reference
definitions apply). Task boxes are read off the tokens by the drawing
(``_blocks.task_box``), the same on every markdown-it release.
"""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from ._lines import LinePattern

__all__ = ["MAX_NESTING", "normalise", "parse_blocks", "parse_inline"]


def _parser(front_matter: bool = False) -> MarkdownIt:
    # Its core ``normalize`` rule rewrites every line end with a regular
    # expression on every parse; ``normalise`` below does the same, and only
    # when the text has something to change.
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("normalize")
    return md.use(front_matter_plugin) if front_matter else md


_INLINE = _parser()

#: markdown-it stops nesting blocks at this depth and drops what is deeper
#: (``_blocks.dropped`` gets those words back).
MAX_NESTING: int = _INLINE.options["maxNesting"]

#: A line that could underline a setext heading, or be a table's delimiter row,
#: in any container (quote marks and indentation before it).
_MAY_UNDERLINE = LinePattern(r"[ \t>]*(?:=+|-+)[ \t]*$")
_MAY_DELIMITER = LinePattern(r"[ \t>]*[|:-][-:| \t>]*$")

#: What may stand on a line before a block that starts on it: indentation, quote
#: marks and list markers, any number of each (more lines match than need to,
#: never fewer). Each pattern below tries a line in time linear in its length.
_OPENING = r"[ \t>*+\-0-9.)]*"
_MAY_FENCE = LinePattern(_OPENING + "(?:```|~~~)")
_MAY_QUOTE = LinePattern(_OPENING + ">")
_MAY_REFERENCE = LinePattern(_OPENING + r"\[")
_MAY_HTML = LinePattern(_OPENING + "<")
_MAY_HEADING = LinePattern(_OPENING + "#")
#: A thematic break's line holds only its marks, spaces and what opens the line
#: (checked first: most lines fail at their first character).
_MAY_RULE = LinePattern(r"(?=[ \t>*+\-0-9.)_]*$)[^-*_\n]*[-*_]")

#: Block rules that match only where the source holds a certain mark, at the
#: start of a line for most. A rule that cannot start a block cannot end a
#: paragraph either, so parsing a source with such a rule off yields the same
#: tokens — for less work: each rule is tried at every line, and a setext
#: heading's rule rescans every paragraph. (A plain search for the mark goes
#: first: it is much the cheaper, and a mark found nowhere is found at no line.)
_NEEDS: dict[str, Callable[[str], object]] = {
    "front_matter": lambda src: src.startswith("---"),
    "table": lambda src: "|" in src and _MAY_DELIMITER.search(src),
    "fence": lambda src: ("```" in src or "~~~" in src) and _MAY_FENCE.search(src),
    "blockquote": lambda src: ">" in src and _MAY_QUOTE.search(src),
    "reference": lambda src: "]:" in src and _MAY_REFERENCE.search(src),
    "html_block": lambda src: "<" in src and _MAY_HTML.search(src),
    "heading": lambda src: "#" in src and _MAY_HEADING.search(src),
    "lheading": lambda src: _MAY_UNDERLINE.search(src),
    "hr": lambda src: _MAY_RULE.search(src),
}

#: Block parsers by the rules they leave off, built when first needed (at most
#: one for each subset of ``_NEEDS``; a few in practice).
_BLOCK_PARSERS: dict[tuple[str, ...], MarkdownIt] = {}


def _block_parser(off: tuple[str, ...]) -> MarkdownIt:
    parser = _BLOCK_PARSERS.get(off)
    if parser is None:
        parser = _parser(front_matter="front_matter" not in off)
        parser.disable(["inline", *(name for name in off if name != "front_matter")])
        _BLOCK_PARSERS[off] = parser
    return parser


def parse_blocks(src: str, env: dict, at_start: bool = True) -> list[Token]:
    """The block tokens of ``src``; their ``inline`` tokens have no children yet.
    Reference definitions go into ``env``. Front matter is read only ``at_start``
    of a document: further on, a ``---`` line is a rule."""
    src = normalise(src)
    off = tuple(
        name
        for name, needed in _NEEDS.items()
        if not needed(src) or (name == "front_matter" and not at_start)
    )
    return _block_parser(off).parse(src, env)


def parse_inline(content: str, env: dict) -> list[Token]:
    """The inline tokens of one block's content, links resolved against ``env``."""
    if not content:
        return []
    return _INLINE.parseInline(normalise(content), env)[0].children or []


def normalise(text: str) -> str:
    """markdown-it's own normalisation — line ends to ``\\n``, NUL to U+FFFD —
    done first, so offsets into the text are offsets into what it parses."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\0", "\ufffd") if "\0" in text else text
