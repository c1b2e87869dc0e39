"""Poll mode, end to end: a real errbot on SlackV3 with neither an app token nor a signing secret.

Started as a team without Socket Mode and without a public request URL runs it: a bot token
alone and ``slack.read.mode: poll`` at the lowest interval taken. No Socket Mode connection
is ever opened and no Events API request is ever sent: what a member types in a followed
thread is only in Slack's history, and the bot reads it there. Shown here: an answer typed
in an ask's thread reaches the-loop's session once — read by the-loop's own route model —
acknowledged on the message as a live one is; and neither the ask nor the member's App Home
carries a button whose press nobody would receive (a link opens without the bot).
"""

from __future__ import annotations

import json

import pytest
from the_loop.api.routes import SessionReplyBody

from tests.e2e.slackbot import LOOP, StartBot, corpus, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import FakeSlack
from tests.support import signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO = "MadaraUchiha-314/the-loop"
ALICE = "U0ALICE01"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.human, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
  read: {mode: poll, intervalSeconds: 10}
people: {U0ALICE01: alice-gh}
"""
#: Past a poll (10 s) and the ask's answer relayed, with room to spare on a busy machine.
TIMEOUT = 90.0
NO_LISTENER = {"THELOOP_SLACK_APP_TOKEN": ""}  # and relaying() is given no signing secret


def _reads_of(slack: FakeSlack, thread: str) -> int:
    """How many times the bot has read ``thread`` from Slack's history."""
    return sum(1 for c in slack.calls_to("conversations.replies") if c.args.get("ts") == thread)


def test_an_answer_only_in_slacks_history_is_read_by_the_poll_and_reaches_the_loop_once(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    with (
        FakeGitHub({REPO: {260}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, "", NO_LISTENER) as bot,
    ):
        ask = bot.show(corpus("15"), TIMEOUT)
        bot.process.wait_delivered(TIMEOUT)
        controls = [e for b in ask.get("blocks") or [] for e in b.get("elements") or []]
        assert controls and all(e.get("url") for e in controls if e.get("type") == "button")
        listed = f"theloop-home:{LOOP}:{ask['ts']}"  # the Home lists it, with no button
        wait_for(lambda: listed in str(fake_slack.home_of(ALICE)), TIMEOUT, "the ask listed")
        assert [b for b in fake_slack.home_of(ALICE)["blocks"] if "accessory" in b] == []

        # Typed in the thread: in Slack's history, and sent to the bot by no one.
        answer = fake_slack.say(LOOP, ALICE, "Option 2, please", thread_ts=ask["thread_ts"])
        (reply,) = wait_for(lambda: loop.replies, TIMEOUT, "the answer, read by the poll")
        assert SessionReplyBody.model_validate(reply).model_dump(exclude={"instance"}) == {
            "ref": ITEM,
            "text": "Option 2, please",
            "actor": f"slack:{ALICE}",
            "comment": True,
        }

        def acknowledged() -> list[str]:
            calls = fake_slack.calls_to("reactions.add")
            said = [c.args["name"] for c in calls if c.args["timestamp"] == answer["ts"]]
            return said if "white_check_mark" in said else []

        assert wait_for(acknowledged, TIMEOUT, "the ✅ on the answer") == [
            "eyes",
            "white_check_mark",
        ]
        # Two more polls read the thread again: the answer is not taken a second time.
        read = _reads_of(fake_slack, ask["thread_ts"])
        wait_for(lambda: _reads_of(fake_slack, ask["thread_ts"]) >= read + 2, TIMEOUT, "polls")
        assert len(loop.replies) == 1

        # Neither way in was ever open.
        assert fake_slack.calls_to("apps.connections.open") == []
        assert fake_slack.socket_connected() is False
        event = json.dumps({"type": "event_callback", "event": answer}).encode()
        headers = {**signed.slack_headers("any", event), "Content-Type": "application/json"}
        host, port = bot.process.host, bot.process.port
        assert signed.post(host, port, "/slack/events", event, headers)[0] == 404
