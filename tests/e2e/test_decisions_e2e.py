"""Decisions back to the-loop, end to end (issue 4): a real errbot, the real SlackV3 backend.

The bot runs as ``make run`` runs it, on Socket Mode against the loopback fake of Slack,
with loopback fakes of GitHub and the-loop's control plane as its relay sinks. the-loop's
real messages arrive signed over real HTTP; members type in the work item's thread and
press buttons (``block_actions`` over Socket Mode, and as signed HTTP requests). Shown
here: each decision lands exactly once — also when the sink fails twice first, when a
button is pressed twice, and when the bot is killed between receipt and relay — forged
requests are refused, and unauthorized members relay nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from botproc import BotProcess
from slackbot import LOOP, SlackBot, corpus, slack_env

from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import FakeSlack

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO, NUMBER = "MadaraUchiha-314/the-loop", 260
ALICE, BOB = "U0ALICE01", "U0BOB0001"
SIGNING_SECRET = "e2e-slack-signing-secret"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, comment.human, phase-approval-pending, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
"""
TIMEOUT = 60.0


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub
    loop: FakeLoop

    def show(self, stem: str, *, settled: bool = False) -> dict[str, Any]:
        """the-loop sends a corpus event; the room's message for it, once posted.

        ``settled``: also wait until the bot has finished delivering it (a later event is
        posted: delivery is in order), as a person's press could never come sooner.
        """
        event = corpus(stem)
        message = self._posted(event)
        if settled:  # a person's comment mirrored into the room: it asks nothing
            probe = {"eventType": "comment.human", "workItem": ITEM, "text": "noted"}
            self._posted({**probe, "id": f"after-{event['id']}"})
        return message

    def _posted(self, event: dict[str, Any]) -> dict[str, Any]:
        stem = event["id"]
        assert self.bot.send(event)[0] == 202
        found: list[dict[str, Any]] = []

        def posted() -> bool:
            found[:] = [m for m in self.slack.messages(LOOP) if _key(m) == event["id"]]
            return bool(found)

        assert self.slack.wait_for(posted, TIMEOUT), f"{stem} never posted"
        return found[0]

    def say(self, member: str, text: str, thread_ts: str) -> dict[str, Any]:
        """A member types in a thread: the message is in Slack, and its event is delivered."""
        message = self.slack.say(LOOP, member, text, thread_ts=thread_ts)
        event = {"type": "event_callback", "event": message}
        assert self.slack.push_envelope(event) is not None, "the bot did not ack the message"
        return message

    def press(
        self, message: dict[str, Any], action_id: str, member: str = ALICE, **extra: Any
    ) -> None:
        """A member presses a control on ``message``, delivered over Socket Mode."""
        ack = self.slack.push_envelope(
            _payload(message, action_id, member, **extra), kind="interactive"
        )
        assert ack is not None, "the press was not acknowledged"

    def comments(self) -> list[str]:
        return self.github.posted(REPO, NUMBER)

    def reactions(self, ts: str) -> list[str]:
        return [
            c.args["name"]
            for c in self.slack.calls_to("reactions.add")
            if c.args["timestamp"] == ts
        ]

    def ephemerals(self, member: str) -> list[str]:
        return [
            c.args["text"]
            for c in self.slack.calls_to("chat.postEphemeral")
            if c.args["user"] == member
        ]


def _key(message: dict[str, Any]) -> str:
    return str(message.get("metadata", {}).get("event_payload", {}).get("key", ""))


def _payload(message: dict[str, Any], action_id: str, member: str, **extra: Any) -> dict[str, Any]:
    element = next(
        (
            e
            for b in message.get("blocks", [])
            if b["type"] == "actions"
            for e in b["elements"]
            if e.get("action_id") == action_id
        ),
        {"action_id": action_id},
    )
    return {
        "type": "block_actions",
        "user": {"id": member},
        "channel": {"id": LOOP},
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": LOOP},
        "message": message,
        "actions": [{**element, "block_id": "b"}],
        **extra,
    }


