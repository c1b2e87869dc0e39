"""The typed grammar: one rule, no model."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.decide import grammar, kinds
from looproom.decide.grammar import Command, Refusal, Text
from looproom.settings import keywords


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("execute", Command("execute")),
        ("Execute", Command("execute")),
        ("execute without 2, 5", Command("execute", items=("2", "5"), without=True)),
        (
            "execute without design, tests",
            Command("execute", items=("design", "tests"), without=True),
        ),
        ("skip design", Command("skip", items=("design",))),
        ("skip design, security-review", Command("skip", items=("design", "security-review"))),
        ("approve", Command("approve")),
        ("approve looks right to me", Command("approve", words="looks right to me")),
        ("changes the retry path is wrong", Command("changes", words="the retry path is wrong")),
        ("request changes rename it", Command("changes", words="rename it")),
    ],
)
def test_each_verb_reads_as_documented(typed: str, expected: Command) -> None:
    assert kinds.read(typed) == expected


@pytest.mark.parametrize(
    ("typed", "ref"),
    [
        ("execute github:acme/api#7", "github:acme/api#7"),
        ("approve #7 fine by me", "#7"),
        ("skip acme/api#7 design", "acme/api#7"),
        ("execute #12 without 3", "#12"),
    ],
)
def test_a_work_item_may_follow_the_verb(typed: str, ref: str) -> None:
    parsed = kinds.read(typed)
    assert isinstance(parsed, Command) and parsed.ref == ref
    assert ref not in parsed.words and ref not in parsed.items


def test_the_ref_does_not_swallow_the_arguments() -> None:
    assert kinds.read("execute #12 without 3") == Command(
        "execute", ref="#12", items=("3",), without=True
    )
    assert kinds.read("approve #7 fine by me").words == "fine by me"


@pytest.mark.parametrize(
    ("typed", "addressed"),
    [("the-loop execute", True), ("<@U0THELOOP> execute", True), ("execute.", False)],
)
def test_habits_from_the_ticket_and_mentions_still_read(typed: str, addressed: bool) -> None:
    assert kinds.read(typed) == Command("execute", addressed=addressed)
    assert kinds.read(typed, own_id="U0THELOOP") == Command("execute", addressed=addressed)


def test_a_verb_said_to_another_member_is_not_a_command() -> None:
    assert kinds.read("<@U0ALICE01> execute", own_id="U0THELOOP") == Text("<@U0ALICE01> execute")


def test_a_change_request_needs_its_reason() -> None:
    refused = kinds.read("changes")
    assert isinstance(refused, Refusal) and "changes <" in refused.text


def test_execute_refuses_words_it_does_not_understand() -> None:
    refused = kinds.read("execute now please")
    assert isinstance(refused, Refusal)
    assert "nothing was recorded" in refused.text


@pytest.mark.parametrize(
    "typed",
    ["not approved yet", "approved", "lgtm", "executed it yesterday", "skipping lunch", "", "   "],
)
def test_anything_else_is_text_never_a_command(typed: str) -> None:
    assert isinstance(kinds.read(typed), Text)


def test_a_clause_is_every_word_of_its_line_cleaned_of_markup() -> None:
    assert grammar.items("`design`, *5* and _tests_; 6") == ("design", "5", "tests", "6")
    assert grammar.items("the design and tests phases") == ("design", "tests")
    # A pasted zero-width space and a connector's signature are not phase names.
    assert grammar.items("de\u200bsign Sent using @Claude") == ("design",)
    # Only the first line is the clause.
    assert grammar.items("design\nand also a long explanation") == ("design",)


def test_a_word_that_is_not_a_name_is_kept_so_the_clause_is_refused() -> None:
    assert grammar.items("design <!here>") == ("design", "<!here>")


def test_approval_words_keep_every_line() -> None:
    parsed = kinds.read("approve first line\nsecond line")
    assert isinstance(parsed, Command) and parsed.words == "first line\nsecond line"


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(st.text(max_size=300))
def test_any_text_is_read_without_raising(text: str) -> None:
    parsed = kinds.read(text)
    assert isinstance(parsed, Command | Text | Refusal)
    if isinstance(parsed, Command):
        assert parsed.verb in kinds.VERBS


BOT = "U0THELOOP"


def renamed(**words: str) -> keywords.Keywords:
    return keywords.parse(words, "relay.keywords")


def test_after_the_mention_a_renamed_keywords_last_word_is_its_command() -> None:
    """the-loop's mention grammar: ``@the-loop go`` is start where start is ``loop go`` —
    its last word, read only after the mention; unaddressed, ``go`` is conversation."""
    said = renamed(start="loop go")
    assert kinds.read(f"<@{BOT}> go", BOT, said) == Command("start", addressed=True)
    assert kinds.read(f"<@{BOT}> go #7", BOT, said) == Command("start", "#7", addressed=True)
    assert kinds.read(f"<@{BOT}> start", BOT, said) == Command("start", addressed=True)
    assert kinds.read("go", BOT, said) == Text("go")
    assert kinds.read("go team, the fix is in", BOT, said) == Text("go team, the fix is in")
    assert kinds.read(f"<@{BOT}> go", BOT) == Text(f"<@{BOT}> go")  # the default words


def test_a_last_word_two_keywords_share_names_neither() -> None:
    """As the-loop's ``_command_for``: two matches name nothing, so it is a reply."""
    said = renamed(start="loop go", resume="please go")
    assert isinstance(kinds.read(f"<@{BOT}> go", BOT, said), Text)
    assert said.by_last_word("go") == ""
    assert renamed(start="loop go").by_last_word("GO") == "start"
    assert renamed(pause="loop stop").by_last_word("stop") == ""  # a command's own name
