"""Where the bot hears people, end to end: a real errbot, the real SlackV3 backend.

A group DM with the bot (Slack's ``mpim``) is a room like any other: the-loop's events are
posted there and a reply to the bot in a work item's thread reaches the session. A room
an admin switches to "listen to everything" takes plain messages in a work item's thread
as replies, without a mention; everywhere else a reply is still what mentions the bot.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, SlackBot, StartBot, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:acme/api#7"
REPO = "acme/api"
ALICE = "U0ALICE01"  # a decider, and the bot's admin (THELOOP_ADMINS)
ALICE_DM = "D0ALICE01"  # her direct message with the bot, where admin commands are said
GROUP_DM = "G0GROUPDM1"
TIMEOUT = 60.0


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    loop: FakeLoop

    def thread(self, room: str, n: str) -> str:
        """the-loop says something on the work item in ``room``: its thread's ts."""
        event = {"id": f"hear-{n}", "eventType": "comment.agent", "workItem": ITEM}
        event["text"] = "I have started on the migration."
        message = self.bot.show(event, TIMEOUT, room)
        self.bot.process.wait_delivered(TIMEOUT)
        return str(message.get("thread_ts") or message["ts"])

    def reactions(self, ts: str) -> list[str]:
        calls = self.slack.calls_to("reactions.add")
        return [c.args["name"] for c in calls if c.args["timestamp"] == ts]

    def relayed(self) -> list[str]:
        return [reply["text"] for reply in self.loop.replies]

    def said_by_bot(self, room: str) -> list[dict[str, Any]]:
        return [m for m in self.slack.messages(room) if m.get("user") == BOT_USER]


def _rig(start: StartBot, slack: FakeSlack, channel: str) -> Iterator[Rig]:
    settings = f"""
slack:
  channel: "{channel}"
  subscribe: [comment.agent]
  authorizedUsers: [{ALICE}]
"""
    with (
        FakeGitHub({REPO: {7}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(start, settings, github, loop, "e2e-slack-signing-secret") as bot,
    ):
        yield Rig(bot, slack, loop)


@pytest.fixture
def group_dm(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    fake_slack.add_channel("mpdm-alice--bob--theloop-1", GROUP_DM, group_dm=True)
    yield from _rig(slack_bot, fake_slack, GROUP_DM)


def test_a_group_dm_with_the_bot_is_a_room_its_replies_reach_the_session(group_dm: Rig) -> None:
    thread = group_dm.thread(GROUP_DM, "g1")
    assert not group_dm.slack.messages(LOOP), "posted in the group DM, nowhere else"

    plain = group_dm.bot.say(ALICE, "what do you two think?", thread, GROUP_DM)
    said = group_dm.bot.say(ALICE, f"<@{BOT_USER}> prefer the smaller migration", thread, GROUP_DM)
    wait_for(lambda: "white_check_mark" in group_dm.reactions(said["ts"]), TIMEOUT, "the ✅")
    assert group_dm.relayed() == ["prefer the smaller migration"]
    assert not group_dm.reactions(plain["ts"]), "a plain message there is conversation"

    group_dm.bot.say(ALICE, "!theloop", "", GROUP_DM)
    wait_for(
        lambda: any("theloop posts" in m["text"] for m in group_dm.said_by_bot(GROUP_DM)),
        TIMEOUT,
        "the command answered in the group DM",
    )


@pytest.fixture
def room(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    fake_slack.add_channel("alice-dm", ALICE_DM)
    yield from _rig(slack_bot, fake_slack, LOOP)


def _admin_says(rig: Rig, command: str, answer: str) -> None:
    """Alice, an admin, types ``command`` in her DM with the bot (Errbot takes admin
    commands there only) and it answers ``answer``."""
    rig.bot.say(ALICE, command, "", ALICE_DM)
    wait_for(
        lambda: any(answer in m["text"] for m in rig.said_by_bot(ALICE_DM)),
        TIMEOUT,
        f"the bot to say {answer!r}",
    )


def test_a_room_switched_to_listen_to_everything_takes_plain_replies_across_restarts(
    room: Rig,
) -> None:
    thread = room.thread(LOOP, "r1")
    plain = room.bot.say(ALICE, "what about the old rows?", thread)
    mention = room.bot.say(ALICE, f"<@{BOT_USER}> keep the old rows", thread)
    wait_for(lambda: "white_check_mark" in room.reactions(mention["ts"]), TIMEOUT, "the ✅")
    assert room.relayed() == ["keep the old rows"], "by default a plain message is not a reply"
    assert not room.reactions(plain["ts"])

    _admin_says(room, "!theloop listen all #the-loop", "`#the-loop` now listens to everything")
    _admin_says(room, "!theloop status", f"listening to everything: <#{LOOP}>")
    said = room.bot.say(ALICE, "drop the old rows after all", thread)
    wait_for(lambda: "white_check_mark" in room.reactions(said["ts"]), TIMEOUT, "the ✅")
    assert room.relayed()[-1] == "drop the old rows after all"

    room.bot.process.restart()
    again = room.bot.say(ALICE, "and vacuum afterwards", thread)
    wait_for(lambda: "white_check_mark" in room.reactions(again["ts"]), TIMEOUT, "the ✅")
    assert room.relayed()[-1] == "and vacuum afterwards"

    _admin_says(room, "!theloop listen addressed #the-loop", "now hears only words addressed")
    quiet = room.bot.say(ALICE, "just thinking aloud", thread)
    last = room.bot.say(ALICE, f"<@{BOT_USER}> that is all", thread)
    wait_for(lambda: "white_check_mark" in room.reactions(last["ts"]), TIMEOUT, "the ✅")
    assert "just thinking aloud" not in room.relayed()
    assert not room.reactions(quiet["ts"])


@pytest.fixture
def direct(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    fake_slack.add_channel("alice-dm", ALICE_DM)
    yield from _rig(slack_bot, fake_slack, ALICE_DM)


def test_in_a_direct_message_with_the_bot_every_message_is_to_it(direct: Rig) -> None:
    """As in the-loop's room, a 1:1 DM hears every message: a plain reply in a work item's
    thread there reaches its session, no mention needed — the only other person is the bot."""
    thread = direct.thread(ALICE_DM, "d1")
    plain = direct.bot.say(ALICE, "keep the old rows", thread, ALICE_DM)
    wait_for(lambda: "white_check_mark" in direct.reactions(plain["ts"]), TIMEOUT, "the ✅")
    assert direct.relayed() == ["keep the old rows"]
