"""``!theloop doctor`` in a real SlackV3 bot (Socket Mode against the fake Slack).

The probe listens on the bot's own connection, which the backend acknowledges: every echo
comes back while the bot is the app's only consumer, and fewer once another connection on
the same app token takes its share.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.socket_mode import SocketModeClient

from tests.e2e.slackbot import SlackBot, StartBot
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SETTINGS = 'slack:\n  channel: "#the-loop"\n  authorizedUsers: [U0ALICE01]\n'
ALICE, ALICE_DM = "U0ALICE01", "D0ALICE01"  # an admin (THELOOP_ADMINS), her DM with the bot
TIMEOUT = 90.0


@pytest.fixture
def bot(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[SlackBot]:
    fake_slack.echo_posts = True  # Slack sends the app the bot's own messages too
    yield slack_bot(SETTINGS)


def _doctor(slack: FakeSlack) -> str:
    dm = slack.channel_id(ALICE_DM) or slack.add_channel("alice-dm", ALICE_DM)
    before = len(slack.messages(dm))
    message = {"type": "message", "channel_type": "im", "user": ALICE, "text": "!theloop doctor"}
    event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": "1800000000.1"}}
    assert slack.push_envelope(event) is not None, "the bot did not ack the command"

    def answer() -> str:
        texts = [str(m.get("text") or "") for m in slack.messages(dm)[before:]]
        joined = "\n".join(texts)
        return joined if "second consumer" in joined else ""

    return wait_for(answer, TIMEOUT, "the doctor's answer")


def test_in_chat_the_doctor_hears_every_echo_on_the_bots_own_connection(
    bot: SlackBot, fake_slack: FakeSlack
) -> None:
    report = _doctor(fake_slack)
    assert "Socket Mode: connected" in report
    assert "3/3 echoes came back" in report
    assert "room #the-loop (slack.channel): found (C0LOOP0001) and the bot is in it" in report
    assert fake_slack.messages("the-loop") == []  # the probe cleaned up after itself


def test_in_chat_another_consumer_on_the_same_token_shows_as_evidence(
    bot: SlackBot, fake_slack: FakeSlack
) -> None:
    other = SocketModeClient(
        app_token=APP_TOKEN, web_client=WebClient(token=BOT_TOKEN, base_url=fake_slack.url)
    )
    other.connect()
    try:
        wait_for(lambda: other.is_connected(), TIMEOUT, "a second connection")
        report = _doctor(fake_slack)
    finally:
        other.close()
    assert "another connection of this app may be taking part of its events" in report
    assert "evidence, not proof" in report
