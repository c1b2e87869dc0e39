"""The room's own records in the-loop's event log: ``the-loop events`` sees the room.

A real errbot on SlackV3 against the loopback fakes opens a work item's thread with
the-loop's ask, takes Alice's answer and her ``record-decision``, and refuses Bob, who is
not granted to answer. Then, on "the-loop's machine" — a directory of its own, its event
log already holding the-loop's own lines, which the bot is never told of — loopside's
``theloop_records`` reads the room's records over the signed route and appends them
through the-loop's writer, twice. The REAL ``the-loop events`` command (and the query
behind its API) reads the log back: each of the room's ``channel.*`` records is there
once, with the fields the-loop's own Slack channel writes, beside the-loop's lines.
And a kickoff: a work item opened from the kickoff room, a ``start`` said in its thread
while the bot was down and read by the catch-up at its restart — ``channel.created``,
``channel.thread_opened`` (``origin: kickoff``) and ``channel.caught_up`` in the log, once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from the_loop import eventlog

from tests.e2e.slackbot import LOOP, SECRET, START_TIMEOUT, SlackBot, StartBot, corpus, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO, NUMBER = "MadaraUchiha-314/the-loop", 260
ALICE, BOB = "U0ALICE01", "U0BOB0001"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.human, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
"""
TIMEOUT = 60.0
ROOT = Path(__file__).resolve().parents[2]
THE_LOOP = Path(sys.executable).with_name("the-loop")


@pytest.fixture
def bot(slack_bot: StartBot) -> Iterator[tuple[SlackBot, FakeLoop]]:
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, "e2e-slack-signing-secret") as running,
    ):
        yield running, loop


