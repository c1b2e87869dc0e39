"""``<details>``/``<summary>`` as GitHub shows them to a reader, and no summary can ping.

the-loop's phase-selection checklist folds its explanations into ``<details>``;
Slack cannot fold, so the room shows them open: the ``<details>`` tag lines go,
the summary's words are a bold line of their own, what was folded follows. Every
other piece of HTML stays escaped text.
"""

from __future__ import annotations

import json
import re

import pytest

from looproom.digest import condense, fit, to_mrkdwn
from tests.support.corpus import MESSAGES

URL = "https://github.com/o/r/issues/7#issuecomment-1"
FOOTER = f"_… full text: <{URL}|GitHub>_"
FILLER = "This sentence is filler that pads the text well past the limit. " * 40
_TAGS = re.compile(r"details|summary", re.IGNORECASE)


def _message(name: str) -> str:
    return json.loads((MESSAGES / name).read_text(encoding="utf-8"))["text"]


CHECKLIST = "01-phase-selection-checklist.json"
CONTRIBUTION = "18-phase-selection-checklist-contribution.json"
WITH_CHOICES = "20-phase-selection-checklist-with-choices.json"


@pytest.mark.parametrize(
    ("name", "summaries"), [(CHECKLIST, 7), (CONTRIBUTION, 4), (WITH_CHOICES, 10)]
)
def test_the_checklists_show_no_tag_and_every_summary_as_a_bold_line(
    name: str, summaries: int
) -> None:
    drawn = to_mrkdwn(_message(name))
    assert not _TAGS.search(drawn)
    assert "&lt;" not in drawn  # their only HTML is details, summaries and comments
    assert len(re.findall(r"^\*ℹ️ .+\*$|^\*🔒 .+\*$", drawn, re.MULTILINE)) == summaries


def test_the_checklist_shows_its_folded_explanation_under_its_summary() -> None:
    drawn = to_mrkdwn(_message(CHECKLIST))
    assert (
        "then reply `the-loop execute`.\n\n*ℹ️ How this works*\n\n"
        "Nothing runs until an authorized user replies `the-loop execute`."
    ) in drawn
    assert "and each has a default.\n\n*🧩 Phases — ticked ones run*\n\n☐ brainstorming" in drawn
    assert (
        "*ℹ️ How a skipped phase is recorded*\n\nThe phases this item skips are recorded"
    ) in drawn


def test_the_contribution_checklist_digest_shows_the_unselectable_phase() -> None:
    digest = fit(_message(CONTRIBUTION), 1500, url=URL)
    assert len(digest) <= 1500
    assert not _TAGS.search(digest)
    assert (
        "10. ☑ human-approval\n\n*🔒 1 more phase always runs and is not selectable*\n\n"
        "They are what keeps a lighter work item honest:\n\n1. goal-definition\n\n"
    ) in digest
    assert digest.endswith(FOOTER)


def test_the_checklist_with_choices_explains_each_choice() -> None:
    drawn = to_mrkdwn(_message(WITH_CHOICES))
    assert (
        "☐ `harness-codex`\n\n*ℹ️ What this means*\n\n"
        "Not a phase — it is the agent CLI its session is."
    ) in drawn
    digest = condense(_message(WITH_CHOICES), 1500, URL)
    assert "> *✏️ To tailor it:*" in digest and "\n\n*ℹ️ How this works*\n\nNothing runs" in digest


@pytest.mark.parametrize(
    ("source", "drawn"),
    [
        ("<details>\n<summary>Why</summary>\n\nFolded **words**.\n\n</details>\n\nAfter.",
         "*Why*\n\nFolded *words*.\n\nAfter."),
        ("<details><summary>One line</summary>\nraw body\n</details>", "*One line*\nraw body"),
        ("<DETAILS open>\n<Summary class='s'>\n  two\n  lines\n</SUMMARY >\n\nbody",
         "*two lines*\n\nbody"),
        ("<details>\n<summary>Unclosed details</summary>\n\nthe rest",
         "*Unclosed details*\n\nthe rest"),
        ("<details>\n<summary>Outer</summary>\n<details><summary>Inner</summary>\n\n"
         "inner body\n\n</details>\n</details>\n\nout", "*Outer*\n*Inner*\n\ninner body\n\nout"),
        ("<details>\n<summary></summary>\n\nbody", "body"),
        ("<details>\n<!-- the-loop:x --><summary>S <!-- c --></summary>\n\nbody", "*S*\n\nbody"),
    ],
)  # fmt: skip
def test_details_are_shown_open_and_summaries_bold(source: str, drawn: str) -> None:
    assert to_mrkdwn(source) == drawn


@pytest.mark.parametrize(
    ("source", "drawn"),
    [
        ("<div class='x'>\n<details open>\n<summary>S</summary>\n<b>kept</b>\n</details>\n</div>",
         "&lt;div class='x'&gt;\n*S*\n&lt;b&gt;kept&lt;/b&gt;\n&lt;/div&gt;"),
        ("<summary>never closed\n<summary>nor this",
         "&lt;summary&gt;never closed\n&lt;summary&gt;nor this"),
        ("<div>\na </summary> b <summary>c</summary>\n</div>",
         "&lt;div&gt;\na &lt;/summary&gt; b\n*c*\n&lt;/div&gt;"),
        ("inline <details> stays text", "inline &lt;details&gt; stays text"),
    ],
)  # fmt: skip
def test_every_other_piece_of_html_stays_escaped_text(source: str, drawn: str) -> None:
    assert to_mrkdwn(source) == drawn


@pytest.mark.parametrize(
    "summary", ["<!channel>", "<@U0123ABC>", "<!subteam^S1|team>", "a <b>|</b> <!here>"]
)
def test_a2_a_summary_cannot_ping(summary: str) -> None:
    text = f"<details>\n<summary>{summary}</summary>\n\nbody\n\n</details>"
    assert to_mrkdwn(text).startswith("*") and "<" not in to_mrkdwn(text)
    assert "<!" not in condense(text + "\n\n" + FILLER, 300, URL)
    assert "<@" not in condense(text + "\n\n" + FILLER, 300, URL)


def test_the_digest_draws_a_summary_bold_and_budgets_what_was_folded() -> None:
    text = "<details>\n<summary>How it works</summary>\n\n" + FILLER + "\n\n</details>"
    digest = condense(text, 300, URL)
    assert digest.startswith("*How it works*\n\nThis sentence is filler")
    assert digest.endswith("limit.\n\n" + FOOTER) and len(digest) <= 300


def test_a_summary_in_a_list_item_is_bold_on_the_item_line() -> None:
    text = "- item\n  <details>\n  <summary>more</summary>\n\n  body\n  </details>\n\n" + FILLER
    assert to_mrkdwn("- item\n  <details>\n  <summary>more</summary>\n  </details>") == (
        "• item\n   *more*"
    )
    assert condense(text, 300, URL).startswith("1. item *more* body\n\n")


def test_a_summary_too_long_for_the_room_is_cut_and_stays_bold() -> None:
    words = "word " * 100
    digest = condense(f"<details>\n<summary>{words}</summary>\n\n{FILLER}", 200, URL)
    first = digest.split("\n", 1)[0]
    assert first.startswith("*word word") and first.endswith("…*") and len(digest) <= 200
