"""Binding a work item to a room of its own, by an admin, in a real Errbot (testbot)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

extra_plugin_dir = str(Path(__file__).resolve().parents[2] / "plugins")


def test_an_admin_binds_a_work_item_and_its_events_go_there(
    testbot, post_event, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent_to: list[str] = []
    send = testbot.bot.send_message

    def recording(message) -> None:
        sent_to.append(str(message.to))
        send(message)

    monkeypatch.setattr(testbot.bot, "send_message", recording)
    answer = testbot.exec_command("!theloop bind github:acme/api#7 #api-war-room")
    assert "now posts to #api-war-room" in answer
    assert "github:acme/api#7" in testbot.exec_command("!theloop bind")
    ask = {"id": "ask-7", "eventType": "session.awaiting_input", "workItem": "github:acme/api#7"}
    assert post_event(json.dumps(ask).encode()).status_code == 202
    assert "acme/api#7" in testbot.pop_message()
    assert sent_to[-1] == "#api-war-room"
    assert "posts to its configured room again" in testbot.exec_command(
        "!theloop unbind github:acme/api#7"
    )


def test_binding_is_for_admins_only(testbot) -> None:
    testbot.bot.sender = testbot.bot.build_identifier("mallory@localhost")
    for command in ("!theloop bind github:acme/api#7 #mine", "!theloop unbind github:acme/api#7"):
        assert "This command requires bot-admin privileges" in testbot.exec_command(command)
