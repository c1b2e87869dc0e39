"""The plugin in a real Errbot (testbot): admin commands, the webhook, the non-Slack path.

``!theloop status`` shows the resolved configuration with secrets as set or unset only, and
the queue and where the HTTP server listens; the webhook stores an event and a worker
delivers it; a port already taken is said loudly and shown as it is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.conftest import http_port
from tests.support.wait import wait_for

extra_plugin_dir = str(Path(__file__).resolve().parents[2] / "plugins")


def _ask(n: int, text: str = "Which option do you want?") -> bytes:
    return json.dumps(
        {
            "id": f"ask-{n}",
            "eventType": "session.awaiting_input",
            "workItem": f"github:acme/api#{n}",
            "text": text,
        }
    ).encode()


def test_status_shows_the_resolved_configuration_with_secrets_as_set_only(
    testbot, webhook_secret: str
) -> None:
    answer = testbot.exec_command("!theloop status")
    assert "THELOOP_WEBHOOK_SECRET: set" in answer
    assert "THELOOP_SLACK_BOT_TOKEN: unset" in answer
    assert webhook_secret not in answer
    assert "queue: 0 not delivered" in answer
    assert "last delivery error: none" in answer
    assert "thread bindings: 0" in answer
    assert "maxChars: 1500" in answer
    assert "subscribe: session.awaiting_input" in answer


@pytest.mark.theloop_env(THELOOP_WEBHOOK_SECRET=None)
def test_without_a_secret_status_and_the_webhook_say_what_to_set(testbot, post_event) -> None:
    assert "set THELOOP_WEBHOOK_SECRET" in testbot.exec_command("!theloop status")
    answer = post_event(_ask(1), secret="anything")
    assert answer.status_code == 503


@pytest.mark.theloop_yaml(
    """
    slack:
      maxChars: 900
      verbosity: chatty
      authorizedUsers: [U0123ABC]
    """
)
def test_status_shows_the_files_values_and_its_warnings(testbot) -> None:
    answer = testbot.exec_command("!theloop status")
    assert "maxChars: 900" in answer
    assert "authorizedUsers: 1" in answer
    assert "warning: slack.verbosity: 'chatty' is not one of" in answer


@pytest.mark.parametrize("command", ["!theloop status", "!theloop queue"])
def test_a_non_admin_is_refused(testbot, command: str) -> None:
    testbot.bot.sender = testbot.bot.build_identifier("mallory@localhost")
    assert "This command requires bot-admin privileges" in testbot.exec_command(command)


def test_an_event_reaches_the_admins_on_a_plain_backend_once(testbot, post_event) -> None:
    assert post_event(_ask(1, "Ship *it*?")).status_code == 202
    first = testbot.pop_message()
    assert "acme/api#1" in first
    assert "Ship" in first
    assert post_event(_ask(1)).status_code == 200  # the retry: nothing new is posted
    assert post_event(_ask(2)).status_code == 202
    assert "acme/api#2" in testbot.pop_message()


def test_events_outside_subscribe_are_not_posted(testbot, post_event) -> None:
    lifecycle = json.dumps({"id": "p1", "eventType": "phase.started", "workItem": "github:a/b#1"})
    assert post_event(lifecycle.encode()).status_code == 202
    assert post_event(_ask(3)).status_code == 202
    assert "acme/api#3" in testbot.pop_message()


def test_the_queue_lists_retries_and_drops_what_is_not_delivered(
    testbot, post_event, plugin
) -> None:
    plugin._core.worker.stop()  # hold deliveries so the queue has something to show
    for n in (1, 2):
        assert post_event(_ask(n)).status_code == 202
    plugin._core.inbox.park("ask-2", "invalid_blocks")

    listing = testbot.exec_command("!theloop queue")
    assert "2 not delivered" in listing
    assert "ask-1" in listing and "session.awaiting_input · github:acme/api#1" in listing
    assert "PARKED" in listing and "invalid_blocks" in listing
    status = testbot.exec_command("!theloop status")
    assert "1 parked" in status and "invalid_blocks" in status

    assert "drop: done" in testbot.exec_command("!theloop queue drop ask-1")
    assert post_event(_ask(1)).status_code == 200  # a dropped id stays known
    assert "retry: done" in testbot.exec_command("!theloop queue retry ask-2")
    assert "No undelivered item" in testbot.exec_command("!theloop queue retry ask-9")
    assert "usage: !theloop queue" in testbot.exec_command("!theloop queue purge")

    # A restart of the plugin resumes delivery: ask-2 arrives, ask-1 (dropped) never.
    assert "deactivated" in testbot.exec_command("!plugin deactivate TheLoop")
    testbot.push_message("!plugin activate TheLoop")
    # The delivery may be said before or after Errbot's "activated": both are said.
    said = [testbot.pop_message(), testbot.pop_message()]
    assert any("activated" in line for line in said)
    assert any("acme/api#2" in line for line in said)
    # Said, then recorded as delivered: the listing empties once the slot records it.
    wait_for(
        lambda: "The queue is empty" in testbot.exec_command("!theloop queue"),
        30,
        "ask-2's delivery to be recorded",
    )


def test_a_bad_settings_file_refuses_activation_naming_the_key(
    testbot, theloop_env, post_event
) -> None:
    theloop_env.write_text("slack:\n  maxChars: lots\n", encoding="utf-8")
    testbot.exec_command("!plugin deactivate TheLoop")
    answer = testbot.exec_command("!plugin activate TheLoop")
    assert "slack.maxChars: must be an integer from 200 to 3000, got 'lots'" in answer
    with pytest.raises(ConnectionRefusedError):  # no server: nothing takes events unheard
        post_event(_ask(1))


def test_status_shows_where_the_server_listens(testbot, plugin) -> None:
    assert f"http server: listening on 127.0.0.1:{http_port(plugin)}" in testbot.exec_command(
        "!theloop status"
    )


def test_a_taken_port_is_said_to_the_admins_and_shown_in_status(
    testbot, plugin, monkeypatch, taken_port: int
) -> None:
    monkeypatch.setenv("THELOOP_HTTP_PORT", str(taken_port))
    testbot.exec_command("!plugin deactivate TheLoop")
    testbot.push_message("!plugin activate TheLoop")
    told = testbot.pop_message()  # the admins hear it during the activation
    assert "activated" in testbot.pop_message()
    assert f"NOT LISTENING: cannot listen on 127.0.0.1:{taken_port}" in told
    assert "THELOOP_HTTP_PORT" in told
    status = testbot.exec_command("!theloop status")
    assert f"http server: NOT LISTENING: cannot listen on 127.0.0.1:{taken_port}" in status
    assert "unreachable" in status and "signed requests accepted" not in status


def test_the_asks_on_record_and_the_oldest_waiting_one_are_shown_to_admins(
    testbot, post_event
) -> None:
    assert "Asks waiting now: none." in testbot.exec_command("!theloop asks")
    assert post_event(_ask(4, "Which database?")).status_code == 202
    assert "acme/api#4" in testbot.pop_message()  # the room was shown it: it waits now
    waiting = testbot.exec_command("!theloop asks")
    assert "Asks waiting now (1):" in waiting and "github:acme/api#4 question" in waiting
    assert "question" in testbot.exec_command("!theloop asks github:acme/api#4")
    assert "asks: the oldest waiting is github:acme/api#4's question" in testbot.exec_command(
        "!theloop status"
    )
    assert "is not a time" in testbot.exec_command("!theloop asks --since someday")
    testbot.bot.sender = testbot.bot.build_identifier("mallory@localhost")
    assert "requires bot-admin privileges" in testbot.exec_command("!theloop asks")
