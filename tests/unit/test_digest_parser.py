"""The parser the digest runs is markdown-it's: what the block and inline
dispatchers, the string-method line markers, the inline fast path, the table
splitter, the lazy windows and the ask's scans change is how fast it runs, never
what it produces."""

from __future__ import annotations

import importlib
import re
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin
from test_digest_properties import markdown_texts

from looproom.digest._ask import (
    ReplyScan,
    may_ask,
    may_reply,
    next_question,
    next_reply,
    next_risky,
)
from looproom.digest._lazy import LazyBlocks
from looproom.digest._parser import (
    MD,
    _token,
    new_state,
    normalise,
    parse_blocks,
    parse_inline,
)

_STOCK = (
    MarkdownIt("commonmark", {"tasklists": True})
    .enable(["table", "strikethrough"])
    .use(front_matter_plugin)
)
_SPLIT = importlib.import_module("markdown_it.rules_block.table").escapedSplit
_MARKERS = ("bMarks", "eMarks", "tShift", "sCount", "bsCount", "lineMax")


def _shape(tokens: list) -> list[tuple]:
    return [
        (t.type, t.tag, t.nesting, t.level, t.content, t.markup, t.info, t.meta, t.hidden, t.map,
         t.attrs, t.block)
        for t in tokens
    ]  # fmt: skip


def _stock_blocks(src: str) -> list:
    tokens: list = []
    _STOCK.block.parse(src, _STOCK, {}, tokens)
    return tokens


def _lazy_blocks(src: str, window: int) -> list:
    blocks = LazyBlocks(src, window)
    blocks.finish()
    return [token for block in blocks.blocks for token in block.tokens]


def _rows_only(tokens: list) -> list:
    """``tokens`` without the tokens of table cells, which the digest's reading
    leaves out (it draws a table as its row count)."""
    kept, cell = [], False
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            cell = True
        elif token.type in ("th_close", "td_close"):
            cell = False
        elif not cell:
            kept.append(token)
    return kept


def _whole_blocks(src: str) -> list:
    """The blocks as the digest's reading sees them (``_rows_only``), read whole."""
    return [s[:9] for s in _shape(_rows_only(parse_blocks(src, {})))]


def _same_blocks(src: str) -> None:
    src = normalise(src)
    assert _shape(parse_blocks(src, {})) == _shape(_stock_blocks(src))


@settings(max_examples=120, deadline=None)
@given(text=markdown_texts())
def test_the_dispatcher_makes_markdown_its_block_tokens(text: str) -> None:
    _same_blocks(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=" \t\n-*_x>", max_size=40))
def test_the_dispatcher_tells_rules_from_list_items_as_markdown_it_does(text: str) -> None:
    _same_blocks(text)  # ``- - -`` is a rule, ``- x`` an item, ``-- -`` a rule too


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=" \t\n-=#>*+_`~|:1.)[]x<!", max_size=60))
def test_the_dispatcher_on_markup_soup(text: str) -> None:
    _same_blocks(text)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=" \t\n-=a>1.", max_size=40))
def test_the_setext_check_passes_every_underline(text: str) -> None:
    # Underlines and near-misses at every indentation, in lists and quotes.
    _same_blocks(text)


_CELLS = st.sampled_from(["-", "--", " - ", ":-", "-:", " :-: ", "\t-", "- ", "-\t", " a", ""])


@settings(max_examples=300, deadline=None)
@given(
    columns=st.integers(1, 3),
    cells=st.lists(_CELLS, min_size=1, max_size=3),
    edges=st.sampled_from(["", "|", " |"]),
    rest=st.text(alphabet="a|-\n", max_size=12),
)
def test_the_table_check_passes_every_delimiter_row(
    columns: int, cells: list[str], edges: str, rest: str
) -> None:
    # Delimiter rows spaced, tabbed, aligned and near-misses, under a header.
    head, row = "|".join(["a"] * columns), edges + "|".join(cells) + edges.strip()
    _same_blocks(f"{head}\n{row}\n{rest}")
    _same_blocks(f"- {head}\n  {row}\n{rest}")


def test_the_dispatcher_over_the_corpus(corpus_dir: Path) -> None:
    for path in sorted((corpus_dir / "the-loop-docs").glob("*.md"))[::2]:
        _same_blocks(path.read_text(encoding="utf-8"))


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=" \t\na-#", max_size=40))
def test_line_markers_are_markdown_its(text: str) -> None:
    stock, ours = StateBlock(text, MD, {}, []), new_state(text, {})
    for name in _MARKERS:
        assert getattr(ours, name) == getattr(stock, name), name


@settings(max_examples=500, deadline=None)
@given(text=st.text(max_size=40) | st.text(alphabet="ab-:@#$%^{}()=+.,", max_size=40))
def test_the_inline_fast_path_is_markdown_its(text: str) -> None:
    ours = [(t.type, t.content) for t in parse_inline(text, {})]
    stock = [(t.type, t.content) for t in _STOCK.inline.parse(text, _STOCK, {}, [])]
    assert ours == stock


