"""Properties of the digest over generated markdown and over the corpus (all of
``../shared/corpus`` when it is beside the checkout, else the slice in ``tests/data``).

* **never raises, never over the limit**, in both modes, at every limit;
* **faithful**: every line the digest draws, but for what only the digest draws
  (pointers, list numbers, box glyphs, the quote mark, the footer, the ``…``),
  is text of the mrkdwn rendering of the source. Precisely: the reference is
  ``to_mrkdwn(source)``, each line without its leading quote marks, indentation,
  bullet or number and box, the lines joined by a space, emphasis marks
  (``* _ ~``) removed and whitespace runs made one space; a digest line is
  stripped the same way at its start, of its marks, and split at each
  ``…``, each pointer and each sentence end (the ask's sentence left its
  paragraph, so the sentences around it meet); every piece must be a substring
  of the reference (or of the rendering's lines with their numbers and boxes
  kept: a line of HTML may open like a number). Marks are out because the digest may
  drop one it cut through and draws the ask bold as a whole;
* **the ask leads** whenever a top-level paragraph or heading holds a sentence
  ending in ``?`` outside code, links and URLs — found here by markdown-it's own
  tokens, independently of the digest;
* **reading lazily changes nothing**: the digest equals the one computed after
  parsing the whole document.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from looproom.digest import DIGEST_MODES, condense, fit, to_mrkdwn
from tests.support.corpus import texts

URL = "https://github.com/o/r/issues/7#issuecomment-1"
LIMITS = (200, 900, 1500, 3000)

# -- generated markdown ---------------------------------------------------------

_WORDS = st.sampled_from(
    [
        "alpha", "beta", "gamma", "the", "reply", "Reply", "ask", "run",
        "`code`", "`a?b`", "`x * y`", "`test_ask_reply.py`", "**bold**", "*it*",
        "__init__.py", "_em_", "~~gone~~", "e.g.", "/home/u/the-loop/cli/x.py",
        "https://e.com/a,b;c?d=1", "<https://e.com/x>", "[link](https://e.com/u_(x))",
        "[ref][r]", "[r]", "![img](https://i.e.com/i.png)", "<b>", "</b>",
        "<!-- hidden -->", "<!--", "-->", "<@U123>", "<!here>", "&amp;", "&#63;",
        "&quest;", "\\*", "\\?", "a&b", "x<y>z", "|", "?", "!", ".", ",", ";", ":",
        "—", "(", ")", '"', "'", "*", "_", "`", "[", "]", "<", ">", "&", "Ünï", "🤖",
    ]
)  # fmt: skip
_ENDS = st.sampled_from([".", "?", "!", "", "?)", ".**", "?*", "…", ":", '?"'])


@st.composite
def _sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(_WORDS, min_size=1, max_size=12))
    return " ".join(words) + draw(_ENDS)


@st.composite
def _paragraph(draw: st.DrawFn) -> str:
    sentences = draw(st.lists(_sentence(), min_size=1, max_size=5))
    return draw(st.sampled_from([" ", "\n", "  \n", "\\\n"])).join(sentences)


@st.composite
def _fence(draw: st.DrawFn) -> str:
    marker = draw(st.sampled_from(["```", "````", "~~~", "~~~~~"]))
    body = draw(st.lists(st.sampled_from(["x = 1", "```", "?", "<!here>", "", "  a"]), max_size=4))
    closing = draw(st.sampled_from([marker, marker + "`", "", marker[:3]]))
    return "\n".join([marker + draw(st.sampled_from(["", "py"])), *body, closing])


_LEAVES = st.one_of(
    _paragraph(),
    _sentence().map(lambda s: "#" * 2 + " " + s),
    _sentence().map(lambda s: s + "\n===="),
    _sentence().map(lambda s: s + "\n----"),
    _fence(),
    st.just("    indented **code**\n    more"),
    st.just("| a | b? |\n|---|---|\n| 1 | `2` |"),
    st.just("<div>\n<b>html?</b>\n</div>"),
    st.just("<!-- block\n\ncomment -->"),
    st.just("<details>\n<summary>Why **this**?</summary>\n\nfolded words.\n\n</details>"),
    st.just("<details><summary><!here> & co</summary>\nraw <b>words</b>\n</details>"),
    st.just("***"),
    st.just("[r]: https://e.com/ref"),
    st.just('Traceback (most recent call last):\n  File "x.py", line 1, in f\nValueError: x'),
)


def _indent(block: str, by: str) -> str:
    return "\n".join(by + line if line else line for line in block.split("\n"))


@st.composite
def _list(draw: st.DrawFn, children: st.SearchStrategy[str]) -> str:
    ordered = draw(st.booleans())
    start = draw(st.integers(0, 12))
    items = []
    for n, body in enumerate(draw(st.lists(children, min_size=1, max_size=4))):
        box = draw(st.sampled_from(["", "[ ] ", "[x] "]))
        marker = f"{start + n}. " if ordered else draw(st.sampled_from(["- ", "* ", "+ "]))
        first, _, rest = body.partition("\n")
        item = marker + box + first
        if rest:
            item += "\n" + _indent(rest, " " * len(marker))
        items.append(item)
    return draw(st.sampled_from(["\n", "\n\n"])).join(items)


_BLOCKS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(_list(inner), inner.map(lambda b: _indent(b, "> "))),
    max_leaves=6,
)


@st.composite
def markdown_texts(draw: st.DrawFn) -> str:
    """Markdown as agents write it, with every construct the digest must get right."""
    blocks = draw(st.lists(_BLOCKS, min_size=1, max_size=8))
    front = draw(st.sampled_from(["", "---\nstatus: draft\n---\n\n"]))
    return front + draw(st.sampled_from(["\n\n", "\n"])).join(blocks)


# -- the checks -------------------------------------------------------------------

_QUOTES = re.compile(r"^(?:\s*>)*\s*")
_DECORATION = re.compile(r"^(?:\s*>)*\s*(?:\d+(?:\.\d+)*\.\s+|•\s+)?(?:[☐☑]\s*)?")
_POINTER = re.compile(r"_⟨[^⟩]*⟩_")
_PIECES = re.compile(r"…|⟨[^⟩]*⟩|(?<=[.!?])[\"')\]’”»]*\s+")
_MARKS = re.compile(r"[*_~]")
_FOOTER = re.compile(r"_… (?:full text: <[^>]*>|the full text is on the ticket)_|…")


def _plain(text: str) -> str:
    return " ".join(_MARKS.sub("", text).split())


@lru_cache(maxsize=1024)
def _reference(source: str) -> str:
    """The rendering without its decoration — and with it, for a line of text
    that opens like a number (``4. …`` in an HTML block) is not decoration."""
    lines = to_mrkdwn(source).split("\n")
    bare = _plain(" ".join(_DECORATION.sub("", line) for line in lines))
    return bare + "\0" + _plain(" ".join(_QUOTES.sub("", line) for line in lines))


def unfaithful(source: str, digest: str) -> tuple[list[str], int]:
    """The pieces of ``digest`` that are not text of the source's rendering, and
    how many characters were checked (so a vacuous pass shows)."""
    reference = _reference(source)
    missing, checked = [], 0
    for line in digest.split("\n"):
        if not line.strip() or _FOOTER.fullmatch(line) or _POINTER.fullmatch(line.strip()):
            continue
        body = _MARKS.sub("", _DECORATION.sub("", line))
        for piece in _PIECES.split(body):
            plain = _plain(piece)
            checked += len(plain)
            if plain and plain not in reference:
                missing.append(plain)
    return missing, checked


def _reference_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    return md.use(front_matter_plugin)


_STOCK = _reference_parser()
_BARE_URL = re.compile(r"(?:https?|ftp)://\S+")
_QUESTION = re.compile(r"\?[.!?]*[)\]\"'’”»*_~]*(?:\s|$)")


def has_question(source: str) -> bool:
    """Whether a top-level paragraph or heading holds a sentence ending in ``?``
    outside code spans, links and bare URLs — from markdown-it's tokens."""
    tokens = _STOCK.parse(source.strip())
    return any(
        token.type in ("paragraph_open", "heading_open")
        and token.level == 0
        and _QUESTION.search(_words_of(tokens[index + 1].children or []))
        for index, token in enumerate(tokens)
    )


