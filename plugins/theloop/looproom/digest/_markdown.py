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

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

__all__ = ["MAX_NESTING", "normalise", "parse_blocks", "parse_inline"]


def _parser(front_matter: bool = False) -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return md.use(front_matter_plugin) if front_matter else md


#: The block parser for text that starts a document, where front matter may be.
_AT_START = _parser(front_matter=True).disable("inline")
#: The block parser for text that starts further on: a later ``---`` line is a rule.
_FURTHER_ON = _parser().disable("inline")
_INLINE = _parser()

#: markdown-it stops nesting blocks at this depth and drops what is deeper
#: (``_blocks.dropped`` gets those words back).
MAX_NESTING: int = _AT_START.options["maxNesting"]


def parse_blocks(src: str, env: dict, at_start: bool = True) -> list[Token]:
    """The block tokens of ``src``; their ``inline`` tokens have no children yet.
    Reference definitions go into ``env``."""
    return (_AT_START if at_start else _FURTHER_ON).parse(src, env)


def parse_inline(content: str, env: dict) -> list[Token]:
    """The inline tokens of one block's content, links resolved against ``env``."""
    if not content:
        return []
    return _INLINE.parseInline(content, env)[0].children or []


def normalise(text: str) -> str:
    """markdown-it's own normalisation — line ends to ``\\n``, NUL to U+FFFD —
    done first, so offsets into the text are offsets into what it parses."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\0", "\ufffd") if "\0" in text else text
