"""What waits on me, in Slack's App Home tab, end to end: a real errbot on the real SlackV3
backend (Socket Mode against the loopback fake of Slack, which publishes Home tabs as Slack
does and refuses one over 100 blocks), two loopback fakes of the-loop's control plane for
two instances, and a loopback fake of GitHub for the relayed answers.

Nothing about attention is configured. Instance A's gate is posted in one room and instance
B's in another; Alice, the decider, finds both on her Home — A's first, the older — each
with its Approve; opening the tab draws it again. Her press there is relayed once (the
comment read by the real the-loop's envelope parser), the gate in its thread says who
pressed, and her Home drops it and lists it under what she answered; the same stale Home
pressed again relays nothing more.

The cap: with the bot running, the asks are put straight into its ask store (98 of them,
then one more: more gates than the bot could be sent in a test's time at Slack's posting
pace), and the Home opened: at 100 blocks every ask is shown; one past, the last gives way
to a line saying how many more wait.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from the_loop.channels.envelope import parse as parse_envelope

from looproom.attention.record import Ask
from looproom.attention.store import sqlite_asks
from tests.e2e.slackbot import API_LOOP, LOOP, SlackBot, StartBot, event_key
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import FakeSlack
from tests.support import signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SECRET_A, SECRET_B = "a" * 40, "b" * 40
ITEM_A, ITEM_B = "github:acme/api#7", "github:beta/web#3"
ALICE = "U0ALICE01"
SIGNING_SECRET = "e2e-slack-signing-secret"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [phase-approval-pending]
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
rooms: {"beta/*": "#api-loop"}
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: %s
    workItems: {repos: ["acme/*"], learn: false}
  team-b:
    secret: {env: TEAM_B_SECRET}
    api: %s
"""
TIMEOUT = 60.0


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub

    def gate(self, item: str, secret: str, room: str) -> dict[str, Any]:
        """An instance's gate on ``item``: its message in ``room``, once posted."""
        event = {
            "id": f"gate-{item}",
            "eventType": "phase-approval-pending",
            "workItem": item,
            "text": f"the-loop: {item} is at *design-approval* (phase-approval-pending).",
            "detail": {"node": "design-approval"},
        }
        body = json.dumps(event).encode()
        process = self.bot.process
        status = signed.post(
            process.host,
            process.port,
            signed.WEBHOOK_PATH,
            body,
            signed.webhook_headers(secret, body),
        )[0]
        assert status == 202

        def posted() -> list[dict[str, Any]]:
            return [m for m in self.slack.messages(room) if event_key(m) == event["id"]]

        return wait_for(posted, TIMEOUT, f"the gate of {item}")[0]

    def home(self, what: str, until: Any) -> list[dict[str, Any]]:
        """Alice's Home's blocks, once ``until(blocks)`` holds."""
        return wait_for(
            lambda: b if until(b := self.slack.home_of(ALICE).get("blocks") or []) else [],
            TIMEOUT,
            what,
        )

    def open_tab(self) -> None:
        assert self.slack.push_envelope(self.slack.home_opened(ALICE)) is not None

    def press(self, block_id: str) -> dict[str, Any]:
        """Alice presses the answer of the Home's block ``block_id``; the payload sent."""
        view = self.slack.home_of(ALICE)
        [block] = [b for b in view["blocks"] if b.get("block_id") == block_id]
        payload = {
            "type": "block_actions",
            "user": {"id": ALICE},
            "container": {"type": "view", "view_id": view["id"]},
            "view": view,
            "trigger_id": self.slack.trigger(),
            "actions": [
                {
                    "type": "button",
                    "block_id": block_id,
                    "action_id": block["accessory"]["action_id"],
                    "value": block["accessory"]["value"],
                }
            ],
        }
        assert self.slack.push_envelope(payload, kind="interactive") is not None
        return payload


def listed(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["block_id"] for b in blocks if str(b.get("block_id", "")).startswith("theloop-home:")]


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    with (
        FakeGitHub({"acme/api": {7}, "beta/web": {3}}) as github,
        FakeLoop({ITEM_A: False}) as a,
        FakeLoop({ITEM_B: False}) as b,
    ):
        env = {
            "THELOOP_WEBHOOK_SECRET": "",  # instances: each names its own
            "TEAM_A_SECRET": SECRET_A,
            "TEAM_B_SECRET": SECRET_B,
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_SLACK_SIGNING_SECRET": SIGNING_SECRET,
        }
        bot = slack_bot(SETTINGS % (a.url, b.url), env)
        try:
            yield Rig(bot, fake_slack, github)
        finally:
            bot.process.kill()  # before the fakes it relays to go away


