"""The bundle loads under Errbot's real plugin machinery and answers its own commands."""

from __future__ import annotations

from pathlib import Path

from looproom.decide.kinds import COMMANDS, VERBS

extra_plugin_dir = str(Path(__file__).resolve().parents[2] / "plugins")


def test_the_plugin_activates_and_answers_help(testbot) -> None:
    testbot.push_message("!help TheLoop")
    assert "theloop" in testbot.pop_message().lower()


def test_preview_shows_the_mrkdwn_slack_would_receive(testbot) -> None:
    testbot.push_message("!theloop preview **bold** and a [link](https://example.com)")
    answer = testbot.pop_message()
    assert "*bold* and a <https://example.com|link>" in answer
    assert "**" not in answer


def test_preview_above_the_limit_shows_the_digest(testbot) -> None:
    words = " ".join(f"Sentence {n} says a little." for n in range(60))
    testbot.push_message(f"!theloop preview --limit 200 Should we ship? {words}")
    answer = testbot.pop_message()
    assert "*Should we ship?*" in answer
    assert "full text is on the ticket" in answer


def test_every_typed_verb_has_its_command(testbot) -> None:
    # The adapter reads a prefix-less verb with this list; `!verb` is one command per row.
    assert VERBS and set(VERBS) <= set(testbot.bot.all_commands)


def test_each_command_comes_from_its_row_and_survives_a_reload(testbot) -> None:
    help_text = testbot.exec_command("!help TheLoopVerbs")
    for kind in COMMANDS:
        said = kind.usage.split(" — ")[-1].replace("`", "")  # the Test backend drops `code`
        assert f"!{kind.verb} - " in help_text and said[:20] in help_text  # help cuts long lines
    testbot.push_message("!plugin reload TheLoop")
    assert "reloaded" in testbot.pop_message().lower()
    assert {kind.verb for kind in COMMANDS} <= set(testbot.bot.all_commands)