@settings(max_examples=200, deadline=None)
@given(
    kind=st.text(max_size=12),
    tag=st.sampled_from(["", "p", "ul", "code"]),
    nesting=st.sampled_from([-1, 0, 1]),
    level=st.integers(0, 30),
    block=st.booleans(),
)
def test_the_token_factory_makes_markdown_its_token(
    kind: str, tag: str, nesting: int, level: int, block: bool
) -> None:
    stock = Token(kind, tag, nesting)  # type: ignore[arg-type]
    stock.level, stock.block = level, block
    ours = _token(kind, tag, nesting, level, block)
    assert type(ours) is Token
    assert [getattr(ours, f.name) for f in fields(Token)] == [
        getattr(stock, f.name) for f in fields(Token)
    ]
    # Fresh containers each time: a rule that fills one token's attrs or meta
    # must not fill another's.
    assert ours.attrs is not _token(kind, tag, nesting, level, block).attrs
    assert ours.meta is not _token(kind, tag, nesting, level, block).meta


@settings(max_examples=500, deadline=None)
@given(
    text=st.text(alphabet=" \t\na>-", max_size=40),
    span=st.tuples(st.integers(0, 12), st.integers(0, 12)),
    indent=st.integers(0, 6),
    keep=st.booleans(),
)
def test_lines_are_cut_as_markdown_it_cuts_them(
    text: str, span: tuple[int, int], indent: int, keep: bool
) -> None:
    stock, ours = StateBlock(text, MD, {}, []), new_state(text, {})
    begin, end = min(span[0], stock.lineMax), min(span[1], stock.lineMax)
    assert ours.getLines(begin, end, indent, keep) == stock.getLines(begin, end, indent, keep)


@settings(max_examples=500, deadline=None)
@given(row=st.text(alphabet="ab|\\ ", max_size=16))
def test_the_table_splitter_is_markdown_its(row: str) -> None:
    table = importlib.import_module("looproom.digest._parser")._split_cells
    assert table(row) == _SPLIT(row)


@settings(max_examples=100, deadline=None)
@given(text=markdown_texts(), window=st.sampled_from([1, 40, 300]))
def test_lazy_windows_make_the_same_blocks(text: str, window: int) -> None:
    src = normalise(text)
    lazy = [s[:9] for s in _shape(_lazy_blocks(src, window))]  # maps are per window
    assert lazy == _whole_blocks(src)


@pytest.mark.parametrize("window", [300])
def test_lazy_windows_over_the_corpus(corpus_dir: Path, window: int) -> None:
    for path in sorted((corpus_dir / "the-loop-docs").glob("*.md"))[::3]:
        src = normalise(path.read_text(encoding="utf-8"))
        lazy = [s[:9] for s in _shape(_lazy_blocks(src, window))]
        assert lazy == _whole_blocks(src), path.name


def test_a_partial_list_holds_the_items_of_the_whole_list() -> None:
    src = "".join(f"- item {n}\n  continued\n\n" for n in range(400))
    blocks = LazyBlocks(src, 300)
    partial = blocks.get(0, room=100)
    assert partial is not None and partial.partial
    whole = [s[:9] for s in _shape(parse_blocks(src, {}))]
    assert [s[:9] for s in _shape(partial.tokens)] == whole[: len(partial.tokens)]
    assert blocks.get(0) is not None and not blocks.get(0).partial


@settings(max_examples=200, deadline=None)
@given(text=markdown_texts(), room=st.integers(0, 400))
def test_a_list_read_for_some_room_holds_the_first_items_of_the_whole_list(
    text: str, room: int
) -> None:
    src = normalise(text)
    blocks = LazyBlocks(src, 4096)
    partial = blocks.get(0, room=room)
    whole = LazyBlocks(src, 4096).get(0)
    assert (partial is None) == (whole is None)
    if partial is not None and partial.partial:
        assert whole is not None
        assert partial.start == whole.start and partial.end < whole.end
        # The same items, words and numbers; only tightness (``hidden``) may differ.
        shape = [s[:8] for s in _shape(partial.tokens)]
        assert shape == [s[:8] for s in _shape(whole.tokens)][: len(shape)]
    elif partial is not None:
        assert _shape(partial.tokens) == _shape(whole.tokens)


def test_a_list_read_for_some_room_stops_short_of_its_end() -> None:
    src = "".join(f"- item {n}\n" for n in range(400)) + "\nAfter the list.\n"
    partial = LazyBlocks(src, 1 << 16).get(0, room=200)
    assert partial is not None and partial.partial
    items = sum(token.type == "list_item_open" for token in partial.tokens)
    assert 10 < items < 100  # about twice the room's worth of items, not 400


