"""Two replicas on one PostgreSQL send each step of an ask once: one mention, one direct
message and one reminder per member, one escalation — each replica running the real
delivery worker over the shared attention queue, against one fake Slack, in real time
(timings in seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from slack_sdk import WebClient

from looproom.attention import steps
from looproom.attention.side import ATTENTION, AttentionSide
from looproom.attention.store import postgres_asks
from looproom.decide.authorization import AccessPolicy
from looproom.durable.worker import Worker
from looproom.events import Event
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.room.buttons import blocks_for
from looproom.room.memory import Memory
from looproom.settings import Settings
from looproom.slack.direct import Direct
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, decoded
from tests.support.wait import wait_for

ROOM = "C0LOOP0001"
ALICE, BOB = "U0ALICE01", "U0BOB0001"
ITEM = "github:acme/api#7"
GATE = Event(
    "phase-approval-pending", ITEM, id="g1", text="Design ready", detail={"node": "design"}
)
ATTENTION_SETTINGS = {
    "direct": True,
    "ask": "deciders",
    "remindAfter": 1,
    "escalateAfter": 2,
    "escalateTo": ["S0LEADS"],
    "workingHours": "00:00-24:00",
}


@dataclass
class Replica:
    side: AttentionSide
    worker: Worker
    database: Database


def replica(url: str, name: str, slack: FakeSlack, store: dict[str, Any]) -> Replica:
    database = Database(url)
    queue = PostgresQueue(database, ATTENTION, replica=name, lease=30.0)
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer())
    policy = AccessPolicy("UBOT", frozenset({ALICE, BOB}))
    settings = Settings.from_mapping({"attention": ATTENTION_SETTINGS})
    asks = postgres_asks(database)
    side = AttentionSide(
        settings, store, lambda: policy, str, asks, Memory(store).get, queue=queue, slack=transport
    )
    delivery = steps.Steps(asks, Direct(transport), side.feed.whom.room)
    return Replica(side, Worker(queue, delivery.deliver, slots=2), database)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def test_two_replicas_send_each_step_once(database_url: str, slack: FakeSlack) -> None:
    store: dict[str, Any] = {}
    first, second = (replica(database_url, name, slack, store) for name in ("a", "b"))
    posted = slack_post(slack, blocks_for(GATE, interactive=True))
    memory = Memory(store)
    first.side.feed.observed_event(GATE, memory.observe(GATE, ROOM, posted, ""))
    for running in (first, second):
        running.worker.start()
    try:
        wait_for(lambda: marked(slack, "escalate:"), 60, "the escalation")
        wait_for(lambda: len(marked(slack, "remind:")) == 2, 60, "both reminders")
    finally:
        for running in (first, second):
            running.worker.stop()
            running.database.close()
    keys = [key for key in marked(slack, "") if not key.startswith("home:")]
    assert len(keys) == len(set(keys)), keys  # not one step twice
    kinds = sorted(key.split(":")[0] for key in keys)
    assert kinds == ["dm", "dm", "escalate", "mention", "remind", "remind"]


def slack_post(slack: FakeSlack, blocks: list[dict[str, Any]]) -> str:
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url))
    return transport.post_message(ROOM, text="📋 Design ready", blocks=blocks).ts


def marked(slack: FakeSlack, start: str) -> list[str]:
    """The marks of the attention posts that landed, those starting with ``start``."""
    found = []
    for call in slack.calls_to("chat.postMessage"):
        payload = (decoded(call.args.get("metadata")) or {}).get("event_payload") or {}
        key = str(payload.get("key") or "")
        if call.response.get("ok") and payload.get("kind") == steps.MARK and key.startswith(start):
            found.append(key)
    return found
