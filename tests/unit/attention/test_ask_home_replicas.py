"""Two replicas on one PostgreSQL publish each member's Home once per change: both told of
the same gate (the store opens it once), the tab opened on one of them — each replica
running its attention side's own worker over the shared attention queue, against one
fake Slack, in real time. Nothing about attention is configured."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient

from looproom.attention.side import ATTENTION, AttentionSide
from looproom.attention.store import postgres_asks
from looproom.decide.authorization import AccessPolicy
from looproom.events import Event
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.room.buttons import blocks_for
from looproom.room.memory import Memory
from looproom.settings import Settings
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack
from tests.support.wait import wait_for

ROOM = "C0LOOP0001"
ALICE, BOB = "U0ALICE01", "U0BOB0001"
ITEM = "github:acme/api#7"
GATE = Event(
    "phase-approval-pending", ITEM, id="g1", text="Design ready", detail={"node": "design"}
)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def side_of(database: Database, name: str, slack: FakeSlack, store: dict[str, Any]) -> Any:
    queue = PostgresQueue(database, ATTENTION, replica=name, lease=30.0)
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer())
    policy = AccessPolicy("UBOT", frozenset({ALICE, BOB}))
    asks = postgres_asks(database)
    side = AttentionSide(
        Settings(),
        store,
        lambda: policy,
        str,
        asks,
        Memory(store).get,
        queue=queue,
        slack=transport,
    )
    return side, queue


def test_two_replicas_publish_each_home_once_per_change(
    database_url: str, slack: FakeSlack
) -> None:
    store: dict[str, Any] = {}
    databases = [Database(database_url), Database(database_url)]
    (first, queue), (second, _) = (
        side_of(db, name, slack, store) for db, name in zip(databases, "ab", strict=True)
    )
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url))
    posted = transport.post_message(ROOM, text="📋", blocks=blocks_for(GATE, interactive=True))
    state = Memory(store).observe(GATE, ROOM, posted.ts, "")
    for side in (first, second):  # both see it: the store opens it once
        side.feed.observed_event(GATE, state)
    second.home_opened(slack.home_opened(ALICE)["event"])
    try:
        for side in (first, second):
            side.start()
        wait_for(lambda: queue.depth() == 0 and len(slack.published) >= 3, 60, "the Homes")
    finally:
        for side in (first, second):
            side.stop()
        for database in databases:
            database.close()
    # Alice: the gate opened, and her tab opened; Bob: the gate opened. Once each.
    assert Counter(user for user, _ in slack.published) == {ALICE: 2, BOB: 1}
    assert all(f"theloop-home:{ROOM}:{posted.ts}" in str(view) for _, view in slack.published)
