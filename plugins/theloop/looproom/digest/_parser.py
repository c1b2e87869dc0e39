"""The one configured markdown-it parser, and what makes it run faster.

Markdown is parsed with markdown-it-py — CommonMark plus GFM tables, strikethrough
and task lists (the option mdit-py-plugins' ``gfm_plugin`` turns on), and the
front-matter plugin — created once at import (§3.4).

What changes is how it *runs*, never what it produces — each pinned token for
token against stock markdown-it by ``test_digest_parser.py``; together they take
about a third off the block parse, the digest's main cost:

* **Dispatch by first character.** markdown-it tries every block rule on every
  line, in order, and most give up on the line's first character (a fence needs
  a backtick or a tilde, a heading a ``#`` …). The dispatcher calls only the rules
  that character can start — the same rules, in the same order — the setext
  rule only where an underline may follow, and the rule for ``---`` only on a
  line that is one (not on every ``- item``).
* **Line markers by string methods**, not a loop over every indentation
  character; and lines cut for a block's content by slicing where no tab can
  widen an indent.
* **Table cells split by string methods**: the table rule is markdown-it's own function,
  given a splitter equal to its character loop.
* **Plain inline content is one text token**, without a parser call; in other
  content a run of characters no inline rule starts at is taken whole, and the
  pairing of emphasis delimiters is skipped where the parse recorded none.
* **Tokens made directly**: every field set as markdown-it's ``Token`` sets it,
  without its dataclass ``__init__``; and its block rules' debug logging (off,
  but a call per rule per line) is not called.

And two deliberate differences. **Too deep is text, not nothing.** Past
``maxNesting`` markdown-it drops the rest of the container silently; here the rest
is kept as one ``deep_text`` token, drawn as escaped text, so a 500-deep quote
loses no word (R4.1, A1). **The digest reads tables without cells**
(``new_state(cells=False)``): it draws a table as its row count, so the tokens of
its cells are never made — the table and its rows are markdown-it's, pinned too.
"""

from __future__ import annotations

import importlib
import logging
import re
import types
from collections.abc import Callable
from itertools import accumulate
from operator import add, sub
from typing import Literal

from markdown_it import MarkdownIt
from markdown_it.parser_block import ParserBlock
from markdown_it.parser_inline import ParserInline
from markdown_it.parser_inline import RuleFuncInlineType as InlineRule
from markdown_it.ruler import Ruler
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

__all__ = ["MD", "new_state", "normalise", "parse_blocks", "parse_inline", "top_rule"]

BlockRule = Callable[[StateBlock, int, int, bool], bool]

#: The characters a rule's first check accepts at the line's first non-space
#: position. Rules not named here are tried on every line.
_STARTS = {
    "fence": "`~",
    "blockquote": ">",
    "hr": "*-_",
    "list": "*-+0123456789",
    "reference": "[",
    "html_block": "<",
    "heading": "#",
}
#: Rules whose first check looks somewhere else than the line's first character.
_SPECIAL = ("front_matter", "table", "code")
#: The table rule's first check of its second line: ``|``, ``-`` or ``:``, then
#: at least one more of those or a space or tab, and no other character — but
#: not ``-`` and a space (a list item).
_DELIMITER_ROW = re.compile(r"(?!-[ \t])[-:|][-:| \t]+")
_DELIMITER_FIRST = frozenset("-:|")
#: The line a thematic break (the ``hr`` rule) needs: three of one marker, and
#: spaces or tabs only. A list item's ``- `` opens like one, and is told apart
#: here at a fraction of the rule's cost.
_RULE_LINE = re.compile(r"([-*_])(?:[ \t]*\1){2,}[ \t]*")
#: How many lines the setext check reads before it lets the rule decide.
_SETEXT_LOOK = 16
#: The characters each inline rule's first check accepts (``text`` takes every
#: character but markdown-it's terminators; rules not named here are tried on
#: every terminator).
_INLINE_STARTS = {
    "newline": "\n",
    "escape": "\\",
    "backticks": "`",
    "strikethrough": "~",
    "emphasis": "*_",
    "link": "[",
    "image": "!",
    "autolink": "<",
    "html_inline": "<",
    "entity": "&",
}
#: The characters an enabled inline rule but ``text`` starts at (newline, escape,
#: backticks, strikethrough, emphasis, link, image, autolink and HTML, entity).
#: A run of the others markdown-it adds to the pending text in pieces (the text
#: rule's, and one character for each terminator no rule takes, such as ``:``
#: or ``-``); here in one.
_MARKUP = frozenset("".join(_INLINE_STARTS.values()))
_INLINE_MARKUP = re.compile(f"[{re.escape(''.join(sorted(_MARKUP)))}]")


