"""``slack.reactions`` and ``slack.botTokenEnv``/``appTokenEnv``, as the-loop names them."""

from __future__ import annotations

from pathlib import Path

import pytest

from looproom import configured
from looproom.settings import ConfigError, Settings
from looproom.slack.reactions import COMPLETED, ERROR, RECEIVED, Reacting, Reactions


class Heard:
    def __init__(self) -> None:
        self.reactions: list[str] = []

    def react(self, channel: str, ts: str, name: str) -> None:
        self.reactions.append(name)

    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None: ...

    def update(self, channel: str, ts: str, text: str, blocks: list[dict]) -> None: ...


def _reacted(reactions: Reactions, *moments: str) -> list[str]:
    heard = Heard()
    room = Reacting(heard, reactions)
    for moment in moments:
        room.react("C1", "1.0", moment)
    return heard.reactions


def test_without_the_key_the_room_reacts_as_the_loop_does_by_default() -> None:
    settings = Settings.from_mapping({"slack": {}})
    assert _reacted(settings.reactions, RECEIVED, COMPLETED, ERROR) == [
        "eyes",
        "white_check_mark",
        "warning",
    ]


def test_each_moment_gets_the_configured_emoji_and_an_empty_one_is_skipped() -> None:
    settings = Settings.from_mapping(
        {"slack": {"reactions": {"received": ":hourglass:", "completed": "rocket", "error": ""}}}
    )
    assert _reacted(settings.reactions, RECEIVED, COMPLETED, ERROR) == ["hourglass", "rocket"]
    assert "received → :hourglass:" in settings.reactions.describe()
    assert "error → none" in settings.reactions.describe()


def test_switched_off_no_reaction_is_made() -> None:
    settings = Settings.from_mapping({"slack": {"reactions": {"enabled": False}}})
    assert _reacted(settings.reactions, RECEIVED, COMPLETED, ERROR) == []
    assert settings.reactions.describe().startswith("reactions: off")


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"received": "two words"}, "slack.reactions.received"),
        ({"completed": "<@U1>"}, "slack.reactions.completed"),
        ({"error": 7}, "slack.reactions.error"),
        ({"enabled": "yes"}, "slack.reactions.enabled"),
        ({"recieved": "eyes"}, "slack.reactions.recieved"),
        (["eyes"], "slack.reactions"),
    ],
)
def test_a_name_slack_would_not_take_is_refused_naming_the_key(raw: object, named: str) -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_mapping({"slack": {"reactions": raw}})
    assert any(error.startswith(named) for error in refused.value.errors)


def test_the_configured_token_variables_are_read_first(tmp_path: Path) -> None:
    file = tmp_path / "theloop.yaml"
    file.write_text("slack: {botTokenEnv: ACME_BOT, appTokenEnv: ACME_APP}\n", encoding="utf-8")
    env, settings = configured.read(
        {
            "THELOOP_CONFIG": str(file),
            "ACME_BOT": "xoxb-acme",
            "ACME_APP": "xapp-acme",
            "THELOOP_SLACK_BOT_TOKEN": "xoxb-other",
        }
    )
    assert (env.slack_bot_token, env.slack_app_token) == ("xoxb-acme", "xapp-acme")
    assert env.backend == "SlackV3"
    assert settings.bot_token_env == "ACME_BOT"


def test_an_unset_configured_variable_falls_back_to_the_bots_own(tmp_path: Path) -> None:
    file = tmp_path / "theloop.yaml"
    file.write_text("slack: {botTokenEnv: ACME_BOT}\n", encoding="utf-8")
    env, _ = configured.read({"THELOOP_CONFIG": str(file), "THELOOP_SLACK_BOT_TOKEN": "xoxb-1"})
    assert env.slack_bot_token == "xoxb-1"


def test_a_token_variable_name_that_is_no_name_is_refused() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_mapping({"slack": {"appTokenEnv": "not a name"}})
    assert refused.value.errors[0].startswith("slack.appTokenEnv")


def test_config_py_leaves_a_bad_file_to_the_plugin_but_still_reads_the_environment(
    tmp_path: Path,
) -> None:
    file = tmp_path / "theloop.yaml"
    file.write_text("slack: {maxChars: 5, botTokenEnv: ACME_BOT}\n", encoding="utf-8")
    env = configured.environment({"THELOOP_CONFIG": str(file), "THELOOP_SLACK_BOT_TOKEN": "x"})
    assert env.slack_bot_token == "x"
    with pytest.raises(ConfigError):
        configured.environment({"THELOOP_BACKEND": "Nope"})
