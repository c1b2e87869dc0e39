"""Decisions back to the-loop, end to end: a real errbot, the real SlackV3 backend.

The bot runs as ``make run`` runs it, on Socket Mode against the loopback fake of Slack,
with loopback fakes of GitHub and the-loop's control plane as its relay sinks. the-loop's
real messages arrive signed over real HTTP; members type in the work item's thread and
press buttons (``block_actions`` over Socket Mode, and as signed HTTP requests). Shown
here: each decision lands exactly once — also when the sink fails twice first, when a
button is pressed twice, when the bot is killed between receipt and relay, and when the-loop
restarts as an answer reaches it — forged
requests are refused, and unauthorized members relay nothing.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from the_loop.authz import is_self_authored
from the_loop.control import ControlConfig, parse_command

from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, StartBot, corpus, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support import signed
from tests.support.wait import wait_for

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
        return self.bot.show(event, TIMEOUT)

    def say(self, member: str, text: str, thread_ts: str) -> dict[str, Any]:
        return self.bot.say(member, text, thread_ts)

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

    def told(self, member: str, words: str) -> bool:
        """Whether ``member`` was told something containing ``words``, only them to see."""
        return any(words in text for text in self.ephemerals(member))

    def relay_sentinel(self) -> None:
        """A decision relayed after every one stored before it: the-loop asks, and an answer
        reaches it. The relay hands decisions over one at a time, oldest first, so by then
        any other decision stored earlier (a duplicate, say) has been handed over too."""
        ask = self.show("15", settled=True)
        replies = len(self.loop.replies)
        self.say(ALICE, f"sentinel answer {replies + 1}", ask["thread_ts"])
        wait_for(lambda: len(self.loop.replies) > replies, TIMEOUT, "the sentinel answer")


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
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, SIGNING_SECRET) as bot,
    ):
        yield Rig(bot, fake_slack, github, loop)


def test_typed_decisions_land_once_even_when_the_sink_fails_twice(rig: Rig) -> None:
    gate = rig.show("06", settled=True)
    thread = gate["thread_ts"]
    rig.github.fail("/comments", 502, times=2)
    approval = rig.say(ALICE, "approve ship it", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(approval["ts"]), TIMEOUT, "the ✅")
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

    wait_for(moving_on, TIMEOUT, "the threaded acknowledgement")

    # The bot itself and an unauthorized member relay nothing. The bot's own message goes
    # first, and the member's after it on the same Socket Mode connection is the sentinel:
    # by the time the member is told why not, the bot's message has come and gone. (The
    # client hands envelopes to a pool of threads, so this rests on the bot dropping its
    # own message at once, where the member's takes Web API calls before any answer.)
    own = rig.say(BOT_USER, "changes from the bot itself", thread)
    refused = rig.say(BOB, "changes I disagree", thread)
    wait_for(lambda: "warning" in rig.reactions(refused["ts"]), TIMEOUT, "the refusal's ⚠️")
    wait_for(lambda: rig.told(BOB, "slack.authorizedUsers"), TIMEOUT, "why Bob may not")
    assert rig.reactions(own["ts"]) == [] and rig.ephemerals(BOT_USER) == []
    assert len(rig.comments()) == 1


def test_an_answer_in_the_asks_thread_reaches_the_session_once(rig: Rig) -> None:
    ask = rig.show("15", settled=True)
    answer = rig.say(ALICE, "Option 2, please: backfill", ask["thread_ts"])
    wait_for(lambda: "white_check_mark" in rig.reactions(answer["ts"]), TIMEOUT, "the ✅")
    assert rig.loop.replies == [
        {
            "ref": ITEM,
            "text": "Option 2, please: backfill",
            "actor": f"slack:{ALICE}",
            "comment": True,
        }
    ]
    rig.press(ask, "theloop:default")  # the question was answered: the default is not sent
    wait_for(lambda: rig.told(ALICE, "already answered"), TIMEOUT, "the press refused")
    assert len(rig.loop.replies) == 1


def test_defaults_are_fine_sends_the_asks_stated_default_to_the_session_once(rig: Rig) -> None:
    """The question says Option 1 is the default: one tap on "Defaults are fine" answers
    with it, as the member's reply, once."""
    ask = rig.show("15", settled=True)
    drawn = [
        e
        for b in ask["blocks"]
        if b["type"] == "actions"
        for e in b["elements"]
        if e.get("action_id") == "theloop:default"
    ]
    assert drawn, "the ask was drawn without its Defaults are fine button"
    rig.press(ask, "theloop:default")
    wait_for(lambda: rig.loop.replies, TIMEOUT, "the default sent to the session")
    assert rig.loop.replies == [
        {"ref": ITEM, "text": "Option 1 is fine", "actor": f"slack:{ALICE}", "comment": True}
    ]
    rig.press(ask, "theloop:default")  # pressed again (or delivered twice)
    wait_for(lambda: rig.told(ALICE, "already answered"), TIMEOUT, "the second press refused")
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
    (comment,) = wait_for(rig.comments, TIMEOUT, "the press's comment")
    assert comment.startswith("approved\n\n🗣️")

    def updates() -> list[Any]:
        return [c for c in rig.slack.calls_to("chat.update") if c.args["ts"] == gate["ts"]]

    (update,) = wait_for(updates, TIMEOUT, "the pressed message redrawn without its buttons")
    drawn = json.dumps(update.args["blocks"], ensure_ascii=False)
    assert "theloop:approve" not in drawn and f"pressed by <@{ALICE}>" in drawn
    rig.press(gate, "theloop:approve")  # pressed again (or delivered twice)
    wait_for(lambda: rig.told(ALICE, "already answered"), TIMEOUT, "the second press refused")
    rig.relay_sentinel()
    assert len(rig.comments()) == 1