@pytest.fixture
def rig(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[Rig]:
    with FakeGitHub({REPO: {NUMBER}}) as github, FakeLoop({ITEM: False}) as loop:
        (tmp_path / "theloop.yaml").write_text(SETTINGS, encoding="utf-8")
        env = {
            **slack_env(fake_slack),
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_LOOP_API": loop.url,
            "THELOOP_SLACK_SIGNING_SECRET": SIGNING_SECRET,
        }
        process = BotProcess(tmp_path, backend="SlackV3", env=env)
        try:
            process.start(timeout=90)
            yield Rig(SlackBot(process, fake_slack), fake_slack, github, loop)  # type: ignore[arg-type]
        finally:
            process.kill()


def test_typed_decisions_land_once_even_when_the_sink_fails_twice(rig: Rig) -> None:
    gate = rig.show("06")
    thread = gate["thread_ts"]
    rig.github.fail("/comments", 502, times=2)
    approval = rig.say(ALICE, "approve ship it", thread)
    assert rig.slack.wait_for(lambda: "white_check_mark" in rig.reactions(approval["ts"]), TIMEOUT)
    (comment,) = rig.comments()
    assert comment.startswith(
        "approved\n\nship it\n\n🗣️ _the-loop — answer to the open gate from `alice-gh`"
    )
    statuses = [r.status for r in rig.github.requests]
    assert statuses.count(502) == 2 and statuses.count(201) == 1  # failed twice, landed once
    assert rig.reactions(approval["ts"]) == ["eyes", "white_check_mark"]

    def moving_on() -> bool:
        replies = [m["text"] for m in rig.slack.thread(LOOP, thread) if m.get("user") != ALICE]
        return any(text.startswith("✅ recorded — moving on") for text in replies)

    assert rig.slack.wait_for(moving_on, TIMEOUT), "no threaded acknowledgement"

    # An unauthorized member and the bot itself relay nothing.
    refused = rig.say(BOB, "changes I disagree", thread)
    assert rig.slack.wait_for(lambda: "warning" in rig.reactions(refused["ts"]), TIMEOUT)
    refusal = lambda: any("slack.authorizedUsers" in text for text in rig.ephemerals(BOB))  # noqa: E731
    assert rig.slack.wait_for(refusal, TIMEOUT)
    rig.say("U0THELOOP", "changes from the bot itself", thread)
    time.sleep(1.0)  # nothing may happen; give it the chance to
    assert len(rig.comments()) == 1


def test_an_answer_in_the_asks_thread_reaches_the_session_once(rig: Rig) -> None:
    ask = rig.show("15", settled=True)
    answer = rig.say(ALICE, "Option 2, please: backfill", ask["thread_ts"])
    assert rig.slack.wait_for(lambda: "white_check_mark" in rig.reactions(answer["ts"]), TIMEOUT)
    assert rig.loop.replies == [
        {
            "ref": ITEM,
            "text": "Option 2, please: backfill",
            "actor": f"slack:{ALICE}",
            "comment": True,
        }
    ]
    rig.press(ask, "theloop:default")  # the question was answered: the default is not sent
    assert rig.slack.wait_for(
        lambda: any("already answered" in t for t in rig.ephemerals(ALICE)), TIMEOUT
    )
    assert len(rig.loop.replies) == 1


def test_a_press_updates_the_message_and_a_second_press_relays_nothing(rig: Rig) -> None:
    gate = rig.show("06", settled=True)
    assert any(
        e.get("action_id") == "theloop:approve"
        for b in gate["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
    )
    rig.press(gate, "theloop:approve")
    assert rig.github.wait_for(lambda: len(rig.comments()) == 1, TIMEOUT)
    assert rig.comments()[0].startswith("approved\n\n🗣️")

    def updates() -> list[Any]:
        return [c for c in rig.slack.calls_to("chat.update") if c.args["ts"] == gate["ts"]]

    assert rig.slack.wait_for(lambda: bool(updates()), TIMEOUT), (
        "the pressed message kept its buttons"
    )
    (update,) = updates()
    drawn = json.dumps(update.args["blocks"], ensure_ascii=False)
    assert "theloop:approve" not in drawn and f"pressed by <@{ALICE}>" in drawn
    rig.press(gate, "theloop:approve")  # pressed again (or delivered twice)
    assert rig.slack.wait_for(
        lambda: any("already answered" in t for t in rig.ephemerals(ALICE)), TIMEOUT
    )
    time.sleep(1.0)
    assert len(rig.comments()) == 1


def _signed(body: bytes, secret: str = SIGNING_SECRET) -> dict[str, str]:
    stamp = str(int(time.time()))
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
    }


def _post(rig: Rig, body: bytes, headers: dict[str, str]) -> int:
    connection = http.client.HTTPConnection(rig.bot.process.host, rig.bot.process.port, timeout=30)
    try:
        connection.request("POST", "/theloop/slack/interactive", body=body, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def test_signed_http_presses_relay_the_boxes_and_forged_ones_are_refused(rig: Rig) -> None:
    checklist = rig.show("01", settled=True)
    boxes = [
        (b["block_id"], e)
        for b in checklist["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e["type"] == "checkboxes"
    ]
    assert boxes, "the checklist was drawn without checkboxes"
    values = {
        block_id: {
            element["action_id"]: {
                "type": "checkboxes",
                "selected_options": [
                    o for o in element.get("initial_options", []) if o["value"] != "design"
                ],
            }
        }
        for block_id, element in boxes
    }
    payload = _payload(checklist, "theloop:execute", ALICE, state={"values": values})
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    assert _post(rig, body, _signed(body, "not-the-secret")) == 401
    assert _post(rig, body, {"Content-Type": "application/x-www-form-urlencoded"}) == 401
    time.sleep(1.0)
    assert rig.comments() == []
    assert _post(rig, body, _signed(body)) == 200
    assert rig.github.wait_for(lambda: len(rig.comments()) == 1, TIMEOUT)
    (comment,) = rig.comments()
    assert comment.startswith("the-loop execute\n\n- [ ] brainstorming")
    assert "- [ ] design\n" in comment and "- [x] test-planning" in comment


def test_a_bot_killed_between_receipt_and_relay_relays_once_after_restart(rig: Rig) -> None:
    gate = rig.show("06")
    rig.github.fail("/comments", 503, times=10_000)  # GitHub is down: nothing can land
    approval = rig.say(ALICE, "approve", gate["thread_ts"])
    assert rig.slack.wait_for(lambda: "eyes" in rig.reactions(approval["ts"]), TIMEOUT)
    rig.bot.process.kill()
    assert rig.comments() == []
    rig.github.faults.clear()  # GitHub is back
    rig.bot.process.start(timeout=90)
    assert rig.github.wait_for(lambda: len(rig.comments()) == 1, TIMEOUT)
    assert rig.slack.wait_for(lambda: "white_check_mark" in rig.reactions(approval["ts"]), TIMEOUT)
    time.sleep(1.0)
    assert len(rig.comments()) == 1