def _starting(rules: list[tuple[str, BlockRule]], first: str) -> list[BlockRule]:
    """The rules, in order, whose first check a line opening with ``first`` passes."""
    return [fn for name, fn in rules if name not in _STARTS or (first and first in _STARTS[name])]


class _Chain:
    """One rule chain (the block chain or a terminator chain), callable as one rule.

    Each branch below mirrors the first check of the rule it guards, so a rule
    is skipped only where it would have returned ``False`` at once.
    """

    def __init__(self, rules: list[tuple[str, BlockRule]]) -> None:
        named = dict(rules)
        self.front = named.get("front_matter")
        self.table = named.get("table")
        self.code = named.get("code")
        self.setext = named.get("lheading")
        rest = [(name, fn) for name, fn in rules if name not in _SPECIAL]
        chars = [*{c for starts in _STARTS.values() for c in starts}, ""]
        # Per first character, the rules it can start: those before the setext
        # rule, and those after it (it is tried between them only where its own
        # condition may hold — which most lines, opening a list item or a
        # heading, never get as far as asking).
        cut = [name for name, _ in rest].index("lheading") if self.setext else len(rest)
        self.before = {c: _starting(rest[:cut], c) for c in chars}
        self.after = {c: _starting(rest[cut + 1 :], c) for c in chars}
        # …and for a line that opens like a rule but is none: without the rule.
        unruled = [(name, fn) for name, fn in rest[:cut] if name != "hr"]
        self.unruled = {c: _starting(unruled, c) for c in _STARTS["hr"]}

    def __call__(self, state: StateBlock, line: int, end: int, silent: bool) -> bool:
        # Called for every line a paragraph runs over (as its terminator check):
        # the checks below are inlined, not method calls.
        if line == 0 and self.front and self._try_front(state, line, end, silent):
            return True
        table, code, src = self.table, self.code, state.src
        if table is not None and line + 2 <= end:
            # The table rule's own first checks: a second line that can be a
            # delimiter row.
            pos = state.bMarks[line + 1] + state.tShift[line + 1]
            if (
                src[pos : pos + 1] in _DELIMITER_FIRST
                and _DELIMITER_ROW.fullmatch(src, pos, state.eMarks[line + 1])
                and table(state, line, end, silent)
            ):
                return True
        # StateBlock.is_code_block: the code rule is enabled (it is in this chain).
        if (
            code is not None
            and state.sCount[line] - state.blkIndent >= 4
            and code(state, line, end, silent)
        ):
            return True
        pos = state.bMarks[line] + state.tShift[line]
        first = src[pos] if pos < len(src) else ""
        if first not in self.before:
            first = ""
        rules = self.before[first]
        if first in self.unruled and not _RULE_LINE.fullmatch(src, pos, state.eMarks[line]):
            rules = self.unruled[first]
        for rule in rules:
            if rule(state, line, end, silent):
                return True
        setext = self.setext
        if (
            setext is not None
            and _underline_may_follow(state, line, end)
            and setext(state, line, end, silent)
        ):
            return True
        for rule in self.after[first]:  # noqa: SIM110 — a loop: no generator per line
            if rule(state, line, end, silent):
                return True
        return False

    def _try_front(self, state: StateBlock, line: int, end: int, silent: bool) -> bool:
        # Front matter belongs to the document's first line only; a later window
        # of the lazy parser starts at its own line 0 and says so.
        if not getattr(state, "doc_start", True):
            return False
        assert self.front is not None
        return self.front(state, line, end, silent)