def test_my_home_lists_my_asks_across_rooms_and_instances_and_a_press_there_relays_once(
    rig: Rig,
) -> None:
    gate_a = rig.gate(ITEM_A, SECRET_A, LOOP)
    gate_b = rig.gate(ITEM_B, SECRET_B, API_LOOP)
    both = [f"theloop-home:{LOOP}:{gate_a['ts']}", f"theloop-home:{API_LOOP}:{gate_b['ts']}"]
    blocks = rig.home("both asks on Alice's Home", lambda b: listed(b) == both)
    said = json.dumps(blocks, ensure_ascii=False)
    assert f"`{ITEM_A}`" in said and f"`{ITEM_B}`" in said and "waiting" in said
    drawn = len(rig.slack.published)
    rig.open_tab()  # opening the tab draws it anew, as the store has it
    wait_for(lambda: len(rig.slack.published) > drawn, TIMEOUT, "the Home drawn on opening")
    assert listed(rig.slack.home_of(ALICE)["blocks"]) == both

    press = rig.press(both[0])
    (comment,) = wait_for(lambda: rig.github.posted("acme/api", 7), TIMEOUT, "the comment")
    envelope = parse_envelope(comment)  # as the real the-loop reads it
    assert envelope is not None and envelope.type == "gate.feedback"
    assert dict(envelope.actor)["slack"] == ALICE
    blocks = rig.home("A's ask gone from the Home", lambda b: listed(b) == both[1:])
    answered = json.dumps(blocks, ensure_ascii=False)
    assert "You answered lately" in answered and f"`{ITEM_A}`" in answered
    assert "(home)" in answered
    redrawn = wait_for(
        lambda: [c for c in rig.slack.calls_to("chat.update") if c.args["ts"] == gate_a["ts"]],
        TIMEOUT,
        "the gate redrawn in its room",
    )
    assert f"pressed by <@{ALICE}>" in json.dumps(redrawn[-1].args["blocks"], ensure_ascii=False)

    drawn = len(rig.slack.published)
    assert rig.slack.push_envelope(press, kind="interactive") is not None  # a stale Home
    wait_for(lambda: len(rig.slack.published) > drawn, TIMEOUT, "the stale Home drawn anew")
    # The same answer pressed on the gate in its thread: already answered, relayed no more.
    thread_press = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": LOOP},
        "container": {"type": "message", "message_ts": gate_a["ts"], "channel_id": LOOP},
        "message": gate_a,
        "actions": [{"action_id": "theloop:approve", "value": "approve", "block_id": "b"}],
    }
    assert rig.slack.push_envelope(thread_press, kind="interactive") is not None
    wait_for(
        lambda: [
            c for c in rig.slack.calls_to("chat.postEphemeral") if "already" in c.args["text"]
        ],
        TIMEOUT,
        "the press in the thread refused",
    )
    assert len(rig.github.posted("acme/api", 7)) == 1 and rig.github.posted("beta/web", 3) == []


def test_a_home_over_slacks_block_cap_is_cut_with_a_line_saying_how_many_more(rig: Rig) -> None:
    asks = sqlite_asks(rig.bot.process.queue_file)  # the bot's own store, the bot running

    def seed(first: int, count: int) -> None:
        for n in range(first, first + count):
            opened = time.time() - 10_000 + n
            asks.open(
                Ask(
                    f"seeded-{n}",
                    f"github:acme/api#{n}",
                    "gate",
                    LOOP,
                    f"{n}.0",
                    "",
                    (ALICE,),
                    opened,
                )
            )

    def opened_home(what: str) -> list[dict[str, Any]]:
        drawn = len(rig.slack.published)
        rig.open_tab()
        wait_for(lambda: len(rig.slack.published) > drawn, TIMEOUT, what)
        return rig.slack.home_of(ALICE)["blocks"]

    seed(0, 98)
    blocks = opened_home("the Home at the cap")
    assert len(blocks) == 100 and len(listed(blocks)) == 98
    assert "more waiting" not in json.dumps(blocks)
    seed(98, 1)
    blocks = opened_home("the Home one past the cap")
    assert len(blocks) == 100 and len(listed(blocks)) == 97
    assert "… and 2 more waiting on you" in json.dumps(blocks, ensure_ascii=False)
    refused = [c for c in rig.slack.calls_to("views.publish") if not c.response.get("ok")]
    assert refused == []  # never a view Slack would refuse
