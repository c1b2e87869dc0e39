"""The plugin in a real Errbot (testbot): the Slack app manifest and the doctor, in chat."""

from __future__ import annotations

from pathlib import Path

import yaml

extra_plugin_dir = str(Path(__file__).resolve().parents[2] / "plugins")


def _fenced(answer: str) -> str:
    # The lead line, then the manifest (the test backend renders the fence away).
    return answer.split("\n", 1)[1].replace("```", "")


def test_manifest_in_chat_is_the_shipped_one_for_socket_mode(testbot) -> None:
    answer = testbot.exec_command("!theloop manifest")
    assert "Socket Mode" in answer
    drawn = yaml.safe_load(_fenced(answer))
    shipped = Path(__file__).resolve().parents[2] / "slack-app-manifest.yaml"
    assert drawn == yaml.safe_load(shipped.read_text())


def test_manifest_in_chat_for_http_names_the_request_urls(testbot) -> None:
    answer = testbot.exec_command("!theloop manifest --http https://bot.example.com --name Acme")
    assert "HTTP mode" in answer
    assert "https://bot.example.com/theloop/slack/interactive" in answer
    assert "socket_mode_enabled: false" in answer
    assert "name: Acme" in answer


def test_manifest_in_chat_says_what_is_wrong_with_a_bad_url(testbot) -> None:
    answer = testbot.exec_command("!theloop manifest --http http://plain.example")
    assert "https://" in answer and "display_information" not in answer


def test_doctor_in_chat_off_slack_checks_what_it_can(testbot) -> None:
    answer = testbot.exec_command("!theloop doctor")
    assert "theloop doctor:" in answer
    assert "not on Slack" in answer
    assert "THELOOP_WEBHOOK_SECRET is set" in answer