def _underline_may_follow(state: StateBlock, line: int, end: int) -> bool:
    """The setext rule's own condition: a line of its stretch (up to a blank line)
    that is an underline (``===``, ``---``). Without one it returns ``False`` — after asking
    every terminator rule of every line, which is what this spares. Past
    ``_SETEXT_LOOK`` lines it answers "maybe": the check stays constant-time, so
    a document of a million unbroken lines costs what markdown-it makes it cost
    (A1)."""
    src, begins, shifts, ends = state.src, state.bMarks, state.tShift, state.eMarks
    counts, indent = state.sCount, state.blkIndent
    for number in range(line + 1, min(end, line + 1 + _SETEXT_LOOK)):
        pos = begins[number] + shifts[number]
        if pos >= ends[number]:
            return False
        marker = src[pos]
        # An underline, as the rule reads one: indented 0-3 past the block, one
        # marker repeated, then spaces or tabs to the line's end.
        if (
            marker in "=-"
            and indent <= counts[number] <= indent + 3
            and not src[pos : ends[number]].rstrip(" \t").lstrip(marker)
        ):
            return True
    return line + 1 + _SETEXT_LOOK < end


class _DispatchRuler(Ruler[BlockRule]):
    """markdown-it's block ruler, answering each chain with one dispatcher."""

    def __init__(self, base: Ruler[BlockRule]) -> None:
        super().__init__()
        self.__rules__ = base.__rules__
        self._chains: dict[str, list[BlockRule]] = {}

    def getRules(self, chainName: str = "") -> list[BlockRule]:
        chain = self._chains.get(chainName)
        if chain is None:
            rules = [
                (rule.name, rule.fn)
                for rule in self.__rules__
                if rule.enabled and (not chainName or chainName in rule.alt)
            ]
            chain = self._chains[chainName] = [_Chain(rules)] if rules else []
        return chain


class _DispatchBlock(ParserBlock):
    """markdown-it's block tokenizer loop, calling the dispatcher."""

    def __init__(self, base: ParserBlock) -> None:
        self.ruler = _DispatchRuler(base.ruler)

    def tokenize(self, state: StateBlock, startLine: int, endLine: int) -> None:
        rule = self.ruler.getRules("")[0]
        line = startLine
        has_empty_lines = False
        while line < endLine:
            state.line = line = state.skipEmptyLines(line)
            if line >= endLine or state.sCount[line] < state.blkIndent:
                break
            if state.level >= state.md.options.maxNesting:
                _keep_deep_text(state, line, endLine)
                break
            if not rule(state, line, endLine, False) or state.line <= line:
                raise RuntimeError("no block rule advanced the line")
            state.tight = not has_empty_lines
            line = state.line
            if (line - 1) < endLine and state.isEmpty(line - 1):
                has_empty_lines = True
            if line < endLine and state.isEmpty(line):
                has_empty_lines = True
                line += 1
                state.line = line


class _InlineChain:
    """The inline rule chain as one rule: at a character, only the rules whose
    first check it passes, in their order. markdown-it tries all eleven at every
    terminator (``:``, ``-``, ``*`` …), and most give up on the character."""

    def __init__(self, md: MarkdownIt, rules: list[tuple[str, InlineRule]]) -> None:
        self.md = md
        self.rules = rules
        self.text = rules[0][1]
        self.by_char: dict[str, list[InlineRule]] = {}

    def __call__(self, state: StateInline, silent: bool) -> bool:
        char = state.src[state.pos]
        rules = self.by_char.get(char)
        if rules is None:
            rules = self.by_char[char] = self._rules_for(char)
        for rule in rules:  # noqa: SIM110 — a loop, not any(): no generator per character
            if rule(state, silent):
                return True
        return False

    def _rules_for(self, char: str) -> list[InlineRule]:
        if not self.md.inline.terminator_re.match(char):
            return [self.text]  # the text rule takes it, whatever follows
        return [
            fn
            for name, fn in self.rules[1:]
            if name not in _INLINE_STARTS or char in _INLINE_STARTS[name]
        ]


