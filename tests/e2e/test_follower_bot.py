"""the-loop's event stream as the bot's second ingress, end to end.

A real ``errbot -c config.py`` process runs the real SlackV3 backend against the loopback
fake of Slack, with ``THELOOP_LOOP_STREAM`` pointing — through a TCP proxy the test can
cut — at the-loop's REAL control plane (``the_loop.api``) serving ``GET /api/v1/stream``
over an event log the test writes with the-loop's own writer. Shown here: an ask written
into the-loop's log becomes a message in the configured room, carrying the event's key in
its metadata; a dropped connection and a bot restart (graceful or killed) both resume from
the stored stream id, so the asks written meanwhile arrive and none is posted twice; and
``!theloop status`` shows the stream.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from looproom.clients.the_loop import STREAM_PATH
from looproom.inbound.loop_records import record_id
from looproom.slack.marks import metadata
from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, StartBot, event_key
from tests.fakes.loop_stream import WORK_ITEM, LoopAPI, Proxy
from tests.fakes.slack_api import FakeSlack, decoded
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [session.awaiting_input]
"""
ALICE = "U0ALICE01"  # THELOOP_ADMINS in slack_env
ALICE_DM = "D0ALICE01"  # the fake's conversations.open answer for her
#: A bound on waiting, never an expectation of speed: it covers the follower's backoff
#: (the-loop asks for 3 s between reconnects, doubled per failure) and Slack's pacing.
TIMEOUT = 90.0


@dataclass
class Rig:
    """the-loop's API behind a proxy, and a SlackV3 bot following its stream."""

    loop: LoopAPI
    proxy: Proxy
    bot: SlackBot
    slack: FakeSlack

    def subscriptions(self) -> list[dict[str, Any]]:
        """What the-loop logged for each stream connection it accepted (with its cursor)."""
        return self.loop.records("stream.subscribed")

    def wait_subscribed(self, count: int) -> dict[str, Any]:
        """The ``count``-th accepted stream connection, once the-loop has it."""
        wait_for(lambda: len(self.subscriptions()) >= count, TIMEOUT, f"stream connection {count}")
        return self.subscriptions()[count - 1]

    def key(self, question: str) -> str:
        """The inbox key of the ask record holding ``question`` in the-loop's log."""
        (record,) = [
            r for r in self.loop.records("session.awaiting_input") if r["question"] == question
        ]
        return record_id(record)

    def span(self, question: str) -> tuple[int, int]:
        """Where the ask holding ``question`` sits in the log, in bytes: the stream's ids
        are the offsets just past a record, so a resume from a record's end skips it."""
        start = 0
        for line in self.loop.log_path.read_bytes().splitlines(keepends=True):
            if json.loads(line).get("question") == question:
                return start, start + len(line)
            start += len(line)
        raise AssertionError(f"no ask {question!r} in the-loop's log")

    def posts(self) -> Counter[str]:
        """How many ``chat.postMessage`` calls carried each event key."""
        return Counter(
            key for call in self.slack.calls_to("chat.postMessage") if (key := event_key(call.args))
        )

    def wait_posted(self, *questions: str) -> dict[str, dict[str, Any]]:
        """Question → its ``chat.postMessage`` arguments, once every one was posted."""
        keys = {question: self.key(question) for question in questions}
        wait_for(lambda: set(keys.values()) <= set(self.posts()), TIMEOUT, f"posts of {questions}")
        calls = {event_key(c.args): c.args for c in self.slack.calls_to("chat.postMessage")}
        return {question: calls[key] for question, key in keys.items()}

    def settle(self) -> str:
        """Ask once more and wait for it: the inbox delivers in order, so anything queued
        before (a duplicate, say) has been posted by then. The probe's question."""
        probe = f"probe {uuid.uuid4().hex[:8]}: still there?"
        self.loop.ask(probe)
        self.wait_posted(probe)
        return probe

    def assert_each_posted_once(self, *questions: str) -> None:
        assert self.posts() == Counter({self.key(q): 1 for q in questions}), self.posts()

    def command(self, text: str) -> str:
        """An admin sends ``text`` to the bot in a direct message (Errbot takes admin
        commands only there); the bot's answer."""
        dm = self.slack.channel_id(ALICE_DM) or self.slack.add_channel("alice-dm", ALICE_DM)
        message = {"type": "message", "channel_type": "im", "user": ALICE, "text": text}
        ts = f"{1_800_000_000 + len(self.slack.calls)}.000001"
        event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": ts}}
        assert self.slack.push_envelope(event) is not None, "the bot did not ack the command"

        def answers() -> list[str]:
            return [str(m.get("text") or "") for m in self.slack.messages(dm)]

        return wait_for(answers, TIMEOUT, f"an answer to {text}")[0]


