"""The plugin in a real Errbot (testbot): the Slack app manifest and the doctor, in chat."""

from __future__ import annotations

import json
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


def _ask() -> bytes:
    event = {"eventType": "session.awaiting_input", "workItem": "github:acme/api#7", "text": "?"}
    return json.dumps(event).encode()


def test_doctor_in_chat_tells_a_wrong_secret_from_the_webhooks_own_answers(
    testbot, post_event
) -> None:
    assert "no event has reached the webhook" in testbot.exec_command("!theloop doctor")
    assert post_event(_ask(), secret="not-the-bots").status_code == 401
    answer = testbot.exec_command("!theloop doctor")
    assert "all 1 of the last 1 request(s) were refused as badly signed (401)" in answer
    assert post_event(_ask()).status_code == 202
    testbot.push_message("!theloop doctor")
    # The accepted event is posted to the admin too: the doctor's answer is the one that says so.
    answers = [testbot.pop_message() for _ in range(2)]
    assert any("1 accepted, 1 refused as badly signed" in a for a in answers), answers