class _InlineDispatchRuler(Ruler[InlineRule]):
    """markdown-it's inline ruler, answering the main chain with one dispatcher
    (the parser's ``tokenize`` and ``skipToken`` both ask it)."""

    def __init__(self, md: MarkdownIt, base: Ruler[InlineRule]) -> None:
        super().__init__()
        self.__rules__ = base.__rules__
        rules = [(rule.name, rule.fn) for rule in self.__rules__ if rule.enabled]
        if not rules or rules[0][0] != "text":
            raise RuntimeError("the inline dispatcher expects markdown-it's text rule first")
        self._chain: list[InlineRule] = [_InlineChain(md, rules)]
        self._base = base

    def getRules(self, chainName: str = "") -> list[InlineRule]:
        return self._chain if not chainName else self._base.getRules(chainName)


_new_object = object.__new__


def _token(kind: str, tag: str, nesting: int, level: int, block: bool) -> Token:
    """``Token(kind, tag, nesting)`` with its level and ``block`` set — every
    field as the dataclass sets it, without its generated ``__init__`` and
    ``__post_init__`` (a token is made for every block and inline piece)."""
    # One statement a field: faster than unpacking tuples into them.
    token = _new_object(Token)
    token.type = kind
    token.tag = tag
    token.nesting = nesting
    token.attrs = {}
    token.map = None
    token.level = level
    token.children = None
    token.content = ""
    token.markup = ""
    token.info = ""
    token.meta = {}
    token.block = block
    token.hidden = False
    return token


#: A table's cell tokens. The digest draws a table as a pointer with its row
#: count (R3.1), so its reading makes none of them (``new_state(cells=False)``):
#: a third of the tokens of agent documents, which tabulate a lot.
_CELL_TOKENS = frozenset({"th_open", "th_close", "td_open", "td_close", "inline"})


class _BlockState(StateBlock):
    """markdown-it's block state, its ``push`` making tokens with ``_token`` and
    its ``getLines`` slicing lines whole where no tab can widen an indent.

    Without ``cells``, markdown-it's table rule decides where a table ends and
    which lines are its rows exactly as ever, but its cells' tokens go to a
    scratch token, not into the stream."""

    tabs = True  # the source may hold a tab (``new_state`` knows)
    cells = True
    scratch: Token | None = None

    def getLines(self, begin: int, end: int, indent: int, keepLastLF: bool) -> str:
        """markdown-it's ``getLines``: lines ``begin`` to ``end``, each without up to
        ``indent`` columns of its indentation. Without a tab every indentation
        character is one column, so a line is one slice (markdown-it walks it)."""
        if self.tabs or begin >= end:
            return super().getLines(begin, end, indent, keepLastLF)
        src, begins, ends, shifts = self.src, self.bMarks, self.eMarks, self.tShift
        last = end - 1
        stop = ends[last] + 1 if keepLastLF else ends[last]
        tail = src[begins[last] + min(indent, shifts[last]) : stop]
        if begin == last:
            return tail  # most paragraphs of agent lists: one line
        lines = [src[begins[n] + min(indent, shifts[n]) : ends[n] + 1] for n in range(begin, last)]
        lines.append(tail)
        return "".join(lines)

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        if self.parentType == "table" and not self.cells and ttype in _CELL_TOKENS:
            # The rule sets fields of what it is handed, never reads them back;
            # a cell opens and closes at one level, so skipping both keeps it.
            if self.scratch is None:
                self.scratch = _token(ttype, tag, nesting, self.level, True)
            return self.scratch
        if nesting < 0:
            self.level -= 1  # closing tag
        token = _token(ttype, tag, nesting, self.level, True)
        if nesting > 0:
            self.level += 1  # opening tag
        self.tokens.append(token)
        return token


