"""The room's voice, the PR card and the questions a digest must not lose."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from looproom.events import KNOWN_EVENTS, Event
from looproom.room import pulls, voice
from looproom.room.pulls import PullReader, PullRequest
from looproom.room.render import cut_questions, questions, render
from looproom.settings import Settings
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.support import messages

ITEM = "github:MadaraUchiha-314/the-loop#260"
MACHINE_WORDS = (
    "phase-approval-pending",
    "pr-review-pending",
    "session.awaiting_input",
    "phase.started",
    "phase.progress",
    "phase.completed",
    "requirements-approval",
    "requirements-definition",
    "human-approval",
)


def wire(stem: str, **fields: object) -> Event:
    return Event.from_wire(messages.event(stem, **fields))


@pytest.mark.parametrize("kind", KNOWN_EVENTS)
def test_every_known_kind_has_one_emoji_and_a_line_without_machine_names(kind: str) -> None:
    event = Event(kind, ITEM, detail={"node": "requirements-approval", "phase": "design"})
    said = voice.line(event)
    emoji, _, words = said.partition(" ")
    assert emoji in {"🚀", "🤔", "📋", "✅", "🔨", "👀", "🎉", "⚠️", "💬"}
    assert words and not any(name in said for name in MACHINE_WORDS)


@pytest.mark.parametrize(
    ("stem", "line"),
    [
        ("06", "📋 The requirements are ready for your review"),
        ("04", "🔨 Working on the requirements"),
        ("07", "✅ Finished the requirements (approved)"),
        ("15", "🤔 I have a question for you"),
        ("13", "🎉 Done — everything is through"),
        ("01", "🚀 Which phases does this work item need?"),
        ("02", "✅ The phase selection is locked in"),
        ("12", "⚠️ I'm stuck and need a person to step in"),
    ],
)
def test_the_real_messages_read_as_a_colleague_says_them(stem: str, line: str) -> None:
    assert voice.line(wire(stem)) == line


def test_progress_says_the_step_when_the_loop_counts_them() -> None:
    event = Event("phase.progress", ITEM, detail={"phase": "design", "step": "3", "steps": "5"})
    assert voice.line(event) == "🔨 Working on the design — step 3 of 5"


def test_an_unknown_kind_is_named_as_sent_since_no_word_exists() -> None:
    assert voice.line(Event("deploy.finished", ITEM)) == "💬 Update (deploy.finished)"


def test_a_messages_lead_and_text_carry_no_runtime_template() -> None:
    drawn = render(wire("06"), Settings(), interactive=True)
    said = json.dumps(drawn.blocks, ensure_ascii=False) + drawn.text
    assert "📋 *The requirements are ready for your review*" in said
    assert "(phase-approval-pending)" not in said and "the-loop: issue-260" not in said


def test_the_agents_summary_replaces_the_excerpt() -> None:
    event = wire("06", summary="I kept it to three requirements; least sure about R2.")
    said = json.dumps(render(event, Settings()).blocks, ensure_ascii=False)
    assert "least sure about R2" in said and "The wrong actor owns the choice" not in said


# -- the PR card ---------------------------------------------------------------------------


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(issues={"MadaraUchiha-314/the-loop": {260}}) as fake:
        fake.pulls[("MadaraUchiha-314/the-loop", 263)] = {
            "title": "Add retry to the uploader",
            "additions": 120,
            "deletions": 30,
            "changed_files": 4,
        }
        yield fake


def test_the_pr_card_names_the_number_title_and_size_from_github(github: FakeGitHub) -> None:
    pull = PullReader(github.url, TOKEN).read(wire("10"))
    assert pull == PullRequest(263, "Add retry to the uploader", 120, 30, 4)
    drawn = render(wire("10"), Settings(), interactive=True, pull=pull)
    lead = drawn.blocks[0]["text"]["text"]
    assert lead == "👀 *PR #263 is ready: Add retry to the uploader (+120 −30 in 4 files)*"
    (opens,) = [
        e for b in drawn.blocks if b["type"] == "actions" for e in b["elements"] if e.get("url")
    ]
    assert opens["url"] == "https://github.com/MadaraUchiha-314/the-loop/pull/263"


def test_without_a_token_or_an_answer_the_card_is_the_number_and_the_link(
    github: FakeGitHub,
) -> None:
    assert PullReader(github.url, "").read(wire("10")) == PullRequest(263)
    assert PullReader(github.url, "wrong-token").read(wire("10")) == PullRequest(263)
    unknown = wire("10", url="https://github.com/MadaraUchiha-314/the-loop/pull/9")
    assert PullReader(github.url, TOKEN).read(unknown) == PullRequest(9)
    assert pulls.line(wire("10"), None) == "👀 PR #263 is ready for your review"


def test_a_pr_named_only_by_number_is_found_in_the_work_items_repository() -> None:
    event = wire("10", url="https://github.com/MadaraUchiha-314/the-loop/issues/260")
    assert pulls.pull_of(event) == ("MadaraUchiha-314/the-loop", 263)


# -- never cut an unanswered question ----------------------------------------------------------

TWO_QUESTIONS = (
    "I moved the default onto the checklist. " + "Background that runs long. " * 80 + "\n\n"
    "Should already-frozen records be rewritten to the new mode?\n\n"
    + "More background. " * 60
    + "\n\nAnd do you want the legacy boolean mapped to `always`?"
)


def test_every_question_is_found_outside_code() -> None:
    text = "Is this one?\n\n```\nnot = this?\n```\n\nAnd is this the second one?"
    assert questions(text) == ["Is this one?", "And is this the second one?"]


def test_a_question_the_digest_cut_is_said_and_linked() -> None:
    event = Event(
        "session.awaiting_input", ITEM, text=TWO_QUESTIONS, url="https://github.com/a/b/issues/1"
    )
    drawn = render(event, Settings(max_chars=400))
    said = json.dumps(drawn.blocks, ensure_ascii=False)
    for question in questions(TWO_QUESTIONS):
        assert question[:40] in said
    assert "cut to fit" in said and "https://github.com/a/b/issues/1" in said


def test_nothing_is_added_when_every_question_is_shown() -> None:
    assert cut_questions("Is this fine?", "Is this fine?", "") == ""