def _words_of(children: list) -> str:
    out, in_link = [], False
    marks = {"strong": "*", "em": "_", "s": "~"}
    for token in children:
        kind = token.type
        if kind in ("link_open", "link_close"):
            in_link = kind == "link_open"
            out.append("§" if not in_link else "")
        elif in_link:
            continue
        elif kind == "text" or (kind == "html_inline" and not token.content.startswith("<!--")):
            out.append(_BARE_URL.sub("§", token.content))
        elif kind in ("code_inline", "image"):
            out.append("§")
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind.rsplit("_", 1)[0] in marks:
            out.append(marks[kind.rsplit("_", 1)[0]])
    return "".join(out)


def ask_leads(digest: str) -> bool:
    first = digest.split("\n", 1)[0]
    return first.startswith("*") and first.endswith("*") and ("?" in first or "…" in first)


# -- generated ----------------------------------------------------------------------

_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(text=markdown_texts(), limit=st.integers(1, 3000), mode=st.sampled_from(DIGEST_MODES))
def test_never_raises_and_never_over_the_limit(text: str, limit: int, mode: str) -> None:
    assert len(fit(text, limit, mode, URL)) <= limit


@_SETTINGS
@given(text=markdown_texts(), limit=st.sampled_from(LIMITS))
def test_the_digest_is_faithful(text: str, limit: int) -> None:
    missing, _ = unfaithful(text, condense(text, limit, URL))
    assert not missing


