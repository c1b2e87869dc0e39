"""The member an ask waits on hears it directly, end to end: a real errbot on the real
SlackV3 backend, the loopback fakes of Slack, GitHub and the-loop, timings in seconds.

A gate from the-loop's own corpus arrives signed over HTTP; with ``attention.direct`` on,
the decider gets a direct message carrying the gate's own buttons. A press there is
relayed once — the comment read by the real the-loop's envelope parser — and the thread's
gate, the direct message and the record say who answered; pressed again on the gate in the
thread, it relays nothing. Unanswered, the gate is reminded once and then escalated to the
named user group. With nothing configured, the member asked is named in the thread and
messaged nowhere else, and an admin reads the waiting ask in ``!theloop asks``, ``status``
and the metrics.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from the_loop.channels.envelope import parse as parse_envelope

from tests.e2e.slackbot import (
    LOOP,
    START_TIMEOUT,
    SlackBot,
    StartBot,
    corpus,
    relaying,
    slash,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import FakeSlack, decoded
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO, NUMBER = "MadaraUchiha-314/the-loop", 260
ALICE, BOB = "U0ALICE01", "U0BOB0001"
ALICE_DM = "D0ALICE01"
SIGNING_SECRET = "e2e-slack-signing-secret"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.human, phase-approval-pending, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
attention:
  direct: true
  remindAfter: %(remind)d
  escalateAfter: %(escalate)d
  escalateTo: [S0LEADS]
  workingHours: "00:00-24:00"
  snoozeFor: 4
"""
TIMEOUT = 60.0


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub

    def gate(self) -> dict[str, Any]:
        return self.bot.show(corpus("06"), TIMEOUT)

    def dm(self) -> dict[str, Any]:
        """Alice's direct message of the gate, once sent."""

        def sent() -> list[dict[str, Any]]:
            known = ALICE_DM in self.slack.channels
            return [m for m in self.slack.messages(ALICE_DM) if m.get("blocks")] if known else []

        return wait_for(sent, TIMEOUT, "Alice's direct message")[-1]

    def press(
        self,
        message: dict[str, Any],
        channel: str,
        member: str = ALICE,
        action: str = "theloop:approve",
    ) -> None:
        payload = {
            "type": "block_actions",
            "user": {"id": member},
            "channel": {"id": channel},
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel},
            "message": message,
            "actions": [{"action_id": action, "value": "approve", "block_id": "b"}],
        }
        assert self.slack.push_envelope(payload, kind="interactive") is not None

    def home(self) -> str:
        """Alice's Home tab as last published, its texts one after another."""
        blocks = self.slack.homes.get(ALICE, {}).get("blocks", [])
        return " ".join(str((b.get("text") or {}).get("text", "")) for b in blocks)

    def posts(self, key_start: str) -> list[dict[str, Any]]:
        """The bot's posts that took effect (their answer lost or not) whose mark starts
        with ``key_start`` (an attention step's)."""
        return [
            c.args
            for c in self.slack.calls_to("chat.postMessage")
            if c.landed
            and str(
                ((decoded(c.args.get("metadata")) or {}).get("event_payload") or {}).get("key")
            ).startswith(key_start)
        ]


def rig_for(
    slack_bot: StartBot, fake_slack: FakeSlack, remind: int, escalate: int, *, direct: bool = True
) -> Iterator[Rig]:
    settings = SETTINGS % {"remind": remind, "escalate": escalate}
    if not direct:  # nothing configured: the attention block gone
        settings = settings.split("attention:")[0]
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, settings, github, loop, SIGNING_SECRET) as bot,
    ):
        yield Rig(bot, fake_slack, github)


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    # Reminders far off: this rig's asks are answered long before.
    yield from rig_for(slack_bot, fake_slack, 3600, 7200)