@pytest.fixture
def rig(tmp_path: Path, slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    loop = LoopAPI(tmp_path / "loop")
    proxy = Proxy(loop.start())
    try:
        bot = slack_bot(SETTINGS, {"THELOOP_LOOP_STREAM": proxy.url + STREAM_PATH})
        try:
            rig = Rig(loop, proxy, bot, fake_slack)
            # A first connection starts at the log's end (the-loop's rule): ask only after it.
            rig.wait_subscribed(1)
            yield rig
        finally:
            bot.process.kill()  # before the-loop's API goes away
    finally:
        proxy.close()
        loop.stop()


def test_an_ask_in_the_loop_log_becomes_a_message_in_the_room(rig: Rig) -> None:
    question = "Which migration should run first, 1 or 2?"
    rig.loop.noise()
    rig.loop.ask(question)
    posted = rig.wait_posted(question)[question]
    assert rig.slack.channel_id(str(posted["channel"])) == LOOP
    assert posted.get("thread_ts"), "the ask was not posted in its work item's thread"
    assert question in posted["text"]
    assert question in json.dumps(posted.get("blocks") or [], ensure_ascii=False)
    assert decoded(posted["metadata"]) == metadata("event", rig.key(question), WORK_ITEM)
    assert rig.posts() == Counter({rig.key(question): 1})

    status = rig.command("!theloop status")
    line = next((ln for ln in status.splitlines() if "loop stream" in ln), status)
    assert STREAM_PATH in line and ": connected" in line, status
    assert "1 accepted, 0 duplicate(s)" in line, status


def test_a_dropped_connection_resumes_from_the_last_id_without_loss_or_duplicate(
    rig: Rig,
) -> None:
    before = "Before the drop: keep the old index?"
    rig.loop.ask(before)
    rig.wait_posted(before)

    connections = len(rig.subscriptions())
    rig.proxy.accepting.clear()
    rig.proxy.cut()
    cut_off = ["While cut off: rename the table?", "While cut off: drop the column?"]
    rig.loop.ask(cut_off[0])
    rig.loop.noise()
    rig.loop.ask(cut_off[1])
    rig.proxy.accepting.set()

    # the-loop logs the Last-Event-ID each connection brought: the reconnect resumed
    # past what was delivered and before what was missed.
    cursor = rig.wait_subscribed(connections + 1).get("cursor")
    assert isinstance(cursor, int), "the follower reconnected without its last id"
    assert rig.span(before)[1] <= cursor <= rig.span(cut_off[0])[0]
    rig.wait_posted(*cut_off)
    rig.assert_each_posted_once(before, *cut_off, rig.settle())


@pytest.mark.parametrize("crash", [False, True], ids=["stopped", "killed"])
def test_a_restarted_bot_resumes_from_its_stored_cursor(rig: Rig, crash: bool) -> None:
    before = "Before the restart: ship on Friday?"
    rig.loop.ask(before)
    rig.wait_posted(before)
    rig.loop.noise()

    connections = len(rig.subscriptions())
    rig.bot.process.kill() if crash else rig.bot.process.stop()
    down = ["While the bot was down: which region?", "While the bot was down: which owner?"]
    for question in down:
        rig.loop.ask(question)
        rig.loop.noise()
    rig.bot.process.start(timeout=START_TIMEOUT)

    cursor = rig.wait_subscribed(connections + 1).get("cursor")
    assert isinstance(cursor, int), "the restarted bot did not send its stored id"
    assert cursor <= rig.span(down[0])[0]
    if not crash:  # stopped: every id it saw was stored; killed: it may replay a little
        assert cursor >= rig.span(before)[1]
    rig.wait_posted(*down)
    rig.assert_each_posted_once(before, *down, rig.settle())
