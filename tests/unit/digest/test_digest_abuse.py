"""The abuse cases of the digest (docs/digest.md, "Abuse cases"), each pinned.

A1 — any input up to the webhook's body limit costs what the limit allows, not
what its shape asks for. Its time is measured by ``bench/bench_digest.py`` (each
crafted input against prose of the same size), never by a timed test; here each
crafted input, at 64 KB and at 256 KB, digests within the limit, hands
markdown-it's inline parser no more than the inline budget, and its block parser
no more than twice the work bound. A2 — nothing the text says can ping anyone.
A3 — the footer links the event, never a link from the text. A4 — a misleading
first question still ends with the footer. A5 — no HTML comment reaches Slack.
"""

from __future__ import annotations

import re

import pytest

from bench._crafted import CRAFTED, SIZES, crafted
from looproom.digest import _document as document
from looproom.digest import _scope as scope
from looproom.digest import condense, fit, to_mrkdwn

URL = "https://github.com/o/r/issues/7#issuecomment-9"
FILLER = "This sentence is filler that pads the text well past the limit. " * 40
LIMIT = 1500
#: Anything Slack would act on: a broadcast or a mention, as a control sequence.
_ACTS = re.compile(r"<[!@#]")
_INPUTS = {size: crafted(size) for size in SIZES}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a1_crafted_inputs_draw_and_digest_within_the_limit(name: str) -> None:
    # 12 KB hold every shape they have (a 1000-column header and 4 000 rows under
    # it); to_mrkdwn reads it all.
    text = CRAFTED[name][: 12 * 1024]
    assert isinstance(to_mrkdwn(text), str)
    assert len(fit(text, 200, url=URL)) <= 200
    assert len(fit(text, 3000, "truncate", URL)) <= 3000


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a1_crafted_inputs_cost_what_the_limit_allows(
    name: str, size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, handed, work = _INPUTS[size][name], [0], [0]

    def inline(content: str, env: dict) -> list:
        handed[0] += len(content)
        return parse_inline(content, env)

    def blocks(src: str, env: dict, at_start: bool = True) -> list:
        tokens = parse_blocks(src, env, at_start)
        work[0] += len(tokens) + document.WORK_PER_LINE * src.count("\n")
        return tokens

    parse_inline, parse_blocks = scope.parse_inline, document.parse_blocks
    monkeypatch.setattr(scope, "parse_inline", inline)
    monkeypatch.setattr(document, "parse_blocks", blocks)
    assert len(fit(text, LIMIT, url=URL)) <= LIMIT
    assert handed[0] <= scope.InlineBudget(LIMIT).left  # 2 * limit + 4096
    bound = max(document.WORK_FLOOR, document.WORK_PER_CHAR * len(text))
    assert work[0] <= 2 * bound


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a1_crafted_inputs_read_lazily_equal_read_whole(name: str) -> None:
    text = CRAFTED[name]
    assert condense(text, LIMIT, URL) == condense(text, LIMIT, URL, eager=True)


@pytest.mark.parametrize("name", ["500-deep quote", "500-deep list", "500-deep ordered list"])
def test_a1_text_nested_past_markdown_its_limit_loses_no_word(name: str) -> None:
    deep = CRAFTED[name].split("\n", 1)[0].replace("x", "deep words")
    assert "deep words" in to_mrkdwn(deep)
    assert "deep words" in condense(deep + "\n\n" + FILLER, 300, URL)


@pytest.mark.parametrize(
    "text",
    [
        "<!channel> now",
        "<!here|here> please",
        "<!everyone>",
        "<!subteam^S0123|team> ping",
        "<@U0123ABC> and <@W0123|who>",
        "<#C0123|general>",
        "[<!here>](https://e.com)",
        "[label](https://e.com/<!here>)",
        "[label](<https://e.com/a|b><!channel>)",
        "<https://e.com/a|<!channel>>",
        "![<!here>](https://i.e.com/x.png)",
        "`<!channel>` in code",
        "```\n<!channel>\n```",
        "    <!here> indented",
        "<div><!everyone></div>",
        "# <!here> heading",
        "> <!channel> quoted",
        "- <@U1> item",
        "| <!here> |\n|---|\n| x |",
        "&lt;!channel&gt; as entities",
        "<!-- c --><!here>",
        "Is <!here> the question?",
        "[a](https://e.com/?x=<!subteam^S1>)",
    ],
)
def test_a2_nothing_the_text_says_can_ping(text: str) -> None:
    for drawn in (
        to_mrkdwn(text),
        condense(text + "\n\n" + FILLER, 400, URL),
        fit(text + "\n\n" + FILLER, 400, "truncate", URL),
    ):
        assert not _ACTS.search(drawn), drawn


def test_a2_a_url_with_a_pipe_or_angle_bracket_cannot_break_out_of_its_link() -> None:
    drawn = to_mrkdwn("[safe](https://e.com/a|<!channel>) [x](<https://e.com/a b>)")
    assert drawn == "<https://e.com/a%7C%3C!channel%3E|safe> <https://e.com/a%20b|x>"
    footer = condense(FILLER, 300, "https://e.com/a|<!channel>>")
    assert footer.endswith("<https://e.com/a%7C%3C!channel%3E%3E|e.com>_")


def test_a3_the_footer_links_the_event_never_a_link_in_the_text() -> None:
    text = "[… full text](https://evil.example/phish) is here. " + FILLER
    digest = condense(text, 300, URL)
    assert digest.endswith(f"\n\n_… full text: <{URL}|GitHub>_")
    assert digest.startswith("<https://evil.example/phish|… full text> is here.")


def test_a4_a_misleading_first_question_still_closes_with_the_record() -> None:
    text = "Shall we merge?\n\n" + FILLER + "\n\nThe real decision: do not merge yet."
    digest = condense(text, 300, URL)
    assert digest.startswith("*Shall we merge?*")
    assert digest.endswith(f"<{URL}|GitHub>_")


def test_a5_a_foreign_html_comment_is_removed_too() -> None:
    text = "Visible.\n\n<!-- not the-loop's: secret -->\n\nMore <!-- x:secret --> text."
    assert to_mrkdwn(text) == "Visible.\n\nMore  text."
    assert "secret" not in condense(text + "\n\n" + FILLER, 300, URL)
