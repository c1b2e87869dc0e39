"""``slack.read.mode`` and ``intervalSeconds``: how Slack's messages reach the bot, and how
often a poll reads — the edges of what is taken, and the mode each set of tokens gets."""

from __future__ import annotations

from pathlib import Path

import pytest

from looproom import configured
from looproom.settings import ConfigError
from looproom.settings.read import ReadSettings, parse, seconds_between, way_in


def _parsed(raw: object) -> tuple[ReadSettings, list[str], list[str]]:
    errors: list[str] = []
    warnings: list[str] = []
    return parse(raw, errors, warnings), errors, warnings


def test_the_lowest_poll_interval_is_ten_seconds_and_nine_is_refused_naming_the_key() -> None:
    taken, errors, _ = _parsed({"mode": "poll", "intervalSeconds": 10})
    assert (taken.mode, taken.interval_seconds, errors) == ("poll", 10, [])
    _refused, errors, _ = _parsed({"mode": "poll", "intervalSeconds": 9})
    (error,) = errors
    assert error.startswith("slack.read.intervalSeconds: 9 is below 10")


@pytest.mark.parametrize("value", ["30s", 12.5, True, None])
def test_an_interval_that_is_not_a_whole_number_is_refused_or_left_at_the_default(
    value: object,
) -> None:
    said, errors, _ = _parsed({"intervalSeconds": value})
    if value is None:
        assert (said.interval_seconds, errors) == (30, [])  # the-loop's default
    else:
        assert errors == [f"slack.read.intervalSeconds: expected a whole number, got {value!r}"]


@pytest.mark.parametrize("mode", ["gateway", "off", "Poll", "", 1])
def test_a_mode_the_bot_has_no_way_to_run_is_refused_naming_the_choices(mode: object) -> None:
    _said, errors, _ = _parsed({"mode": mode})
    (error,) = errors
    assert error.startswith("slack.read.mode:") and "socket, events, poll" in error


@pytest.mark.parametrize(
    ("mode", "app_token", "signing_secret", "way"),
    [
        ("", True, True, "socket"),
        ("", False, True, "events"),
        ("", False, False, "poll"),  # the one way that still hears: no longer deaf
        ("poll", True, True, "poll"),  # set, it wins over the tokens
        ("events", True, True, "events"),
    ],
)
def test_the_mode_set_wins_and_without_one_the_tokens_decide(
    mode: str, app_token: bool, signing_secret: bool, way: str
) -> None:
    read = ReadSettings(mode=mode)
    assert way_in(read, app_token=app_token, signing_secret=signing_secret) == way


def _env(tmp_path: Path, read: str, **env: str) -> dict[str, str]:
    file = tmp_path / "theloop.yaml"
    file.write_text(f"slack:\n  read: {read}\n", encoding="utf-8")
    return {
        "THELOOP_CONFIG": str(file),
        "THELOOP_BACKEND": "SlackV3",
        "THELOOP_SLACK_BOT_TOKEN": "xoxb-1",
        **env,
    }


@pytest.mark.parametrize(
    ("mode", "lacking"), [("socket", "app-level token"), ("events", "signing secret")]
)
def test_a_mode_without_what_it_needs_refuses_the_start_saying_what_is_missing(
    tmp_path: Path, mode: str, lacking: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        configured.read(_env(tmp_path, f"{{mode: {mode}}}"))
    assert f"slack.read.mode: {mode} needs" in str(refused.value)
    assert lacking in str(refused.value) and "mode: poll" in str(refused.value)


def test_config_py_is_told_to_poll_when_the_file_says_so_even_with_an_app_token(
    tmp_path: Path,
) -> None:
    env = _env(tmp_path, "{mode: poll}", THELOOP_SLACK_APP_TOKEN="xapp-1")
    assert configured.way_in(env) == "poll"
    socket = _env(tmp_path, "{catchUpSeconds: 60}", THELOOP_SLACK_APP_TOKEN="xapp-1")
    assert configured.way_in(socket) == "socket"  # no mode set: the token decides


def test_a_poll_reads_every_interval_and_a_listener_reconciles_every_catch_up() -> None:
    read = ReadSettings(catch_up_seconds=900, interval_seconds=10, mode="poll")
    assert (seconds_between(read, "poll"), seconds_between(read, "socket")) == (10, 900)
    assert "a poll of the followed threads and rooms every 10 s" in read.describe("poll")


# docs/configuration.md: catchUpSeconds below 60 is 60, with a warning; splitCheckBeats
# above 5 is 5, with a warning — each at its edge and one past it.


@pytest.mark.parametrize(
    ("raw", "seconds", "beats", "warned"),
    [
        ({"catchUpSeconds": 60}, 60, 2, []),
        ({"catchUpSeconds": 59}, 60, 2, ["slack.read.catchUpSeconds"]),
        ({"splitCheckBeats": 5}, 900, 5, []),
        ({"splitCheckBeats": 6}, 900, 5, ["slack.read.splitCheckBeats"]),
    ],
)
def test_the_reconcile_and_split_check_are_taken_at_their_edge_and_brought_back_past_it(
    raw: dict[str, int], seconds: int, beats: int, warned: list[str]
) -> None:
    said, errors, warnings = _parsed(raw)
    assert (said.catch_up_seconds, said.split_check_beats, errors) == (seconds, beats, [])
    assert [warning.split(":")[0] for warning in warnings] == warned


def test_the_app_kind_sets_the_history_methods_pace_and_page_as_slack_publishes_them() -> None:
    distributed, errors, _ = _parsed({"app": "distributed"})
    assert errors == [] and distributed.history_page() == 15
    assert distributed.history_tiers()["conversations.replies"].per_minute == 1
    assert distributed.history_tiers()["conversations.history"].per_minute == 1
    for kind in (None, "internal", "marketplace"):  # tier 3: 50+ a minute, pages of 200
        said, errors, _ = _parsed({} if kind is None else {"app": kind})
        assert errors == [] and said.history_page() == 200
        assert said.history_tiers()["conversations.replies"].per_minute == 50
    _said, errors, _ = _parsed({"app": "enterprise"})
    (error,) = errors
    assert error.startswith("slack.read.app: 'enterprise' is not one of internal, marketplace")
