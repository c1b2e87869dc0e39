"""Routing by who caused a work item, end to end: a real errbot on the real SlackV3 backend
(Socket Mode against the loopback fake of Slack), two loopback fakes of the-loop's control
plane standing for instances A and B, and a loopback fake of GitHub.

Neither instance claims the kickoff repository (each names its own under ``workItems`` and
neither learns), and B registers Bob (``actors: {slack: [Bob]}``), as the-loop's
``gateway.actors`` would. Bob asks the bot for a new work item: it is opened, and what he
then types in its thread reaches B's session once — never A's, though A has a session for
it too — after the bot was restarted in between.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, StartBot
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import REPLY, FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SECRET_A, SECRET_B = "a" * 40, "b" * 40
BOB = "U0BOB0001"
NEW = "github:gamma/x#1"  # the first issue opened in the kickoff repository
SETTINGS = """
slack:
  channel: "#the-loop"
  authorizedUsers: [U0BOB0001]
  kickoff: {repo: gamma/x}
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: %s
    workItems: {repos: ["acme/*"], learn: false}
  team-b:
    secret: {env: TEAM_B_SECRET}
    api: %s
    workItems: {repos: ["beta/*"], learn: false}
    actors: {slack: [U0BOB0001], github: [bob-gh]}
"""
TIMEOUT = 60.0
OPENED = "🆕 Opened"


@pytest.fixture
def rig(slack_bot: StartBot) -> Iterator[tuple[SlackBot, FakeLoop, FakeLoop]]:
    with (
        FakeGitHub({"gamma/x": set()}) as github,
        FakeLoop({NEW: False}) as a,  # A would take a reply for it: it must not be offered one
        FakeLoop({NEW: False}) as b,
    ):
        env = {
            "THELOOP_WEBHOOK_SECRET": "",  # instances: each names its own
            "TEAM_A_SECRET": SECRET_A,
            "TEAM_B_SECRET": SECRET_B,
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_SLACK_SIGNING_SECRET": "e2e-slack-signing-secret",
        }
        bot = slack_bot(SETTINGS % (a.url, b.url), env)
        try:
            yield bot, a, b
        finally:
            bot.process.kill()  # before the fakes it relays to go away


def said_in(slack: FakeSlack, asked: dict[str, Any], words: str) -> list[dict[str, Any]]:
    return [m for m in slack.thread(LOOP, asked["ts"]) if words in str(m.get("text", ""))]


def test_a_work_item_nobody_claims_goes_to_the_instance_that_registered_who_asked(
    rig: tuple[SlackBot, FakeLoop, FakeLoop], fake_slack: FakeSlack
) -> None:
    bot, a, b = rig
    asked = bot.say(BOB, f"<@{BOT_USER}> Retry the webhook on 502", "")
    (line,) = wait_for(lambda: said_in(fake_slack, asked, OPENED), TIMEOUT, "the opened line")
    assert NEW in line["text"]
    bot.process.kill()  # the routing is kept, not remembered
    bot.process.start(timeout=START_TIMEOUT)

    said = bot.say(BOB, f"<@{BOT_USER}> use the staging database", asked["ts"])

    def landed() -> bool:
        calls = fake_slack.calls_to("reactions.add")
        names = [c.args["name"] for c in calls if c.args["timestamp"] == said["ts"]]
        return "white_check_mark" in names

    wait_for(landed, TIMEOUT, "the reply relayed")
    assert b.replies == [
        {"ref": NEW, "text": "use the staging database", "actor": f"slack:{BOB}", "comment": False}
    ]
    assert [q for q in a.requests if q.path == REPLY] == [] and a.replies == []
