"""The shared mode on a real PostgreSQL server: replicas, leases, the schema, an outage.

What both stores share is specified in test_store_contract.py; here is what only
replicas on one database have: two claimers never hold one work item at once, a stopped
replica's claim is taken over after its lease (and only then), the schema refuses a
newer database, and a database outage is a 503 the sender retries, never a lost event.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from looproom.assembly import Activation
from looproom.durable.sqlite import StorageError
from looproom.inbound import webhook as ingress
from looproom.metrics import Metrics
from looproom.postgres import database as database_module
from looproom.postgres import schema
from looproom.postgres.database import Database
from looproom.postgres.queue import PostgresQueue
from looproom.postgres.replicas import Heartbeat
from looproom.postgres.state import PostgresState
from looproom.settings import Environment, Settings
from tests.support.postgres import PostgresServer
from tests.support.signed import webhook_headers
from tests.support.wait import wait_for

LEASE = 30.0
SECRET = "shared-mode-test-webhook-secret"


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def database(database_url: str) -> Iterator[Database]:
    opened = Database(database_url)
    yield opened
    opened.close()


def _replica(
    database: Database, name: str, clock: Callable[[], float] = time.time
) -> PostgresQueue:
    return PostgresQueue(database, "inbox", replica=name, lease=LEASE, clock=clock)


def test_two_replicas_never_hold_one_work_item_at_once_and_keep_its_order(
    database: Database,
) -> None:
    a, b = _replica(database, "a"), _replica(database, "b")
    groups = {f"item-{g}": [f"{g}-{n}" for n in range(8)] for g in range(4)}
    for n in range(8):  # interleaved, half put by each replica
        for g, keys in enumerate(groups.values()):
            (a if (g + n) % 2 else b).put(keys[n], "{}", group=f"item-{g}")
    holding: dict[str, str] = {}
    delivered: dict[str, list[str]] = {group: [] for group in groups}
    overlaps: list[str] = []
    lock = threading.Lock()

    def deliver(queue: PostgresQueue) -> None:
        idle = 0
        while idle < 20:
            item = queue.claim()
            if item is None:
                idle += 1
                time.sleep(0.01)
                continue
            idle = 0
            group = "item-" + item.key.split("-")[0]
            with lock:
                if group in holding:
                    overlaps.append(f"{item.key} while {holding[group]}")
                holding[group] = item.key
            with lock:
                del holding[group]
                delivered[group].append(item.key)
            queue.done(item.key)

    threads = [threading.Thread(target=deliver, args=(q,)) for q in (a, b, a, b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == []
    assert delivered == groups


def test_a_stopped_replicas_claim_is_taken_over_after_its_lease_and_only_then(
    database: Database,
) -> None:
    clock = Clock()
    beat_a = Heartbeat(database, "a", LEASE, clock=clock)
    a, b = _replica(database, beat_a.id, clock), _replica(database, "b", clock)
    a.put("e1", "{}")
    assert a.claim().key == "e1"
    clock.now += LEASE - 1
    beat_a.beat()  # alive: the lease is extended
    clock.now += 2
    assert b.claim() is None
    assert b.next_due() == clock.now + LEASE - 2  # when b should look again
    clock.now += LEASE  # a stopped beating: its claim lapses
    taken = b.claim()
    assert (taken.key, taken.maybe_delivered, taken.attempts) == ("e1", True, 2)
    a.done("e1")  # a late word from the replica that lost the claim changes nothing
    assert a.get("e1").state == "inflight"
    b.done("e1")
    assert a.get("e1").state == "done"


def test_a_waiting_replica_is_woken_by_another_replicas_put_and_settle(
    database_url: str,
) -> None:
    here, there = Database(database_url), Database(database_url)  # two processes' pools
    try:
        waiting, other = _replica(here, "a"), _replica(there, "b")
        keys = iter(range(1000))
        # The listener connects in the background; once it listens, a put is heard.
        wait_for(
            lambda: _wakes(waiting, lambda: other.put(f"warm-{next(keys)}", "{}")),
            60,
            "the first put heard",
        )
        claimed = other.claim()  # held by the other replica: settling it may free its group
        assert _wakes(waiting, lambda: other.done(claimed.key))
    finally:
        here.close()
        there.close()


def _wakes(queue: PostgresQueue, change: Callable[[], object]) -> bool:
    """Whether a ``queue.wait`` in progress returns once ``change`` is made elsewhere."""
    queue.wait(0)  # nothing told from before
    waiter = threading.Thread(target=queue.wait, args=(600,), daemon=True)
    waiter.start()
    change()
    waiter.join(5)
    return not waiter.is_alive()


def test_a_replica_that_stops_gracefully_hands_its_claims_back_at_once(
    database: Database,
) -> None:
    beat_a = Heartbeat(database, "a", LEASE)
    a, b = _replica(database, beat_a.id), _replica(database, "b")
    a.put("e1", "{}")
    a.claim()
    beat_a.stop()  # a rolling restart: the delivery may have landed, so it is flagged
    taken = b.claim()
    assert (taken.key, taken.maybe_delivered, taken.attempts) == ("e1", True, 2)


def test_the_replicas_seen_are_those_whose_heartbeat_is_younger_than_a_lease(
    database: Database,
) -> None:
    clock = Clock()
    a = Heartbeat(database, "bot-a", LEASE, clock=clock)
    b = Heartbeat(database, "bot-b", LEASE, clock=clock)
    a.beat()
    b.beat()
    assert [(s.name, s.me) for s in a.seen()] == [("bot-a", True), ("bot-b", False)]
    clock.now += LEASE / 2
    a.beat()
    clock.now += LEASE / 2 + 1
    assert [s.name for s in b.seen()] == ["bot-a"]


def test_read_modify_writes_from_two_replicas_never_lose_an_update(database: Database) -> None:
    replicas = [PostgresState(database), PostgresState(database)]

    def count(state: PostgresState) -> None:
        for _ in range(25):
            with state.atomic, state.atomic:  # re-entrant: the inner joins the outer
                state["n"] = state.get("n", 0) + 1

    threads = [threading.Thread(target=count, args=(s,)) for s in replicas * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert replicas[0]["n"] == 100


def test_a_block_that_raises_writes_nothing(database: Database) -> None:
    state = PostgresState(database)
    state["kept"] = 1
    with pytest.raises(RuntimeError), state.atomic:
        state["kept"] = 2
        raise RuntimeError("a book's bug half-way through")
    assert state["kept"] == 1


def test_the_schema_is_made_once_by_replicas_starting_together(database_url: str) -> None:
    opened: list[Database] = []
    threads = [
        threading.Thread(target=lambda: opened.append(Database(database_url))) for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with psycopg.connect(database_url) as db:
        versions = [row[0] for row in db.execute("SELECT version FROM theloop_schema")]
    for each in opened:
        each.close()
    assert (len(opened), versions) == (3, list(range(1, schema.VERSION + 1)))


def test_a_database_a_newer_theloop_migrated_is_refused(database_url: str) -> None:
    Database(database_url).close()
    with psycopg.connect(database_url) as db:
        db.execute("INSERT INTO theloop_schema (version) VALUES (%s)", (schema.VERSION + 1,))
    with pytest.raises(schema.SchemaTooNew, match=f"version {schema.VERSION + 1}, newer"):
        Database(database_url)


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of the test's own, to stop and start without disturbing the others."""
    server = PostgresServer()
    server.start()
    yield server
    server.close()


