"""Two bots, one PostgreSQL: the room survives losing one of them, end to end.

Two real ``errbot`` processes (the SlackV3 backend on Socket Mode against the loopback
fake of Slack, the-loop's API and GitHub faked beside it) share one real PostgreSQL
database (tests/conftest.py). Bot A takes events and is SIGKILLed while a post of its own
hangs in Slack; it stays down. Bot B takes the events after that and the decision a member
types while A is down. Shown: every event either accepted is posted exactly once, each work
item keeps the one thread A opened, in the order sent, and the decision reaches the-loop
once — B took over A's claims after their lease and found the post A had made.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from looproom.postgres import schema
from looproom.postgres.database import Database
from tests.e2e import slackbot
from tests.e2e.botproc import BotProcess
from tests.e2e.slackbot import LOOP, SlackBot, corpus, event_key
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import FakeSlack
from tests.support import messages
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

W260, W188 = "github:MadaraUchiha-314/the-loop#260", "github:MadaraUchiha-314/the-loop#188"
ALICE = "U0ALICE01"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [phase.started, phase.progress, phase.completed, phase-approval-pending,
              comment.agent, session.awaiting_input]
  verbosity: normal
  room: {style: classic}
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
"""
#: Short, so the test waits seconds, not the default half minute, for A's claims to lapse.
LEASE_SECONDS = "3"
#: Pacing is about one post a second per channel: waits are sized for that, not for speed.
TIMEOUT = 90.0


@dataclass
class Replicas:
    a: SlackBot
    b: SlackBot
    slack: FakeSlack
    loop: FakeLoop


@pytest.fixture
def replicas(tmp_path: Path, fake_slack: FakeSlack, database_url: str) -> Iterator[Replicas]:
    with FakeGitHub({}) as github, FakeLoop({W260: False}) as loop:
        started: list[SlackBot] = []
        try:
            for name in ("a", "b"):
                env = {
                    "THELOOP_DATABASE_URL": database_url,
                    "THELOOP_REPLICA": f"bot-{name}",
                    "THELOOP_LEASE_SECONDS": LEASE_SECONDS,
                    "THELOOP_GITHUB_TOKEN": TOKEN,
                    "THELOOP_GITHUB_API": github.url,
                    "THELOOP_LOOP_API": loop.url,
                }
                started.append(slackbot.start(tmp_path / name, SETTINGS, fake_slack, env))
            yield Replicas(started[0], started[1], fake_slack, loop)
        finally:
            for bot in started:
                bot.process.kill()


def posted_keys(slack: FakeSlack) -> Counter[str]:
    """How many times each event key was posted in the room."""
    return Counter(key for message in slack.messages(LOOP) if (key := event_key(message)))


def parents(slack: FakeSlack) -> dict[str, dict[str, Any]]:
    """Work item → its parent; a second parent for one work item fails the test."""
    found: dict[str, dict[str, Any]] = {}
    for message in slack.top_level(LOOP):
        payload = message["metadata"]["event_payload"]
        assert payload.get("kind") == "parent", f"a top-level message that is no parent: {message}"
        assert payload["workItem"] not in found, f"a second thread for {payload['workItem']}"
        found[payload["workItem"]] = message
    return found


def thread_keys(slack: FakeSlack, parent: dict[str, Any]) -> list[str]:
    """The event keys posted in a parent's thread, in the thread's order."""
    return [key for m in slack.thread(LOOP, parent["ts"]) if (key := event_key(m))]


def send(bot: SlackBot, *events: dict[str, Any]) -> list[str]:
    for event in events:
        status, answer = bot.send(event)
        assert status == 202, answer
    return [event["id"] for event in events]


def test_a_replica_killed_mid_delivery_loses_nothing_doubles_nothing_splits_no_thread(
    replicas: Replicas,
) -> None:
    a, b, slack = replicas.a, replicas.b, replicas.slack
    ask = a.show(corpus("15"), TIMEOUT)  # A opens W260's thread with the-loop's question
    a.show(corpus("18"), TIMEOUT)  # and W188's
    sent = {W260: [corpus("15")["id"]], W188: [corpus("18")["id"]]}
    # A's next post lands in Slack but its answer never comes: A dies waiting for it.
    slack.fail("chat.postMessage", "land_then_hang")
    sent[W260] += send(a, corpus("04"))
    wait_for(lambda: sent[W260][-1] in posted_keys(slack), TIMEOUT, "A's post in flight")
    sent[W260] += send(a, corpus("05"))  # accepted by A, held behind the post in flight
    sent[W188] += send(a, messages.event("19", id="e2e-19-by-a"))
    a.process.kill()
    slack.release()

    sent[W260] += send(b, corpus("06"), corpus("07"))
    sent[W188] += send(b, messages.event("18", id="e2e-18-by-b"))
    # Typed while A is down: only B holds a Socket Mode connection to hear it.
    answer = b.say(ALICE, "Option 2, please: backfill", ask["thread_ts"])

    every = [key for keys in sent.values() for key in keys]
    wait_for(
        lambda: set(every) <= set(posted_keys(slack)),
        TIMEOUT,
        lambda: f"every accepted event posted; missing {set(every) - set(posted_keys(slack))}",
    )
    wait_for(lambda: replicas.loop.replies, TIMEOUT, "the answer relayed to the-loop")
    b.process.wait_delivered(TIMEOUT)
    assert posted_keys(slack) == Counter(dict.fromkeys(every, 1))
    threads = parents(slack)
    assert {item: thread_keys(slack, threads[item]) for item in sent} == sent
    assert [reply["text"] for reply in replicas.loop.replies] == ["Option 2, please: backfill"]
    acknowledged = [c.args["name"] for c in slack.calls_to("reactions.add")]
    assert acknowledged.count("white_check_mark") == 1 and answer["ts"]


def test_a_bot_refuses_to_start_on_a_database_a_newer_theloop_migrated(
    tmp_path: Path, database_url: str
) -> None:
    Database(database_url).close()  # made by this theloop…
    with psycopg.connect(database_url) as db:  # …then migrated by a newer one
        db.execute("INSERT INTO theloop_schema (version) VALUES (%s)", (schema.VERSION + 1,))
    bot = BotProcess(tmp_path, env={"THELOOP_DATABASE_URL": database_url})
    bot.start(wait=False)
    assert bot.process is not None and bot.process.wait(60) != 0
    assert (
        "theloop cannot start, THELOOP_DATABASE_URL: the database's schema is version "
        f"{schema.VERSION + 1}, newer than this theloop knows ({schema.VERSION})"
    ) in bot.log_text()
