"""Reading a document a window at a time gives the blocks of one whole parse.

The digest parses a long document only as far as it needs, in windows; every
block of a window but its last is taken as final. These pin that rule against
markdown-it's own parse of the whole text, and the bounds around it: front
matter longer than a window, reference definitions after the part read, the
work bound on dense markup.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin
from test_digest_properties import markdown_texts

from looproom.digest._document import WORK_FLOOR, Document
from looproom.digest._markdown import normalise, parse_blocks

_STOCK = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin)


def _shape(tokens: list, base: int = 0) -> list[tuple]:
    return [
        (t.type, t.tag, t.nesting, t.level, t.content, t.markup, t.info, t.meta, t.attrs,
         t.hidden, None if t.map is None else (base + t.map[0], base + t.map[1]))
        for t in tokens
    ]  # fmt: skip


def _read(src: str, window: int) -> tuple[list[tuple], dict]:
    doc = Document(src, window)
    doc.get(len(src) + 1)
    return [s for block in doc.blocks for s in _shape(block.tokens, block.base)], doc.env


def _stock(src: str) -> tuple[list[tuple], dict]:
    env: dict = {}
    return _shape(_STOCK.parse(src, env)), env


def _same(src: str, window: int) -> None:
    src = normalise(src)
    blocks, env = _read(src, window)
    stock, stock_env = _stock(src)
    assert blocks == stock
    assert _links(env) == _links(stock_env)


def _links(env: dict) -> dict:
    return {label: (ref["href"], ref["title"]) for label, ref in env.get("references", {}).items()}


@settings(max_examples=150, deadline=None)
@given(text=markdown_texts(), window=st.sampled_from([1, 7, 40, 300]))
def test_windows_make_the_blocks_of_one_parse(text: str, window: int) -> None:
    _same(text, window)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=" \t\n-=#>*+_`~|:1.)[]x<!", max_size=80),
    window=st.sampled_from([1, 5, 20]),
)
def test_windows_on_markup_soup(text: str, window: int) -> None:
    _same(text, window)


def test_front_matter_longer_than_a_window_is_front_matter() -> None:
    src = "---\n" + "key: value\n" * 400 + "---\n\n# Title\n\nText."
    blocks, _ = _read(src, 16)
    assert blocks[0][0] == "front_matter"
    assert blocks == _stock(src)[0]


def test_a_rule_further_on_is_never_front_matter() -> None:
    src = "Text.\n\n" * 50 + "---\nnot: front matter\n---\n"
    assert _read(src, 16)[0] == _stock(src)[0]


def test_references_defined_after_the_part_read_are_completed() -> None:
    src = "See [the docs][d].\n\n" + "Filler paragraph.\n\n" * 500 + "[ D ]: https://e.com/d\n"
    doc = Document(src, 64)
    doc.get(0)
    assert "D" not in doc.env.get("references", {})
    doc.complete_references("See [the docs][d].")
    assert doc.env["references"]["D"]["href"] == "https://e.com/d"


def test_the_rest_is_parsed_for_references_only_when_it_may_define_a_label_used() -> None:
    src = "See [a] and [b].\n\n" + "[c]: https://e.com/c\n" * 2000
    doc = Document(src, 64)
    doc.get(0)
    doc.complete_references("See [a] and [b].")
    assert not doc.done  # no label of the content is defined further on
    doc.complete_references("See [C].")
    assert doc.done and doc.env["references"]["C"]["href"] == "https://e.com/c"


def test_dense_markup_is_read_only_as_far_as_the_work_bound() -> None:
    # One list: four units of work a character, far past the bound of half a unit a
    # character at any length, so a length the whole reading parses quickly does.
    src = "- a\n" * 10_000
    lazy, whole = Document(src, 3000), Document(src, 3000, whole=True)
    assert lazy.get(0) is None and whole.get(0) is None
    assert lazy.capped and whole.capped
    # The lazy reading stopped well before the end: a few windows of the list.
    assert lazy._parsed_to < len(src) // 2


def test_prose_is_always_read_to_its_end() -> None:
    paragraph = "A sentence of ordinary prose, with a `code` span and a [link](https://e.com). "
    src = "\n\n".join([paragraph * 4] * 2000)
    doc = Document(src, 3000)
    assert doc.get(10**9) is None and doc.done and not doc.capped
    assert len(doc.blocks) == 2000 > WORK_FLOOR // 100


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(markdown_texts(), st.text(alphabet=" \t\n-=#>*+_`~|:1.)[]x<!", max_size=80)))
def test_block_rules_left_off_where_they_cannot_match_change_no_token(text: str) -> None:
    """A window is parsed with the rules its marks rule out switched off
    (no ``|``: no table; no underline: no setext heading; …): the tokens are
    those of the stock parser with every rule on."""
    src = normalise(text)
    env: dict = {}
    assert _shape(parse_blocks(src, env)) == _stock(src)[0]
    assert _links(env) == _links(_stock(src)[1])


@pytest.mark.parametrize(
    "src",
    [
        "a > b, and a -> b\n\n- > quoted in an item\n1. # a heading in an item",
        "> ---\n\n- - -\n\n* * *\n\n1. ___\n\ntext\n***",
        "x <b>bold</b>\n\n- <div>\n\n  <!-- in an item -->",
        "text\n  ```\n  code\n  ```\n- ~~~\n  fenced in an item\n  ~~~",
        "- [a]: /in-an-item\n\n> [b]: /in-a-quote\n\n[a] [b] x]: y",
        "title #1, and #2\n\n> # quoted heading\n\n  ## indented heading",
    ],
)
def test_marks_that_open_a_line_inside_containers_keep_their_rules_on(src: str) -> None:
    """A rule is left off only when no line could open its block, a line's
    quote marks, list markers and indentation counted in."""
    env: dict = {}
    assert _shape(parse_blocks(src, env)) == _stock(src)[0]
    assert _links(env) == _links(_stock(src)[1])


def test_a_one_column_table_under_a_rule_line_is_still_a_table() -> None:
    src = "| a |\n---\n| b |"
    assert [t.type for t in parse_blocks(src, {})][:2] == ["table_open", "thead_open"]
