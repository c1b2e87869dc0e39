"""Slack's Events API (HTTP mode), end to end: a real errbot, the real SlackV3 backend.

Started as a deployment without Socket Mode runs it — a bot token and a signing secret, no
app token — so SlackV3 registers its Events API view and the bot's own server serves it at
``/slack/events``. Slack's side is played by the test: the URL-verification challenge
Slack sends when the request URL is saved, and members' messages as signed
``event_callback`` posts. Shown here: the challenge is answered; a typed decision is
reacted to and relayed once — and Slack is answered while GitHub and the-loop still hold
their answers to it (Slack's 3 s: the room's callback stores the decision, the relay sends
it afterwards), and a typed ``record-context`` while Slack holds the thread's read (stored,
then read and recorded once); a command is answered in the room; a forged event does
nothing; the Home tab opened (an event the backend drops) is taken by the room and drawn.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from looproom.admin.text import ABOUT
from tests.e2e.slackbot import LOOP, SlackBot, StartBot, corpus
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.loopback import Request
from tests.fakes.slack_api import FakeSlack
from tests.support import signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

REPO, NUMBER = "MadaraUchiha-314/the-loop", 260
ALICE, BOB = "U0ALICE01", "U0BOB0001"
SIGNING_SECRET = "e2e-events-api-signing-secret"
EVENTS_PATH = "/slack/events"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [phase-approval-pending]
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
"""
TIMEOUT = 60.0


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub

    def post(self, payload: dict[str, Any], secret: str = SIGNING_SECRET) -> tuple[int, Any]:
        """Slack posts ``payload`` to the request URL, signed with ``secret``."""
        body = json.dumps(payload).encode()
        headers = {**signed.slack_headers(secret, body), "Content-Type": "application/json"}
        process = self.bot.process
        status, raw = signed.post(process.host, process.port, EVENTS_PATH, body, headers)
        return status, json.loads(raw)

    def say(self, member: str, text: str, thread_ts: str = "", **options: Any) -> dict[str, Any]:
        """A member types in the room: Slack keeps it and posts its event to the bot."""
        message = self.slack.say(LOOP, member, text, thread_ts=thread_ts)
        status, answer = self.post({"type": "event_callback", "event": message}, **options)
        return {**message, "status": status, "answer": answer}

    def reactions(self, ts: str) -> list[str]:
        calls = self.slack.calls_to("reactions.add")
        return [c.args["name"] for c in calls if c.args["timestamp"] == ts]

    def said_by_bot(self) -> list[str]:
        return [str(c.args.get("text", "")) for c in self.slack.calls_to("chat.postMessage")]


@pytest.fixture
def loop() -> Iterator[FakeLoop]:
    with FakeLoop() as fake:
        yield fake


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack, loop: FakeLoop) -> Iterator[Rig]:
    with FakeGitHub({REPO: {NUMBER}}) as github:
        env = {
            "THELOOP_SLACK_APP_TOKEN": "",  # no Socket Mode: Slack posts to the request URL
            "THELOOP_SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_LOOP_API": loop.url,
        }
        bot = slack_bot(SETTINGS, env)
        try:
            yield Rig(bot, fake_slack, github)
        finally:
            bot.process.kill()  # before its relay sink goes away


def test_slacks_challenge_is_answered_when_the_request_url_is_saved(rig: Rig) -> None:
    challenge = {"token": "legacy", "challenge": "3eZbrw1aBm2rZgRNFdxV", "type": "url_verification"}
    assert rig.post(challenge) == (200, {"challenge": "3eZbrw1aBm2rZgRNFdxV"})
    assert rig.post(challenge, secret="not-the-apps-secret")[0] == 401
    assert rig.slack.socket_connected() is False  # no Socket Mode connection was made


def test_a_decision_typed_in_the_thread_arrives_over_http_and_is_relayed_once(rig: Rig) -> None:
    gate = corpus("06")
    posted = rig.bot.show(gate, TIMEOUT)
    rig.bot.process.wait_delivered(TIMEOUT)  # the bot knows its gate: it may be answered
    approval = rig.say(ALICE, "approve ship it", posted["thread_ts"])
    assert (approval["status"], approval["answer"]) == (200, {})
    wait_for(lambda: "white_check_mark" in rig.reactions(approval["ts"]), TIMEOUT, "the ✅")
    assert rig.reactions(approval["ts"]) == ["eyes", "white_check_mark"]
    (comment,) = rig.github.posted(REPO, NUMBER)
    assert comment.startswith("approved\n\nship it")