class _InlineState(StateInline):
    """markdown-it's inline state, its ``push`` and ``pushPending`` making
    tokens with ``_token``."""

    def pushPending(self) -> Token:
        token = _token("text", "", 0, self.pendingLevel, False)
        token.content = self.pending
        self.tokens.append(token)
        self.pending = ""
        return token

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        if self.pending:
            self.pushPending()
        token_meta = None
        if nesting < 0:  # closing tag
            self.level -= 1
            self.delimiters = self._prev_delimiters.pop()
        token = _token(ttype, tag, nesting, self.level, False)
        if nesting > 0:  # opening tag
            self.level += 1
            self._prev_delimiters.append(self.delimiters)
            self.delimiters = []
            token_meta = {"delimiters": self.delimiters}
        self.pendingLevel = self.level
        self.tokens.append(token)
        self.tokens_meta.append(token_meta)
        return token


class _DispatchInline(ParserInline):
    """markdown-it's inline parser, its tokenizer taking plain runs whole."""

    def __init__(self, base: ParserInline) -> None:
        self.__dict__.update(base.__dict__)

    def tokenize(self, state: StateInline) -> None:
        """markdown-it's ``tokenize``, with a run of plain characters added to
        the pending text at once (the pieces it would have added, joined)."""
        rule = self.ruler.getRules("")[0]
        src, end = state.src, state.posMax
        max_nesting = state.md.options["maxNesting"]
        while state.pos < end:
            pos = state.pos
            if src[pos] not in _MARKUP:
                run = _INLINE_MARKUP.search(src, pos, end)
                state.pos = run.start() if run is not None else end
                state.append_pending(src[pos : state.pos])
                continue
            if state.level < max_nesting and rule(state, False):
                if state.pos <= pos:
                    raise RuntimeError("inline rule didn't increment state.pos")
                if state.pos >= end:
                    break
                continue
            state.append_pending(src[pos])
            state.pos += 1
        if state.pending:
            state.pushPending()


def _keep_deep_text(state: StateBlock, line: int, end: int) -> None:
    """The lines past the nesting limit, kept as text (markdown-it drops them)."""
    token = state.push("deep_text", "", 0)
    token.content = state.getLines(line, end, state.blkIndent, False)
    token.map = [line, end]
    state.line = end


_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _split_cells(row: str) -> list[str]:
    """markdown-it's ``escapedSplit``: cells at each ``|`` not after a backslash,
    ``\\|`` left as ``|``."""
    if "\\|" not in row:
        return row.split("|")  # every ``|`` splits
    return [cell.replace("\\|", "|") for cell in _UNESCAPED_PIPE.split(row)]


class _Quiet:
    """A rule module's logger without ``debug``: markdown-it's block rules log a
    debug line on every call (a call even with logging off); anything else
    they log goes to their own logger."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger

    def debug(self, *args: object, **kwargs: object) -> None:
        return None

    def __getattr__(self, name: str) -> object:
        return getattr(self._logger, name)


def _rebuilt(fn: BlockRule, **names: object) -> BlockRule:
    """``fn`` with its module's globals, ``names`` replacing some and its logger
    quiet (its code and defaults unchanged); a rule with a closure is left as it is."""
    if not isinstance(fn, types.FunctionType) or fn.__closure__ is not None:
        return fn
    scope = {**fn.__globals__, **names}
    if isinstance(scope.get("LOGGER"), logging.Logger):
        scope["LOGGER"] = _Quiet(scope["LOGGER"])
    return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__)


def _table_rule() -> BlockRule:
    """markdown-it's table rule, its globals but the splitter its own."""
    module = importlib.import_module("markdown_it.rules_block.table")
    return _rebuilt(module.table, escapedSplit=_split_cells)


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"tasklists": True})
    md.enable(["table", "strikethrough"])
    md.use(front_matter_plugin)
    for rule in md.block.ruler.__rules__:
        rule.fn = _table_rule() if rule.name == "table" else _rebuilt(rule.fn)
    md.block = _DispatchBlock(md.block)
    md.inline.ruler = _InlineDispatchRuler(md, md.inline.ruler)
    md.inline = _DispatchInline(md.inline)
    return md


