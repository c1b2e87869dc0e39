"""The abuse cases A1–A5 of the-loop's digest requirements, each pinned.

A1's cost is measured by ``bench/bench_digest.py`` (each crafted 64 KB input
against prose of the same size), never by a timed test; here the crafted inputs
— their first 16 KB, enough for every shape they have, and a quarter of the
time — must draw and digest without raising and within the limit.
"""

from __future__ import annotations

import re

import pytest

from bench._crafted import CRAFTED
from looproom.digest import condense, fit, to_mrkdwn

URL = "https://github.com/o/r/issues/7#issuecomment-9"
FILLER = "This sentence is filler that pads the text well past the limit. " * 40
#: Anything Slack would act on: a broadcast or a mention, as a control sequence.
_ACTS = re.compile(r"<[!@#]")


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a1_crafted_inputs_draw_and_digest_within_the_limit(name: str) -> None:
    text = CRAFTED[name][: 16 * 1024]
    assert isinstance(to_mrkdwn(text), str)
    assert len(fit(text, 200, url=URL)) <= 200
    assert len(fit(text, 3000, "truncate", URL)) <= 3000


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