class LoopMachine:
    """the-loop's side: its CLI config, its event log, loopside's state — nothing the bot knows."""

    def __init__(self, place: Path) -> None:
        place.mkdir()
        self.log = place / "logs" / "events.jsonl"
        self.config = place / "cli-config.yaml"
        self.config.write_text(f"eventLog:\n  path: {self.log}\n", encoding="utf-8")
        self.state = place / "loopside-state"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("THELOOP_", "THE_LOOP_"))},
            "THE_LOOP_CLI_CONFIG": str(self.config),
            "THE_LOOP_SERVICE_LOCAL": "1",  # `the-loop events` reads its log in-process
            "ROOM_SECRET": SECRET,
            "PYTHONPATH": str(ROOT / "loopside"),
        }

    def fetch(self, bot: SlackBot) -> str:
        """loopside's ``theloop_records``, once, pointed at the bot as ``$THELOOP_URL`` is."""
        url = f"http://{bot.process.host}:{bot.process.port}/theloop/events"
        argv = ["--url", url, "--secret-env", "ROOM_SECRET", "--state", str(self.state)]
        done = subprocess.run(
            [sys.executable, "-m", "theloop_records", *argv],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def events(self, *types: str) -> list[dict[str, Any]]:
        """What the real ``the-loop events`` prints, as JSON."""
        flags = [arg for kind in types for arg in ("--type", kind)]
        done = subprocess.run(
            [str(THE_LOOP), "events", *flags, "--limit", "0", "--format", "json"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def served(self, kind: str) -> list[dict[str, Any]]:
        """What the-loop's ``GET /api/v1/events?type=…`` (its dashboard's read) answers: the
        core query its API, its command and its MCP tool all call, on its configured log."""
        script = (
            "import json, sys; from the_loop.core.events import query_events; "
            "print(json.dumps(query_events(types=[sys.argv[1]], limit=0)))"
        )
        done = subprocess.run(
            [sys.executable, "-c", script, kind],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


def test_the_loop_events_shows_what_the_room_posted_took_and_refused_each_once(
    bot: tuple[SlackBot, FakeLoop], fake_slack: FakeSlack, tmp_path: Path
) -> None:
    running, loop = bot
    machine = LoopMachine(tmp_path / "the-loop-machine")
    eventlog.EventLog(machine.log, source="gh-webhook").emit("dispatch.succeeded", work_item=ITEM)

    ask = running.show(corpus("15"), TIMEOUT)
    thread = ask["thread_ts"]
    running.process.wait_delivered(TIMEOUT)  # settled: its record is kept before that
    answer = running.say(ALICE, "Option 2, please: backfill", thread)
    wait_for(lambda: loop.replies, TIMEOUT, "Alice's answer to reach the session")
    decided = running.say(ALICE, "record-decision tech: ship on Friday", thread)

    def landed() -> bool:
        return any(
            c.args["timestamp"] == decided["ts"] and c.args["name"] == "white_check_mark"
            for c in fake_slack.calls_to("reactions.add")
        )

    wait_for(landed, TIMEOUT, "the decision record to land on the ticket")
    refused = running.say(BOB, "changes I disagree", thread)

    def bob_told() -> bool:
        return any(c.args["user"] == BOB for c in fake_slack.calls_to("chat.postEphemeral"))

    wait_for(bob_told, TIMEOUT, "Bob told why not")

    first = machine.fetch(running)
    again = machine.fetch(running)  # the same records offered again: none appended twice
    assert "0 appended" in again, again

    everything = machine.events("channel.*")
    # The catch-up at start (and at the connect) said what it read: nothing was missed.
    caught = [r for r in everything if r["event"] == "channel.caught_up"]
    assert caught and all(r["processed"] == 0 for r in caught)
    assert f"{6 + len(caught)} appended" in first, first
    room = [r for r in everything if r["event"] != "channel.caught_up"]
    assert sorted(r["event"] for r in room) == [
        "channel.decision_recorded",
        "channel.dropped",
        "channel.posted",
        "channel.reply_received",
        "channel.reply_received",
        "channel.thread_opened",
    ]
    assert len({r["room_record"] for r in room}) == 6
    assert all(r["source"] == "theloop-room" for r in room)
    by = {r["event"]: r for r in room}
    posted = by["channel.posted"]
    assert (posted["channel"], posted["work_item"]) == ("slack", ITEM)
    assert (posted["event_type"], posted["channel_id"], posted["thread"]) == (
        "session.awaiting_input",
        LOOP,
        thread,
    )
    opened = by["channel.thread_opened"]
    assert (opened["work_item"], opened["thread"], opened["origin"]) == (ITEM, thread, "event")
    taken = [r for r in room if r["event"] == "channel.reply_received"]
    assert [(r["work_item"], r["actor"], r["gate"]) for r in taken] == [
        (ITEM, ALICE, "open"),  # the answer to the open ask
        (ITEM, ALICE, "none"),  # the decision record answers no question
    ]
    recorded = by["channel.decision_recorded"]
    assert (recorded["actor"], recorded["kind"], recorded["thread"]) == (ALICE, "tech", thread)
    dropped = by["channel.dropped"]
    assert (dropped["reason"], dropped["actor"], dropped["work_item"]) == (
        "unauthorized-actor",
        BOB,
        ITEM,
    )
    assert dropped["level"] == "warning"
    # Ids, never words: nothing Alice or Bob typed reached the log.
    text = machine.log.read_text(encoding="utf-8")
    assert not any(words in text for words in ("backfill", "disagree", "Friday"))
    assert answer["ts"] and refused["ts"]
    # the-loop's own line is where it was, and `--type` reads the room's as the peer's.
    assert [r["event"] for r in machine.events("dispatch.*")] == ["dispatch.succeeded"]
    assert [r["actor"] for r in machine.events("channel.dropped")] == [BOB]
    assert machine.served("channel.*") == everything


KICKOFF_SETTINGS = """
slack:
  channel: "#the-loop"
  authorizedUsers: [U0ALICE01]
  kickoff: {repo: acme/api}
people: {U0ALICE01: alice-gh}
"""


def test_the_loop_events_shows_a_kickoff_and_the_catch_up_that_read_a_start_said_while_away(
    slack_bot: StartBot, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """Alice opens a work item at the top of the kickoff room; while the bot is down she
    says ``start`` in its thread. Started again, the bot's catch-up reads it and takes it.
    the-loop's log shows the opening and its thread as the-loop's own kickoff writes them,
    the ``start`` taken, and a catch-up that read it — each once."""
    machine = LoopMachine(tmp_path / "the-loop-machine")
    ref = "github:acme/api#1"
    with (
        FakeGitHub({"acme/api": set()}) as github,
        FakeLoop({ref: False}) as loop,
        relaying(slack_bot, KICKOFF_SETTINGS, github, loop, "e2e-signing") as running,
    ):
        first = running.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "")

        def opened_line() -> bool:
            return any(
                "🆕 Opened" in str(m.get("text")) for m in fake_slack.thread(LOOP, first["ts"])
            )

        wait_for(opened_line, TIMEOUT, "the work item's thread said opened")
        running.process.kill()
        fake_slack.say(LOOP, ALICE, "start", thread_ts=first["ts"])  # the bot is down
        running.process.start(timeout=START_TIMEOUT)

        def taken() -> list[dict[str, Any]]:
            machine.fetch(running)
            return machine.events("channel.reply_received")

        wait_for(taken, TIMEOUT, "the start said while away, taken, in the-loop's log")
        again = machine.fetch(running)
        assert "0 appended" in again, again

    created = machine.events("channel.created")
    assert [(r["work_item"], r["actor"], r["thread"], r["channel_id"]) for r in created] == [
        (ref, ALICE, first["ts"], LOOP)
    ]
    assert created[0]["source"] == "theloop-room" and created[0]["channel"] == "slack"
    opened = machine.events("channel.thread_opened")
    assert [(r["work_item"], r["thread"], r["origin"]) for r in opened] == [
        (ref, first["ts"], "kickoff")
    ]
    assert [(r["work_item"], r["actor"]) for r in machine.events("channel.reply_received")] == [
        (ref, ALICE)
    ]
    caught = machine.events("channel.caught_up")
    # One catch-up per start and connect, each its own record; a restart's read the answer.
    # (A read also counts what it offered that the live path had taken, so when a catch-up
    # runs after the kickoff was said, it may count that message too: no exact count.)
    assert any(r["processed"] >= 1 for r in caught)
    assert len({r["room_record"] for r in caught}) == len(caught)
    # Ids, never words: nothing Alice typed reached the log.
    text = machine.log.read_text(encoding="utf-8")
    assert "webhook" not in text
