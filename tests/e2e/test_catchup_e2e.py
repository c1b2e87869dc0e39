"""Catch-up that misses nothing, end to end: a real errbot on SlackV3 against the fakes.

While the bot stays connected, Slack's envelope for a message can be lost — dropped on
the way, or handed to a second Socket Mode consumer of the same app. Shown here: an answer
in a work item's thread and a kickoff message at the top of the kickoff room, both whose
envelopes never reach the bot, are read by the periodic reconcile (``slack.read``) and
acted on once; when Slack's late delivery of the same envelopes arrives after that,
nothing is doubled. And the listener's own split check, after the reconcile: with a second
consumer on the app token, the heartbeats come back short, and ``!theloop status``, the
doctor and the log say a split is suspected.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.web import WebClient

from tests.e2e.slackbot import LOOP, StartBot, corpus, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO = "MadaraUchiha-314/the-loop"
ALICE, ALICE_DM = "U0ALICE01", "D0ALICE01"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, comment.human, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
  kickoff: {repo: acme/api}
  read: {catchUpSeconds: 60, splitCheckBeats: 2}
people: {U0ALICE01: alice-gh}
"""
#: Past one reconcile (60 s, the floor) with room to spare on a busy machine.
RECONCILED = 180.0
TIMEOUT = 60.0


def _ask(slack: FakeSlack, command: str, until: str) -> str:
    """Say ``command`` to the bot in a DM; its answer, once it contains ``until``."""
    dm = slack.channel_id(ALICE_DM) or slack.add_channel("alice-dm", ALICE_DM)
    message = {"type": "message", "channel_type": "im", "user": ALICE, "text": command}
    event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": "1800000000.4"}}
    assert slack.push_envelope(event) is not None, "the bot did not ack the command"

    def answer() -> str:
        joined = "\n".join(str(m.get("text") or "") for m in slack.messages(dm))
        return joined if until in joined else ""

    return wait_for(answer, TIMEOUT, f"an answer with {until!r}")


def test_messages_whose_envelopes_were_lost_are_read_by_the_reconcile_once(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    with (
        FakeGitHub({REPO: {260}, "acme/api": set()}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, "e2e-signing") as bot,
    ):
        ask = bot.show(corpus("15"), TIMEOUT)
        # Said in Slack; their envelopes never reach the bot.
        answer = fake_slack.say(LOOP, ALICE, "Option 2, please", thread_ts=ask["thread_ts"])
        kickoff = fake_slack.say(LOOP, ALICE, f"<@{BOT_USER}> Retry the webhook on 502")
        wait_for(lambda: loop.replies, RECONCILED, "the lost answer, read by the reconcile")
        wait_for(lambda: github.opened, TIMEOUT, "the lost kickoff, read by the reconcile")

        # Slack's late delivery of both: read already, so acted on no more.
        for message in (answer, kickoff):
            assert fake_slack.push_envelope({"type": "event_callback", "event": message})
        # A second question, answered after them: relayed after anything stored before it.
        again = bot.show(corpus("15") | {"id": "e2e-the-next-ask"}, TIMEOUT)
        bot.say(ALICE, "Option 1 this time", again["thread_ts"])
        wait_for(lambda: len(loop.replies) == 2, TIMEOUT, "the answer said after them")
        assert [r["text"] for r in loop.replies] == ["Option 2, please", "Option 1 this time"]
        assert [o[2] for o in github.opened] == ["Retry the webhook on 502"]


def test_the_listeners_split_check_shows_a_second_consumer(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    fake_slack.echo_posts = True  # Slack sends the app its own messages, to one connection
    other = SocketModeClient(
        app_token=APP_TOKEN, web_client=WebClient(token=BOT_TOKEN, base_url=fake_slack.url)
    )
    other.connect()
    try:
        wait_for(lambda: other.is_connected(), TIMEOUT, "a second connection")
        bot = slack_bot(SETTINGS)
        checked = lambda: len(fake_slack.calls_to("chat.delete")) >= 2  # noqa: E731
        wait_for(checked, RECONCILED, "the listener's check after the first reconcile")
    finally:
        other.close()
    status = _ask(fake_slack, "!theloop status", "split check")
    assert "split check" in status and "SUSPECTED — 1/2 heartbeats came back" in status
    report = _ask(fake_slack, "!theloop doctor", "the listener's own check")
    assert "another connection of this app may be taking part of its events" in report
    log = (Path(bot.process.data_dir) / "errbot.log").read_text(encoding="utf-8")
    assert "second consumer suspected" in log
    assert fake_slack.top_level(LOOP) == []  # the heartbeats were taken down again