def _room(tmp_path: Path, url: str, said: list[str]) -> Activation:
    env = Environment.from_env(
        {"THELOOP_WEBHOOK_SECRET": SECRET, "THELOOP_DATABASE_URL": url, "THELOOP_REPLICA": "bot-a"}
    )
    return Activation(
        env,
        Settings(),
        store={},
        data_dir=tmp_path,
        slack=None,
        say=lambda _to, text: said.append(text),  # no room: the admin hears each event
        admins=("@admin",),
        bot_member=lambda: "@theloop",
    )


def _post(room: Activation, n: int) -> ingress.Answer:
    body = json.dumps(
        {
            "id": f"ask-{n}",
            "eventType": "session.awaiting_input",
            "workItem": "github:acme/api#7",
            "text": f"question number {n}?",
        }
    ).encode()
    return room.routes.receive(
        ingress.Request("POST", webhook_headers(SECRET, body), body, len(body))
    )


def test_a_database_outage_is_a_503_to_retry_then_delivery_resumes_and_nothing_is_lost(
    tmp_path: Path, own_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database_module, "CONNECT_TIMEOUT", 1.0)  # the test waits on each
    url = own_server.new_database().replace("theloop@", "theloop:hunter2-password@")
    said: list[str] = []
    room = _room(tmp_path, url, said)
    room.start()

    def asked(n: int) -> int:
        return sum(f"question number {n}?" in line for line in said)

    try:
        assert _post(room, 1).status == 202
        wait_for(lambda: asked(1), 60, "the first question delivered")
        own_server.stop()
        refused = _post(room, 2)
        health = room.routes.health()
        status = room.admin.status(time.time())
        own_server.start()
        assert "FAILING: storage postgresql://127.0.0.1" in status
        assert (refused.status, refused.headers.get("Retry-After")) == (503, "30")
        # Health, asked without credentials, names no server, database or replica.
        assert (health.status, health.body) == (503, {"status": "degraded"})
        assert "hunter2" not in status + json.dumps(refused.body)
        # The sender retries until the database answers again (its 503s are not a loss).
        wait_for(lambda: _post(room, 2).status == 202, 60, "the webhook to store again")
        wait_for(lambda: asked(2), 120, "delivery to resume after the outage")
        wait_for(
            lambda: (
                "replicas seen within the lease: bot-a (this one)" in room.admin.status(time.time())
            ),
            60,
            "a heartbeat seen",
        )
        assert (
            f"store: PostgreSQL {url.replace('theloop:hunter2-password@', '')}"
            in room.admin.status(time.time())
        )
        # Nothing lost. (A plain backend cannot look for what it said before the outage cut
        # the delivery's bookkeeping, so it may say it again; Slack's outlet looks first.)
        wait_for(lambda: room.inbox.depth() == 0, 60, "both recorded delivered")
        assert asked(1) >= 1 and asked(2) >= 1
    finally:
        room.stop()