@_SETTINGS
@given(text=markdown_texts(), limit=st.sampled_from(LIMITS))
def test_r2_1_the_ask_leads_whenever_there_is_a_question(text: str, limit: int) -> None:
    digest = condense(text, limit, URL)
    if has_question(text) and digest and not digest.startswith("_… "):
        assert ask_leads(digest), digest


@_SETTINGS
@given(text=markdown_texts(), limit=st.sampled_from((60, *LIMITS)))
def test_reading_lazily_equals_reading_everything(text: str, limit: int) -> None:
    assert condense(text, limit, URL) == condense(text, limit, URL, eager=True)


@st.composite
def _long_texts(draw: st.DrawFn) -> str:
    """Documents of many blocks: the windows, jumps and partial lists of the
    lazy reading all come into play at small limits."""
    return "\n\n".join(draw(st.lists(_BLOCKS, min_size=20, max_size=60)))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_long_texts(), limit=st.sampled_from((60, 120, 200, 400)))
def test_long_documents_read_lazily_equal_read_whole(text: str, limit: int) -> None:
    digest = condense(text, limit, URL)
    assert digest == condense(text, limit, URL, eager=True)
    assert not unfaithful(text, digest)[0]


@_SETTINGS
@given(text=markdown_texts())
def test_the_property_is_not_vacuous_on_generated_text(text: str) -> None:
    _, checked = unfaithful(text, condense(text, 3000, URL))
    drawn = condense(text, 3000, URL)
    # A digest of marks alone (``_``, or a task box and ``***``) has no words to check.
    words = "".join(_MARKS.sub("", _DECORATION.sub("", line)) for line in drawn.split("\n"))
    if words.strip() and "⟨" not in drawn and not drawn.startswith("_… "):
        assert checked > 0


# -- the corpus ----------------------------------------------------------------------


@lru_cache(maxsize=1)
def _corpus() -> tuple[tuple[str, str], ...]:
    return tuple(texts())


@cache
def _question(text: str) -> bool:
    return has_question(text)


@pytest.mark.parametrize("limit", LIMITS)
def test_corpus_within_the_limit_faithful_and_ask_first(limit: int) -> None:
    problems, checked, drawn = [], 0, 0
    for name, text in _corpus():
        if len(fit(text, limit, url=URL)) > limit:
            problems.append((name, "over the limit"))
        digest = condense(text, limit, URL)
        missing, count = unfaithful(text, digest)
        checked, drawn = checked + count, drawn + len(digest)
        if missing:
            problems.append((name, "unfaithful", missing[:2]))
        if _question(text) and not ask_leads(digest):
            problems.append((name, "the ask does not lead", digest[:80]))
    assert not problems
    assert checked > drawn // 2  # most of what is drawn was checked: not vacuous


def test_corpus_truncate_mode_within_the_limit() -> None:
    for limit in (1500,):
        over = [name for name, text in _corpus() if len(fit(text, limit, "truncate", URL)) > limit]
        assert not over


@pytest.mark.parametrize("limit", (1500,))
def test_corpus_read_lazily_equals_read_whole(limit: int) -> None:
    different = [
        name
        for name, text in _corpus()
        if condense(text, limit, URL) != condense(text, limit, URL, eager=True)
    ]
    assert not different


def test_the_corpus_has_questions_to_lead_with() -> None:
    # The ask property above must have something to test.
    assert sum(_question(text) for _, text in _corpus()) >= 20