def test_the_digest_reads_a_table_for_its_rows_without_its_cells(corpus_dir: Path) -> None:
    tables = "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 |\n\n- | x |\n  |---|\n  | y |\n"
    docs = sorted(corpus_dir.glob("the-loop-docs/*.md"))
    texts = [tables, *(path.read_text(encoding="utf-8") for path in docs)]
    for text in texts:
        src = normalise(text)
        lazy = _lazy_blocks(src, len(src) + 1)
        assert _shape(lazy) == _shape(_rows_only(parse_blocks(src, {})))
    assert not any(t.type in ("td_open", "th_open") for t in _lazy_blocks(tables, 1000))


def test_the_one_deliberate_difference_text_past_the_nesting_limit_is_kept() -> None:
    src = "> " * 40 + "deep words"
    assert "deep words" not in str(_shape(_stock_blocks(src)))
    assert any(t.type == "deep_text" and "deep words" in t.content for t in parse_blocks(src, {}))


def _inline_shape(tokens: list) -> list[tuple]:
    return [
        (*s, _inline_shape(t.children or [])) for s, t in zip(_shape(tokens), tokens, strict=True)
    ]


def _same_inline(src: str, env: dict | None = None) -> None:
    ours = parse_inline(src, dict(env or {}))
    stock = _STOCK.inline.parse(src, _STOCK, dict(env or {}), [])
    assert _inline_shape(ours) == _inline_shape(stock)


_INLINE_SOUP = " \n*_`~[]()!<>&;#\\:-=|/.ahx\u00a0"


@settings(max_examples=500, deadline=None)
@given(text=st.text(alphabet=_INLINE_SOUP, max_size=60))
def test_the_inline_dispatcher_makes_markdown_its_tokens_on_markup_soup(text: str) -> None:
    _same_inline(text, {"references": {"A": {"href": "https://e.com", "title": ""}}})


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=_INLINE_SOUP.translate({ord(c): None for c in "*_~"}), max_size=60))
def test_without_delimiters_the_skipped_post_processing_changes_nothing(text: str) -> None:
    # No `*`, `_` or `~`: the parser skips markdown-it's pairing and joining.
    _same_inline(text, {"references": {"A": {"href": "https://e.com", "title": ""}}})


@settings(max_examples=100, deadline=None)
@given(text=markdown_texts())
def test_the_inline_dispatcher_makes_markdown_its_tokens(text: str) -> None:
    _same_inline(normalise(text))


def test_the_inline_dispatcher_over_the_corpus(corpus_dir: Path) -> None:
    for path in sorted((corpus_dir / "the-loop-docs").glob("*.md"))[1::4]:
        env: dict = {}
        src = normalise(path.read_text(encoding="utf-8"))
        for token in _stock_blocks_env(src, env):
            if token.type == "inline":
                _same_inline(token.content, env)


def _stock_blocks_env(src: str, env: dict) -> list:
    tokens: list = []
    _STOCK.block.parse(src, _STOCK, env, tokens)
    return tokens


# The ask's scans, made faster, find what their plain patterns find.
_PLAIN_QUESTION = re.compile(r"\?(?![0-9A-Za-z=/%#])|&(?:#0*63|#[xX]0*3[fF]|quest);")
_PLAIN_REPLY = re.compile(r"reply", re.IGNORECASE)
_PLAIN_RISKY = re.compile(r"^[ \t]*(?:```|~~~|<)", re.MULTILINE)
_ASK_SOUP = st.text(
    alphabet="?&#x3fFquest;063 \t\n`~<aA=rReEpPlLyYéİ—\u212a\U0001f600", max_size=80
)


def _plain_next_reply(src: str, pos: int) -> int:
    for match in _PLAIN_REPLY.finditer(src, pos):
        start = src.rfind("\n\n", 0, match.start()) + 1
        end = src.find("\n\n", match.end())
        if "`" in src[start : len(src) if end < 0 else end]:
            return match.start()
    return -1


def _found(pattern: re.Pattern[str], src: str, pos: int) -> int:
    match = pattern.search(src, pos)
    return match.start() if match else -1


@settings(max_examples=500, deadline=None)
@given(src=_ASK_SOUP, at=st.integers(0, 80))
def test_the_ask_scans_find_what_the_plain_patterns_find(src: str, at: int) -> None:
    pos = min(at, len(src))
    line = src.rfind("\n", 0, pos) + 1  # next_risky is asked at line starts
    assert next_question(src, pos) == _found(_PLAIN_QUESTION, src, pos)
    assert next_risky(src, line) == _found(_PLAIN_RISKY, src, line)
    assert next_reply(src, pos) == _plain_next_reply(src, pos)
    scan, order = ReplyScan(), (pos, 0, pos)  # one document, asked again and again
    assert [scan(src, at) for at in order] == [_plain_next_reply(src, at) for at in order]
    assert may_ask(src) == bool(_PLAIN_QUESTION.search(src))
    assert may_reply(src) == ("`" in src and bool(_PLAIN_REPLY.search(src)))