def test_a_write_in_an_outage_fails_naming_the_server_and_a_settle_is_owed_not_lost(
    own_server: PostgresServer,
) -> None:
    database = Database(own_server.new_database(), timeout=1.0)
    state, q = PostgresState(database), _replica(database, "a")
    q.put("k1", "{}", group="g")
    q.put("k2", "{}", group="g")
    q.claim()
    own_server.stop()
    try:
        with pytest.raises(StorageError, match=f"127.0.0.1:{own_server.port}"):
            state["k"] = 1
        q.done("k1")  # delivered during the outage: owed, not raised, not lost
        with pytest.raises(StorageError):
            q.claim()  # nothing is handed out while what is owed cannot be recorded
    finally:
        own_server.start()
    try:
        taken = wait_for(_claims(q), 60, "a claim once the database answers")
        assert (taken.key, q.get("k1").state) == ("k2", "done")
    finally:
        database.close()


def _claims(q: PostgresQueue) -> Callable[[], object]:
    def claim() -> object:
        try:
            return q.claim()
        except StorageError:
            return None  # the pool is still reconnecting

    return claim


def test_every_metric_of_a_replica_carries_its_name() -> None:
    metrics = Metrics(replica="bot-a")
    metrics.answered(202)
    text = metrics.render()[0].decode()
    samples = [line for line in text.splitlines() if line and not line.startswith("#")]
    assert samples and all('replica="bot-a"' in line for line in samples)
    assert 'theloop_events_accepted_total{replica="bot-a"} 1.0' in samples