#: The parser every function of the digest uses; configured once (performance).
MD = _make_parser()


def top_rule() -> BlockRule:
    """The dispatcher of the block chain, for a caller that drives the top level."""
    return MD.block.ruler.getRules("")[0]


def parse_blocks(src: str, env: dict) -> list[Token]:
    """Every block token of ``src`` (already normalised), definitions into ``env``."""
    if not src:
        return []
    state = new_state(src, env)
    MD.block.tokenize(state, state.line, state.lineMax)
    return state.tokens


def new_state(src: str, env: dict, cells: bool = True) -> StateBlock:
    """markdown-it's block state over ``src``, its line markers found with string
    methods — the markers markdown-it's per-character loop records (pinned by
    ``test_digest_parser.py``), at a fraction of the cost. ``cells=False``: tables
    without their cells' tokens (``_BlockState``)."""
    state = _BlockState("", MD, env, [])
    state.cells = cells
    state.tabs = "\t" in src
    state.src = src
    lines = src.split("\n")
    bodies = [line.lstrip(" \t") for line in lines]
    if not bodies[-1]:  # a last line of blanks only (or nothing): markdown-it records none
        lines.pop()
        bodies.pop()
    lengths = list(map(len, lines))
    shifts = list(map(sub, lengths, map(len, bodies)))
    begins = list(accumulate(map((1).__add__, lengths[:-1]), initial=0))[: len(lines)]
    counts = shifts
    if state.tabs:
        counts = [
            _columns(line, shift) if "\t" in line[:shift] else shift
            for line, shift in zip(lines, shifts, strict=True)
        ]
    length = len(src)
    state.bMarks = [*begins, length]
    state.eMarks = [*map(add, begins, lengths), length]
    state.tShift = [*shifts, 0]
    state.sCount = [*counts, 0]
    state.bsCount = [0] * (len(lines) + 1)
    state.lineMax = len(lines)
    return state


def _columns(line: str, indent: int) -> int:
    """The width of ``line``'s indentation, tabs to the next multiple of four."""
    offset = 0
    for char in line[:indent]:
        offset += 4 - offset % 4 if char == "\t" else 1
    return offset


def parse_inline(content: str, env: dict) -> list[Token]:
    """The inline tokens of one block's content, links resolved against ``env``.

    Content with no character an inline rule starts at is one text token — what
    markdown-it makes of it too, without its per-call set-up (list items such as
    ``brainstorm-approval`` are most of the calls)."""
    if _INLINE_MARKUP.search(content) is None:
        if not content:
            return []
        token = Token("text", "", 0)
        token.content = content
        return [token]
    # markdown-it's ``ParserInline.parse``, over the faster state.
    state = _InlineState(content, MD, env, [])
    MD.inline.tokenize(state)
    if _has_delimiters(state):
        for rule in MD.inline.ruler2.getRules(""):
            rule(state)
    return state.tokens


def _has_delimiters(state: StateInline) -> bool:
    """Whether the emphasis or strikethrough rule recorded a delimiter, at the top
    or inside a link. Without one the post-processing rules change nothing: they
    pair delimiters (none), and ``fragments_join`` merges text tokens that only
    delimiters leave adjacent and recomputes levels that only pairing changes.
    (A ``_`` inside a code span, as in ``snake_case``, records none.)"""
    return bool(state.delimiters) or any(meta and meta["delimiters"] for meta in state.tokens_meta)


def normalise(text: str) -> str:
    """markdown-it's own normalisation: line ends to ``\\n``, NUL to U+FFFD."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\0", "\ufffd") if "\0" in text else text
