"""Routing by who caused a work item, end to end: a real errbot on the real SlackV3 backend
(Socket Mode against the loopback fake of Slack), two loopback fakes of the-loop's control
plane standing for instances A and B, and a loopback fake of GitHub.

Neither instance claims the repository (each names its own under ``workItems`` and neither
learns); each registers people (``actors``), as the-loop's ``gateway.actors`` would. A
work item Bob asks the bot for goes to the instance that registered Bob, even after a
restart; an issue opened on GitHub goes to the instance that registered its author. What
is typed for it reaches that instance's session once — never the other's, though the other
has a session for it too.
"""

from __future__ import annotations

import contextlib
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
OLD = "github:gamma/x#5"  # an issue opened on GitHub
ALICE = "U0ALICE01"  # the bot's admin
SETTINGS = """
slack:
  channel: "#the-loop"
  authorizedUsers: [U0BOB0001, U0ALICE01]
  kickoff: {repo: gamma/x}
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: %%s
    workItems: {repos: ["acme/*"], learn: false}
    actors: {slack: %s}
  team-b:
    secret: {env: TEAM_B_SECRET}
    api: %%s
    workItems: {repos: ["beta/*"], learn: false}
    actors: {slack: %s, github: [carol-gh]}
"""
TIMEOUT = 60.0
OPENED = "🆕 Opened"


Rig = tuple[SlackBot, FakeLoop, FakeLoop, FakeGitHub]


@contextlib.contextmanager
def started(start: StartBot, settings: str, issues: dict[str, set[int]]) -> Iterator[Rig]:
    with (
        FakeGitHub(issues) as github,
        FakeLoop({NEW: False, OLD: False}) as a,  # A would take a reply: it must not get one
        FakeLoop({NEW: False, OLD: False}) as b,
    ):
        env = {
            "THELOOP_WEBHOOK_SECRET": "",  # instances: each names its own
            "TEAM_A_SECRET": SECRET_A,
            "TEAM_B_SECRET": SECRET_B,
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_SLACK_SIGNING_SECRET": "e2e-slack-signing-secret",
        }
        bot = start(settings % (a.url, b.url), env)
        try:
            yield bot, a, b, github
        finally:
            bot.process.kill()  # before the fakes it relays to go away


def said_in(slack: FakeSlack, asked: dict[str, Any], words: str) -> list[dict[str, Any]]:
    return [m for m in slack.thread(LOOP, asked["ts"]) if words in str(m.get("text", ""))]


def relayed(slack: FakeSlack, said: dict[str, Any]) -> None:
    """Wait for ✅ on ``said``: its words reached the-loop."""

    def landed() -> bool:
        calls = slack.calls_to("reactions.add")
        names = [c.args["name"] for c in calls if c.args["timestamp"] == said["ts"]]
        return "white_check_mark" in names

    wait_for(landed, TIMEOUT, "the reply relayed")


def reply(ref: str, member: str) -> dict[str, Any]:
    return {
        "ref": ref,
        "text": "use the staging database",
        "actor": f"slack:{member}",
        "comment": False,
    }


def test_a_work_item_nobody_claims_goes_to_the_instance_that_registered_who_asked(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    with started(slack_bot, SETTINGS % ("[]", "[U0BOB0001]"), {"gamma/x": set()}) as (bot, a, b, _):
        asked = bot.say(BOB, f"<@{BOT_USER}> Retry the webhook on 502", "")
        (line,) = wait_for(lambda: said_in(fake_slack, asked, OPENED), TIMEOUT, "the line")
        assert NEW in line["text"]
        bot.process.kill()  # the routing is kept, not remembered
        bot.process.start(timeout=START_TIMEOUT)

        said = bot.say(BOB, f"<@{BOT_USER}> use the staging database", asked["ts"])
        relayed(fake_slack, said)
        assert b.replies == [reply(NEW, BOB)]
        assert [q for q in a.requests if q.path == REPLY] == [] and a.replies == []


def test_an_issue_opened_on_github_goes_to_the_instance_that_registered_its_author(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """The issue was opened on GitHub by Carol, whom B registers. Bob, whom A registers,
    types the first words for it in the room an admin bound to it: the work item is
    Carol's doing, so it is B's — whoever speaks in it."""
    with started(slack_bot, SETTINGS % ("[U0BOB0001]", "[]"), {"gamma/x": {5}}) as (
        bot,
        a,
        b,
        github,
    ):
        github.authors[("gamma/x", 5)] = "Carol-GH"
        room = fake_slack.add_channel("gamma-x", "C0GAMMA01")
        dm = fake_slack.add_channel("alice-dm", "D0ALICE01")
        bot.say(ALICE, f"!theloop bind {OLD} #gamma-x", "", room=dm)  # as people type it
        answered = wait_for(lambda: fake_slack.messages(dm)[1:], TIMEOUT, "the bind's answer")
        assert "now posts to <#C0GAMMA01>" in answered[0]["text"]
        said = bot.say(BOB, f"<@{BOT_USER}> use the staging database", "", room=room)
        relayed(fake_slack, said)
        assert b.replies == [reply(OLD, BOB)]
        assert [q for q in a.requests if q.path == REPLY] == [] and a.replies == []
