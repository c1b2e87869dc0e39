"""``slack.reactions`` and the token variables the-loop's configuration names, end to end.

A real errbot on the SlackV3 backend against the loopback fake of Slack, its tokens only
in the variables ``slack.botTokenEnv``/``appTokenEnv`` name: it connects, an answer in a
question's thread reaches the session, and the message gets the configured emoji — with
the ``error`` moment set to none, an unauthorized member's words get no reaction at all.
"""

from __future__ import annotations

import pytest

from tests.e2e.slackbot import LOOP, StartBot, corpus, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
ALICE, BOB = "U0ALICE01", "U0BOB0001"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, comment.human, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
  botTokenEnv: ACME_SLACK_BOT
  appTokenEnv: ACME_SLACK_APP
  reactions: {received: ":hourglass:", completed: rocket, error: ""}
"""
TIMEOUT = 120.0  # a bound on waiting on a loaded machine, never an expectation


def test_the_configured_emoji_mark_each_moment_and_the_named_tokens_connect(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    tokens = {
        "ACME_SLACK_BOT": BOT_TOKEN,
        "ACME_SLACK_APP": APP_TOKEN,
        "THELOOP_SLACK_BOT_TOKEN": "",
        "THELOOP_SLACK_APP_TOKEN": "",
    }
    with FakeGitHub({}) as github, FakeLoop({ITEM: False}) as loop:
        start = lambda yaml, env=None: slack_bot(yaml, {**tokens, **(env or {})})  # noqa: E731
        with relaying(start, SETTINGS, github, loop, "e2e-signing") as bot:
            ask = bot.show(corpus("15"), TIMEOUT)
            answer = bot.say(ALICE, "Option 2, please", ask["thread_ts"])
            wait_for(lambda: loop.replies, TIMEOUT, "the answer to reach the session")

            def reactions(ts: str) -> list[str]:
                calls = fake_slack.calls_to("reactions.add")
                return [c.args["name"] for c in calls if c.args["timestamp"] == ts]

            wait_for(lambda: "rocket" in reactions(answer["ts"]), TIMEOUT, "the completed emoji")
            assert reactions(answer["ts"]) == ["hourglass", "rocket"]

            refused = bot.say(BOB, "approve", ask["thread_ts"])
            told = lambda: any(  # noqa: E731
                c.args["user"] == BOB for c in fake_slack.calls_to("chat.postEphemeral")
            )
            wait_for(told, TIMEOUT, "Bob to be told why not")
            assert reactions(refused["ts"]) == []
            assert [m for m in fake_slack.messages(LOOP) if m["ts"] == ask["ts"]]
