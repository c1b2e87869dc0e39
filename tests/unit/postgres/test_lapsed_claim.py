"""A replica frozen mid-delivery longer than a lease, then continued, does nothing twice.

The shared-mode soak found it (seed 7002, a replica paused with ``SIGSTOP`` for 16 s on a
10 s lease): the frozen replica had claimed an event; its claim lapsed, the other replica
took the event over and posted it; continued, the first posted it as well. Here the same
on a real PostgreSQL, the real worker, outlet and transport, and the fake of Slack — and a
decision's relay, frozen the same way, with the real relay and the fake of GitHub.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from looproom.decide import kinds
from looproom.durable.contract import Item
from looproom.durable.outcome import Outcome
from looproom.durable.worker import Worker
from looproom.events import KNOWN_EVENTS, Event
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.relay import relay
from looproom.relay.sinks import GitHubSink, LedgerSink, Sinks
from looproom.room.outlets import event_delivery
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, decoded
from tests.support import messages
from tests.unit.relay.test_relay import REPOS, Room, decision, relay_body

LEASE = 10.0
LOOP = "C0LOOP0001"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop")]) as fake:
        yield fake


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    opened = Database(database_url)
    yield opened
    opened.close()


def _replica(database: Database, name: str, clock: Clock, slack: FakeSlack) -> tuple:
    """One replica: its view of the shared inbox, and its real outlet over Slack."""
    queue = PostgresQueue(database, "inbox", replica=name, lease=LEASE, clock=clock)
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer())
    settings = Settings(channel=LOOP, subscribe=KNOWN_EVENTS)
    outlet = SlackOutlet(transport, BindingBook({}), settings)
    return queue, event_delivery(outlet)


def _event() -> Event:
    wire = messages.event("04", id="lapse-1", workItem="github:acme/app#1")
    return Event.from_wire(wire)


def _posts(slack: FakeSlack, key: str) -> int:
    """Posts that landed in Slack carrying the event's key in their metadata."""
    return sum(
        1
        for call in slack.calls_to("chat.postMessage")
        if call.landed
        and ((decoded(call.args.get("metadata")) or {}).get("event_payload") or {}).get("key")
        == key
    )


def test_a_replica_continued_after_its_claim_was_taken_over_posts_nothing(
    database: Database, slack: FakeSlack
) -> None:
    clock = Clock()
    (a, deliver_a), (b, deliver_b) = (_replica(database, n, clock, slack) for n in "ab")
    event = _event()
    a.put(event.delivery_key, event.to_json())

    def frozen_then_continued(item: Item) -> Outcome:
        # Replica a froze right after its claim, longer than a lease; b took the event
        # over and posted it meanwhile. Then a goes on with what it was doing.
        clock.now += LEASE + 1
        taken = b.claim()
        assert taken is not None and taken.key == item.key
        by_b: list[Outcome] = []
        other = threading.Thread(target=lambda: by_b.append(deliver_b(taken)))  # its process
        other.start()
        other.join()
        assert type(by_b[0]).__name__ == "Delivered"
        return deliver_a(item)

    Worker(a, frozen_then_continued, clock=clock).step()
    assert _posts(slack, event.delivery_key) == 1  # b's, and only b's
    assert len(slack.top_level(LOOP)) == 1  # one parent for the work item
    assert a.get(event.delivery_key).state == "inflight"  # still b's to settle
    b.done(event.delivery_key)
    assert a.get(event.delivery_key).state == "done"


def test_a_replica_whose_claim_still_holds_posts_its_event_once(
    database: Database, slack: FakeSlack
) -> None:
    clock = Clock()
    a, deliver_a = _replica(database, "a", clock, slack)
    event = _event()
    a.put(event.delivery_key, event.to_json())

    def slow(item: Item) -> Outcome:
        clock.now += LEASE / 2  # slower than a beat, within the lease: still a's
        return deliver_a(item)

    assert Worker(a, slow, clock=clock).step() is True
    assert _posts(slack, event.delivery_key) == 1
    assert a.get(event.delivery_key).state == "done"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake  # type: ignore[misc]


def test_a_relay_continued_after_its_claim_was_taken_over_comments_nothing(
    database: Database, github: FakeGitHub, tmp_path: Path
) -> None:
    clock = Clock()

    def sinks(name: str) -> Sinks:
        ledger = LedgerSink(tmp_path / f"ledger-{name}.jsonl")
        return Sinks(ledger=ledger, github=GitHubSink(github.url, TOKEN, timeout=5))

    def queue(name: str) -> PostgresQueue:
        return PostgresQueue(database, relay.RELAY, replica=name, lease=LEASE, clock=clock)

    b = relay.Relay(queue("b"), sinks("b"), Room(), clock=clock)

    class FrozenAfterItsClaim(relay.Relay):
        def _send(self, item: Item) -> Outcome:
            clock.now += LEASE + 1  # frozen longer than a lease: b takes the decision over
            other = threading.Thread(target=b.step)  # b's own process
            other.start()
            other.join()
            return super()._send(item)

    a = FrozenAfterItsClaim(queue("a"), sinks("a"), Room(), clock=clock)
    approval = decision(words="ship it")
    a.record(approval, kinds.target(approval, a.sinks.available(REPOS)))
    a.step()
    assert github.posted() == [relay_body(approval)]  # b's comment, and only b's
