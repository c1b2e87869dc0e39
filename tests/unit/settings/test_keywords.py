"""Control keywords come from where the-loop reads them: its config, ours, its defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from looproom.settings import ConfigError, Settings, keywords


def test_without_configuration_the_loops_defaults_apply() -> None:
    said = keywords.resolve("", {})
    assert said.of("start") == "the-loop start" and said.source == keywords.DEFAULT_SOURCE


def test_our_yaml_renames_over_the_defaults() -> None:
    said = keywords.resolve("", {"start": "loop   go"})
    assert said.of("start") == "loop go" and said.of("stop") == "the-loop stop"
    assert "relay.keywords" in said.source


def test_the_loops_own_config_wins_over_ours(tmp_path: Path) -> None:
    config = tmp_path / "cli-config.yaml"
    config.write_text(
        "routing:\n  control:\n    keywords:\n      start: loop go\n      stop: ''\n"
        "      add-collaborator: loop add\n",
        encoding="utf-8",
    )
    said = keywords.resolve(str(config), {"start": "ours go"})
    assert said.of("start") == "loop go"
    assert said.of("stop") == "" and "switched off" in said.refusal("stop")
    assert said.refusal("start") == ""


def test_the_loops_switch_turns_every_verb_off(tmp_path: Path) -> None:
    config = tmp_path / "cli-config.yaml"
    config.write_text("routing:\n  control:\n    enabled: false\n", encoding="utf-8")
    said = keywords.from_loop_config(str(config))
    assert all(said.refusal(command) for command in keywords.COMMANDS)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (None, "does not exist"),
        ("routing: [unclosed", "cannot be read"),
        ("routing:\n  control:\n    keywords: [a]\n", "expected a mapping"),
        ("routing:\n  control:\n    keywords:\n      start: {a: 1}\n", "one line of words"),
    ],
)
def test_a_loop_config_that_cannot_be_read_says_why(
    tmp_path: Path, text: str | None, error: str
) -> None:
    config = tmp_path / "cli-config.yaml"
    if text is not None:
        config.write_text(text, encoding="utf-8")
    with pytest.raises(keywords.KeywordError, match=error):
        keywords.from_loop_config(str(config))


def test_relay_keywords_in_our_yaml_are_validated() -> None:
    settings = Settings.from_mapping({"relay": {"keywords": {"start": "loop go"}}})
    assert settings.relay_keywords == {"start": "loop go"}
    with pytest.raises(ConfigError, match="not a command"):
        Settings.from_mapping({"relay": {"keywords": {"begin": "loop go"}}})
    with pytest.raises(ConfigError, match="one line of words"):
        Settings.from_mapping({"relay": {"keywords": {"start": "loop\ngo"}}})