def _post(rig: Rig, body: bytes, headers: dict[str, str]) -> int:
    process = rig.bot.process
    return signed.post(process.host, process.port, signed.INTERACTIVE_PATH, body, headers)[0]


def _execute_press(checklist: dict[str, Any], *, untick: str = "") -> bytes:
    """The form body Slack posts when ALICE presses execute on ``checklist`` with its boxes
    as drawn, ``untick`` unticked."""
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
                    o for o in element.get("initial_options", []) if o["value"] != untick
                ],
            }
        }
        for block_id, element in boxes
    }
    payload = _payload(checklist, "theloop:execute", ALICE, state={"values": values})
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def test_signed_http_presses_relay_the_boxes_and_forged_ones_are_refused(rig: Rig) -> None:
    checklist = rig.show("01", settled=True)
    # The forgeries keep every box as drawn; the real press unticks design. Had a forgery
    # been taken, the relay (oldest first) would post its comment before the real one's.
    forged = _execute_press(checklist)
    assert _post(rig, forged, signed.slack_headers("not-the-secret", forged)) == 401
    assert _post(rig, forged, {"Content-Type": "application/x-www-form-urlencoded"}) == 401
    real = _execute_press(checklist, untick="design")
    assert _post(rig, real, signed.slack_headers(SIGNING_SECRET, real)) == 200
    (comment,) = wait_for(rig.comments, TIMEOUT, "the press's comment")
    assert comment.startswith("the-loop execute\n\n- [ ] brainstorming")
    assert "- [ ] design\n" in comment and "- [x] test-planning" in comment


def test_a_bot_killed_between_receipt_and_relay_relays_once_after_restart(rig: Rig) -> None:
    gate = rig.show("06", settled=True)
    rig.github.fail("/comments", 503, times=10_000)  # GitHub is down: nothing can land
    approval = rig.say(ALICE, "approve", gate["thread_ts"])
    wait_for(lambda: "eyes" in rig.reactions(approval["ts"]), TIMEOUT, "the 👀: stored")
    rig.bot.process.kill()
    assert rig.comments() == []
    rig.github.faults.clear()  # GitHub is back
    rig.bot.process.start(timeout=START_TIMEOUT)
    wait_for(lambda: "white_check_mark" in rig.reactions(approval["ts"]), TIMEOUT, "the ✅")
    rig.relay_sentinel()
    assert len(rig.comments()) == 1


def test_an_answer_sent_as_the_loop_restarts_reaches_the_session_once_when_it_is_back(
    rig: Rig,
) -> None:
    ask = rig.show("15", settled=True)
    typed = threading.Event()
    answered = rig.loop.route

    def route(request: Any) -> Any:  # the-loop types the answer in, then restarts
        answer = answered(request)
        if request.path == "/api/v1/sessions/reply":
            typed.set()
        return answer

    rig.loop.route = route  # type: ignore[method-assign]
    rig.loop.fail("/sessions/reply", kind="land_then_drop")  # its answer never comes back
    answer = rig.say(ALICE, "Option 1", ask["thread_ts"])
    wait_for(typed.is_set, TIMEOUT, "the answer typed into the session")
    rig.loop.stop()  # down for five seconds: the bot cannot read its event log
    lookups = len([r for r in rig.loop.requests if r.path == "/api/v1/events"])
    time.sleep(5)
    rig.loop.start()
    wait_for(lambda: "white_check_mark" in rig.reactions(answer["ts"]), TIMEOUT, "the ✅")
    assert [reply["text"] for reply in rig.loop.replies] == ["Option 1"]
    assert "warning" not in rig.reactions(answer["ts"])
    assert len([r for r in rig.loop.requests if r.path == "/api/v1/events"]) > lookups
    replies = [
        m["text"] for m in rig.slack.thread(LOOP, ask["thread_ts"]) if m.get("user") != ALICE
    ]
    assert not [text for text in replies if "may have reached the-loop" in text]


def test_execute_without_typed_in_the_thread_relays_the_checklist_with_those_rows_unticked(
    rig: Rig,
) -> None:
    """`execute without 2, 5` typed under the checklist: the-loop receives its execute with
    the numbered rows unticked and the rest as drawn, once."""
    checklist = rig.show("01", settled=True)
    rig.say(ALICE, "execute without 2, 5", checklist.get("thread_ts") or checklist["ts"])
    (comment,) = wait_for(rig.comments, TIMEOUT, "the execute on the ticket")
    assert comment.startswith("the-loop execute\n")
    assert "- [ ] design\n" in comment and "- [ ] brainstorm-approval\n" in comment
    assert "- [x] test-planning" in comment  # a row not named stays as drawn


def test_a_refused_selection_is_written_on_the_ticket_too_where_a_connector_reads_it(
    rig: Rig,
) -> None:
    """`execute without 99`: refused whole and said to the member alone — and, as the-loop
    does, written on the ticket as its own marked comment, which its ingress never reads
    as a command; once, whatever Slack redelivers."""
    checklist = rig.show("01", settled=True)
    thread = checklist.get("thread_ts") or checklist["ts"]
    typed = rig.say(ALICE, "execute without 99", thread)
    wait_for(lambda: rig.told(ALICE, "nothing was recorded"), TIMEOUT, "the refusal")
    (note,) = wait_for(rig.comments, TIMEOUT, "the refusal on the ticket")
    assert note.startswith("⚠️ ") and "99" in note and "`alice-gh`" in note
    assert is_self_authored(note)  # the-loop's ingress drops its own marked comment
    assert parse_command(note, ControlConfig()).command is None
    rig.slack.push_envelope({"type": "event_callback", "event": typed})  # delivered again
    rig.relay_sentinel()
    assert len(rig.comments()) == 1