def test_a_typed_decision_is_answered_to_slack_while_github_and_the_loop_hold_theirs(
    rig: Rig, loop: FakeLoop
) -> None:
    posted = rig.bot.show(corpus("06"), TIMEOUT)
    rig.bot.process.wait_delivered(TIMEOUT)
    let_go, asked = threading.Event(), []

    def hold(request: Request) -> None:
        asked.append(request.path)
        let_go.wait(TIMEOUT * 2)

    rig.github.before = loop.before = hold  # from here on, neither answers until let go
    try:
        message = rig.slack.say(LOOP, ALICE, "approve ship it", thread_ts=posted["thread_ts"])
        answer: list[tuple[int, Any]] = []
        threading.Thread(
            target=lambda: answer.append(rig.post({"type": "event_callback", "event": message})),
            daemon=True,
        ).start()
        wait_for(lambda: answer, TIMEOUT, "Slack answered while GitHub and the-loop hold")
        assert answer == [(200, {})] and not let_go.is_set()
        # Not an answer given because nothing was asked: the relay is at GitHub, held.
        wait_for(lambda: asked, TIMEOUT, "the decision sent on, and held")
    finally:
        let_go.set()
    wait_for(lambda: rig.github.posted(REPO, NUMBER), TIMEOUT, "the comment, once let go")
    (comment,) = rig.github.posted(REPO, NUMBER)
    assert comment.startswith("approved\n\nship it")


def test_record_context_typed_is_answered_to_slack_while_the_threads_read_is_held(
    rig: Rig,
) -> None:
    posted = rig.bot.show(corpus("06"), TIMEOUT)
    rig.bot.process.wait_delivered(TIMEOUT)
    thread = posted["thread_ts"]
    rig.slack.say(LOOP, ALICE, "we go with B, it keeps v1 working", thread_ts=thread)
    rig.slack.fail("conversations.replies", "land_then_hang")  # Slack slow, or pacing a 429
    message = rig.slack.say(LOOP, ALICE, "record-context", thread_ts=thread)
    answer: list[tuple[int, Any]] = []
    try:
        threading.Thread(
            target=lambda: answer.append(rig.post({"type": "event_callback", "event": message})),
            daemon=True,
        ).start()
        wait_for(lambda: rig.slack.calls_to("conversations.replies"), TIMEOUT, "the read")
        wait_for(lambda: answer, TIMEOUT, "Slack answered while the thread's read is held")
        assert answer[0][0] == 200
    finally:
        rig.slack.release()
    recorded = lambda: [c for c in rig.github.posted(REPO, NUMBER) if "keeps v1 working" in c]  # noqa: E731
    wait_for(recorded, TIMEOUT, "the thread recorded on the ticket, once let go")
    assert len(recorded()) == 1


def test_a_forged_event_does_nothing_and_a_signed_command_is_answered(rig: Rig) -> None:
    forged = rig.say(BOB, "!theloop", secret="not-the-apps-secret")
    assert forged["status"] == 401 and forged["answer"]["error"]
    command = rig.say(ALICE, "!theloop")
    assert command["status"] == 200
    # The signed command's answer comes after anything the forged one could have caused.
    wait_for(lambda: rig.said_by_bot().count(ABOUT) >= 1, TIMEOUT, "the answer to !theloop")
    assert rig.said_by_bot().count(ABOUT) == 1
    calls = rig.slack.calls_to("chat.postMessage")
    assert all(c.args.get("channel") == LOOP for c in calls if c.args.get("text") == ABOUT)


def test_the_home_tab_opened_over_http_draws_what_waits_on_the_member(rig: Rig) -> None:
    posted = rig.bot.show(corpus("06"), TIMEOUT)
    listed = f"theloop-home:{LOOP}:{posted['ts']}"
    wait_for(lambda: listed in str(rig.slack.home_of(ALICE)), TIMEOUT, "the gate on the Home")
    drawn = len(rig.slack.published)
    opened = rig.slack.home_opened(ALICE)
    assert rig.post(opened, secret="not-the-apps-secret")[0] == 401
    assert rig.post(opened) == (200, {"ok": True})
    wait_for(lambda: len(rig.slack.published) > drawn, TIMEOUT, "the Home drawn on opening")
    assert len(rig.slack.published) == drawn + 1  # the forged opening drew nothing
    assert listed in str(rig.slack.home_of(ALICE))