@pytest.fixture
def quick(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    yield from rig_for(slack_bot, fake_slack, 2, 5)


@pytest.fixture
def quiet(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    yield from rig_for(slack_bot, fake_slack, 3600, 7200, direct=False)


def test_with_nothing_configured_the_member_asked_is_named_in_the_thread_alone(
    quiet: Rig,
) -> None:
    gate = quiet.gate()
    assert quiet.slack.push_envelope(quiet.slack.home_opened(ALICE)) is not None
    wait_for(lambda: ITEM in quiet.home(), TIMEOUT, "Alice's Home listing the gate")
    mentions = wait_for(lambda: quiet.posts("mention:"), TIMEOUT, "the mention in the thread")
    assert [(m["thread_ts"], m["text"]) for m in mentions] == [
        (gate["thread_ts"], f"🔔 <@{ALICE}> — a gate here waits on you.")
    ]
    assert quiet.slack.calls_to("conversations.open") == []  # no direct message
    assert not quiet.posts("dm:") and not quiet.posts("remind:")


def _said_to_alice(rig: Rig, command: str, expected: str) -> str:
    """``command`` typed by Alice (an admin) to the bot in a DM; its answer, once it says
    ``expected``."""
    dm = rig.slack.channel_id(ALICE_DM) or rig.slack.add_channel("alice-dm", ALICE_DM)
    before = len(rig.slack.messages(dm))
    message = {"type": "message", "channel_type": "im", "user": ALICE, "text": command}
    event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": "1800000000.2"}}
    assert rig.slack.push_envelope(event) is not None, "the bot did not ack the command"

    def answer() -> str:
        said = "\n".join(str(m.get("text") or "") for m in rig.slack.messages(dm)[before:])
        return said if expected in said else ""

    return wait_for(answer, TIMEOUT, f"the answer to {command}")


def test_an_admin_reads_the_waiting_ask_in_asks_status_and_the_metrics(quiet: Rig) -> None:
    """``!theloop asks`` lists the gate waiting on Alice, ``!theloop status`` names it as
    the oldest waiting, and the metrics show it open, then count its wait once it is answered."""
    gate = quiet.gate()
    wait_for(lambda: quiet.posts("mention:"), TIMEOUT, "the ask opened and its member named")
    asks = _said_to_alice(quiet, "!theloop asks", "Asks waiting now")
    heading, *lines = asks.splitlines()
    assert "Asks waiting now" in heading and heading.endswith(" (1):")
    (waiting,) = [line for line in lines if line.startswith("• ")]
    assert f"`{ITEM}`" in waiting and f"asked <@{ALICE}>" in waiting
    assert "waiting " in waiting.rsplit(";", 1)[1]  # still open, not answered
    status = _said_to_alice(quiet, "!theloop status", "asks: ")
    assert f"asks: the oldest waiting is `{ITEM}`'s gate" in status
    assert f"asking <@{ALICE}>" in status
    (oldest,) = [
        line
        for line in quiet.bot.process.metrics().splitlines()
        if line.startswith("theloop_ask_oldest_open_seconds ")
    ]
    assert float(oldest.split()[1]) > 0  # one ask open ("0 when none waits")
    quiet.press(gate, LOOP)  # answered in the thread: its wait is counted, none is open

    def counted() -> str:
        metrics = quiet.bot.process.metrics()
        answered = 'theloop_ask_wait_seconds_count{kind="gate",outcome="answered"} 1.0'
        return metrics if answered in metrics else ""

    metrics = wait_for(counted, TIMEOUT, "the answered gate's wait in the metrics")
    assert "theloop_ask_oldest_open_seconds 0.0" in metrics


def test_a_press_in_the_direct_message_is_relayed_once_and_everyone_sees_who(rig: Rig) -> None:
    gate = rig.gate()
    dm = rig.dm()
    assert "theloop:approve" in json.dumps(dm["blocks"])  # the gate's own answers, there
    mention = wait_for(
        lambda: [m for m in rig.slack.thread(LOOP, gate["thread_ts"]) if "🔔" in m["text"]],
        TIMEOUT,
        "the mention in the thread",
    )[0]
    assert f"<@{ALICE}>" in mention["text"] and "<!channel>" not in mention["text"]
    assert rig.slack.push_envelope(rig.slack.home_opened(ALICE)) is not None
    wait_for(lambda: ITEM in rig.home(), TIMEOUT, "Alice's Home listing the gate")
    assert rig.home().startswith("Waiting on you (1)")

    rig.press(dm, ALICE_DM)
    (comment,) = wait_for(lambda: rig.github.posted(REPO, NUMBER), TIMEOUT, "the comment")
    envelope = parse_envelope(comment)  # as the real the-loop reads it
    assert envelope is not None and envelope.type == "gate.feedback"
    assert dict(envelope.actor)["slack"] == ALICE

    def redrawn(ts: str) -> list[Any]:
        return [c for c in rig.slack.calls_to("chat.update") if c.args["ts"] == ts]

    (update,) = wait_for(lambda: redrawn(gate["ts"]), TIMEOUT, "the gate redrawn")
    assert f"pressed by <@{ALICE}>" in json.dumps(update.args["blocks"], ensure_ascii=False)
    wait_for(lambda: redrawn(dm["ts"]), TIMEOUT, "the direct message redrawn")
    wait_for(lambda: rig.home().startswith("Waiting on you (0)"), TIMEOUT, "the Home redrawn")
    answered = rig.slack.messages(ALICE_DM)[-1]["text"]
    assert f"answered by <@{ALICE}>" in answered and "(dm)" in answered

    rig.press(gate, LOOP)  # the same answer pressed on the gate itself: already answered
    told = wait_for(
        lambda: [
            c for c in rig.slack.calls_to("chat.postEphemeral") if "already" in c.args["text"]
        ],
        TIMEOUT,
        "the second press refused",
    )
    assert told[0].args["user"] == ALICE
    assert len(rig.github.posted(REPO, NUMBER)) == 1
    mine = slash(rig.slack, "mine", ALICE)["text"]
    assert mine.startswith("Nothing waits on you.") and "You answered lately" in mine


def test_im_on_it_in_the_direct_message_shows_the_claimer_on_the_asks_own_message(
    rig: Rig,
) -> None:
    gate = rig.gate()
    rig.press(rig.dm(), ALICE_DM, action="theloop-attention:claim")

    def shown() -> list[dict[str, Any]]:
        (now,) = [m for m in rig.slack.messages(LOOP) if m["ts"] == gate["ts"]]
        said = json.dumps(now.get("blocks") or [], ensure_ascii=False)
        return [now] if f"👀 <@{ALICE}> is on it." in said else []

    (card,) = wait_for(shown, TIMEOUT, "the claimer on the gate's own message")
    assert "theloop:approve" in json.dumps(card["blocks"])  # still answerable there
    wait_for(
        lambda: [
            m for m in rig.slack.thread(LOOP, gate["thread_ts"]) if m["text"].startswith("👀")
        ],
        TIMEOUT,
        "the claim's line in the thread",
    )
    rig.press(card, LOOP)  # answered on the claimed card: relayed once
    wait_for(lambda: rig.github.posted(REPO, NUMBER), TIMEOUT, "the comment")
    assert len(rig.github.posted(REPO, NUMBER)) == 1


def test_an_unanswered_ask_is_reminded_once_then_escalated_to_the_group(quick: Rig) -> None:
    gate = quick.gate()
    quick.dm()
    mine = slash(quick.slack, "mine", ALICE)["text"]
    assert mine.startswith("*Waiting on you* (1)") and ITEM in mine
    reminders = wait_for(lambda: quick.posts("remind:"), TIMEOUT, "the reminder")
    assert reminders[0]["channel"] == ALICE_DM
    escalations = wait_for(lambda: quick.posts("escalate:"), TIMEOUT, "the escalation")
    assert escalations[0]["thread_ts"] == gate["thread_ts"]
    assert escalations[0]["text"].startswith("⏫ <!subteam^S0LEADS>")
    assert len(quick.posts("remind:")) == 1  # once, not again by the time it escalated
    # The older copy went: one direct message of the gate, the reminder.
    (shown,) = quick.slack.messages(ALICE_DM)
    assert "Still waiting on you" in json.dumps(shown["blocks"], ensure_ascii=False)


def test_remind_me_later_in_the_direct_message_puts_the_reminder_back(quick: Rig) -> None:
    gate = quick.gate()
    quick.press(quick.dm(), ALICE_DM, action="theloop-attention:snooze")
    reminders = wait_for(lambda: quick.posts("remind:"), TIMEOUT, "the reminder")
    assert reminders[0]["channel"] == ALICE_DM
    ask = f"{ITEM}|gate|{LOOP}:{gate['ts']}"
    with contextlib.closing(
        sqlite3.connect(f"file:{quick.bot.process.queue_file}?mode=ro", uri=True)
    ) as db:
        taken = dict(
            db.execute(
                "SELECT step, at FROM theloop_ask_steps WHERE ask = ? AND member = ?",
                (ask, ALICE),
            ).fetchall()
        )
    # Snoozed (until when), then reminded no sooner than that, and once.
    assert set(taken) == {"snoozed", "reminded"} and taken["reminded"] >= taken["snoozed"]
    wait_for(lambda: quick.posts("escalate:"), TIMEOUT, "the escalation")
    assert len(quick.posts("remind:")) == 1 and not quick.posts("later:")


def test_a_bot_killed_between_a_reminder_and_its_answer_reminds_once(quick: Rig) -> None:
    gate = quick.gate()
    quick.dm()
    remind = f"remind:{ITEM}|gate|{LOOP}:{gate['ts']}:{ALICE}"
    # The reminder lands in Slack, its answer never comes: the bot is killed waiting.
    quick.slack.fail("chat.postMessage", "land_then_hang", key=remind)
    wait_for(lambda: quick.posts("remind:"), TIMEOUT, "the reminder in flight")
    process = quick.bot.process
    process.kill()
    quick.slack.release()
    process.start(timeout=START_TIMEOUT)

    def settled() -> bool:  # the restarted bot looked for it and found it: done
        with contextlib.closing(
            sqlite3.connect(f"file:{process.queue_file}?mode=ro", uri=True)
        ) as db:
            row = db.execute("SELECT state FROM items WHERE key = ?", (remind,)).fetchone()
        return bool(row) and row[0] == "done"

    wait_for(settled, TIMEOUT, "the reminder settled after the restart")
    assert len(quick.posts("remind:")) == 1


@pytest.fixture
def pair(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    """Alice and Bob both decide: a gate asks them both, reminded after 2 s."""
    settings = (SETTINGS % {"remind": 2, "escalate": 6}).replace(
        "authorizedUsers: [U0ALICE01]", "authorizedUsers: [U0ALICE01, U0BOB0001]"
    )
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, settings, github, loop, SIGNING_SECRET) as bot,
    ):
        yield Rig(bot, fake_slack, github)


def test_eyes_on_the_ask_claim_it_and_the_others_are_not_reminded(pair: Rig) -> None:
    gate = pair.gate()
    pair.dm()  # Alice has been told directly
    reaction = {
        "type": "reaction_added",
        "user": BOB,
        "reaction": "eyes",
        "item": {"type": "message", "channel": LOOP, "ts": gate["ts"]},
        "item_user": "U0THELOOP",
        "event_ts": "1796650000.000100",
    }
    assert pair.slack.push_envelope({"type": "event_callback", "event": reaction}) is not None

    def claimed() -> list[dict[str, Any]]:
        (now,) = [m for m in pair.slack.messages(LOOP) if m["ts"] == gate["ts"]]
        said = json.dumps(now.get("blocks") or [], ensure_ascii=False)
        return [now] if f"👀 <@{BOB}> is on it." in said else []

    wait_for(claimed, TIMEOUT, "Bob's claim on the gate's own message")
    # Past the reminder's time and the escalation's: Alice, who did not claim it, is not
    # reminded; the escalation still comes (a claim answers nothing).
    wait_for(lambda: pair.posts("escalate:"), TIMEOUT, "the escalation")
    reminded = [p for p in pair.posts("remind:") if p["channel"] == ALICE_DM]
    assert reminded == []
