"""One bot, two the-loop instances: each signs its own events, owns its own work items,
and hears its own replies — never another instance's.

Two loopback control planes (``tests.fakes.loop_api``) stand for instances A and B; the
bot is assembled as the plugin assembles it, from a settings file with ``instances:``
read through :mod:`looproom.configured`, on the plain path (no Slack).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from looproom import configured
from looproom.assembly import Activation
from looproom.decide import kinds
from looproom.durable.queue import DurableQueue
from looproom.inbound import webhook as ingress
from looproom.inbound.signing import sign
from looproom.instances.fleet import Fleet
from looproom.relay import relay
from looproom.relay.decision import Decision
from looproom.relay.sinks import LedgerSink, Sinks
from looproom.settings import Environment, Settings
from tests.fakes.loop_api import FakeLoop

SECRET_A, SECRET_B, SECRET_B_OLD = "a" * 40, "b" * 40, "o" * 40
ITEM_A = "github:acme/api#7"  # A's by its configured repositories
ITEM_B = "github:beta/web#3"  # B's once B sends an event about it (learned)
SETTINGS = """
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: %s
    workItems: {repos: ["acme/*"], learn: false}
  team-b:
    keyId: b-2026
    secret: [{env: TEAM_B_SECRET}, {env: TEAM_B_SECRET_OLD}]
    api: %s
    token: {env: TEAM_B_TOKEN}
"""


@pytest.fixture
def loops() -> Iterator[tuple[FakeLoop, FakeLoop]]:
    with FakeLoop({ITEM_A: False}) as a, FakeLoop({ITEM_B: False}) as b:
        yield a, b  # type: ignore[misc]


def environment(tmp_path: Path, a: FakeLoop, b: FakeLoop) -> Environment:
    path = tmp_path / "theloop.yaml"
    path.write_text(SETTINGS % (a.url, b.url), encoding="utf-8")
    env = {
        "THELOOP_CONFIG": str(path),
        "THELOOP_DATA_DIR": str(tmp_path / "data"),
        "TEAM_A_SECRET": SECRET_A,
        "TEAM_B_SECRET": SECRET_B,
        "TEAM_B_SECRET_OLD": SECRET_B_OLD,
        "TEAM_B_TOKEN": "token-of-b",
    }
    return configured.read(env)[0]


@dataclass
class Bot:
    room: Activation
    sent: list[tuple[str, str]] = field(default_factory=list)

    def post(self, event: dict[str, Any], secret: str, key_id: str = "") -> ingress.Answer:
        body = json.dumps(event).encode()
        stamp = int(time.time())
        headers = {
            "X-TheLoop-Timestamp": str(stamp),
            "X-TheLoop-Signature": sign(secret, stamp, body),
        }
        if key_id:
            headers["X-TheLoop-Key-Id"] = key_id
        return self.room.routes.receive(ingress.Request("POST", headers, body, len(body)))


@pytest.fixture
def make_bot(tmp_path: Path, loops: tuple[FakeLoop, FakeLoop]) -> Iterator[Callable[..., Bot]]:
    built: list[Activation] = []

    def make(store: dict[str, Any] | None = None, env: Environment | None = None) -> Bot:
        sent: list[tuple[str, str]] = []
        room = Activation(
            env or environment(tmp_path, *loops),
            Settings(),
            store=store if store is not None else {},
            data_dir=tmp_path / f"data-{len(built)}",
            slack=None,
            say=lambda to, text: sent.append((to, text)),
            admins=("@admin",),
            bot_member=lambda: "@theloop",
        )
        built.append(room)
        return Bot(room, sent)

    yield make
    for room in built:
        room.stop()


def ask(n: int, work_item: str) -> dict[str, Any]:
    return {"id": f"ask-{n}", "eventType": "session.awaiting_input", "workItem": work_item}


def _record(the_relay: relay.Relay, decision: Decision) -> bool:
    """Record ``decision`` with its target, as the desk does."""
    made = kinds.stamped(decision)
    return the_relay.record(made, kinds.target(made, the_relay.sinks.available({})))


def answer(work_item: str, words: str = "Option 1") -> Decision:
    return Decision(
        kind=kinds.ANSWER,
        work_item=work_item,
        member="U0ALICE01",
        origin=f"C1:{time.time_ns()}",
        at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        channel="C1",
        ts="201.0",
        thread="300.0",
        words=words,
    )


def test_events_signed_by_each_instance_are_accepted(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    assert bot.post(ask(1, ITEM_A), SECRET_A, "team-a").status == 202
    assert bot.post(ask(2, ITEM_B), SECRET_B, "b-2026").status == 202
    # Without a key id, the secret that verifies names the instance.
    assert bot.post(ask(3, ITEM_A), SECRET_A).status == 202
    assert bot.post(ask(4, ITEM_B), SECRET_B).status == 202
    assert bot.room.inbox.depth() == 4


def test_the_old_secret_still_verifies_while_a_rotation_is_under_way(
    make_bot: Callable[..., Bot],
) -> None:
    bot = make_bot()
    assert bot.post(ask(1, ITEM_B), SECRET_B_OLD, "b-2026").status == 202
    assert bot.post(ask(2, ITEM_B), SECRET_B, "b-2026").status == 202


def test_a_key_id_is_verified_with_that_instances_secrets_only(
    make_bot: Callable[..., Bot],
) -> None:
    bot = make_bot()
    refused = bot.post(ask(1, ITEM_A), SECRET_B, "team-a")
    assert (refused.status, refused.body["error"]) == (401, "bad signature")
    unknown = bot.post(ask(2, ITEM_A), SECRET_A, "team-c")
    assert (unknown.status, unknown.body["error"]) == (401, "unknown X-TheLoop-Key-Id")
    assert bot.post(ask(3, ITEM_A), "z" * 40).status == 401
    assert bot.room.inbox.depth() == 0


def test_bs_secret_is_refused_for_a_work_item_of_a(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    refused = bot.post(ask(1, ITEM_A), SECRET_B, "b-2026")
    assert refused.status == 403
    assert refused.body["error"] == f"work item {ITEM_A} belongs to instance team-a"
    assert bot.room.inbox.depth() == 0  # refused before it was stored: never posted
    assert 'theloop_events_refused_total{reason="not_owner"} 1.0' in (
        bot.room.routes.metrics_text()[0].decode()
    )


def test_a_work_item_learned_by_b_is_refused_to_a_and_a_does_not_learn(
    make_bot: Callable[..., Bot],
) -> None:
    bot = make_bot()
    assert bot.post(ask(1, ITEM_B), SECRET_B).status == 202  # B learns it
    taken = bot.post(ask(2, ITEM_B), SECRET_A)
    assert (taken.status, taken.body["error"]) == (
        403,
        f"work item {ITEM_B} belongs to instance team-b",
    )
    nobody = bot.post(ask(3, "github:gamma/x#1"), SECRET_A)
    assert nobody.status == 403 and "it does not learn" in nobody.body["error"]


def test_a_learned_claim_outlives_a_restart(make_bot: Callable[..., Bot]) -> None:
    store: dict[str, Any] = {}
    first = make_bot(store)
    assert first.post(ask(1, ITEM_B), SECRET_B).status == 202
    first.room.stop()
    again = make_bot(store)
    assert again.room.fleet is not None
    owner = again.room.fleet.owners.owner(ITEM_B)
    assert owner is not None and owner.name == "team-b"


def test_a_reply_for_a_work_item_of_b_reaches_bs_control_plane_only(
    make_bot: Callable[..., Bot], loops: tuple[FakeLoop, FakeLoop]
) -> None:
    a, b = loops
    bot = make_bot()
    assert bot.post(ask(1, ITEM_B), SECRET_B).status == 202
    the_relay = bot.room.decisions.relay
    assert _record(the_relay, answer(ITEM_B))
    assert the_relay.step()
    assert [reply["ref"] for reply in b.replies] == [ITEM_B]
    assert b.requests[-1].headers["Authorization"] == "Bearer token-of-b"
    assert a.requests == []


def test_a_reply_for_a_work_item_nobody_owns_waits_and_goes_nowhere(
    make_bot: Callable[..., Bot], loops: tuple[FakeLoop, FakeLoop]
) -> None:
    bot = make_bot()
    the_relay = bot.room.decisions.relay
    assert _record(the_relay, answer("github:gamma/x#1")) and the_relay.step()
    (item,) = the_relay.queue.list()
    assert item.state == "pending" and "no the-loop instance owns" in item.last_error
    assert loops[0].requests == [] and loops[1].requests == []


@dataclass
class Clock:
    now: float = field(default_factory=time.time)

    def __call__(self) -> float:
        return self.now


def test_the_look_up_of_a_reply_that_may_have_landed_asks_b(
    tmp_path: Path, loops: tuple[FakeLoop, FakeLoop]
) -> None:
    a, b = loops
    b.fail("/sessions/reply", kind="land_then_drop")  # typed in, then the answer lost
    env = environment(tmp_path, a, b)
    fleet = Fleet(env.instances, {}, DurableQueue(tmp_path / "inbox.sqlite3", "inbox"))
    assert fleet.owners.claim(env.instances[1], ITEM_B) == env.instances[1]
    clock = Clock()
    b.clock = clock
    queue = DurableQueue(tmp_path / "relay.sqlite3", relay.RELAY, clock=clock)
    sinks = Sinks(ledger=LedgerSink(tmp_path / "ledger.jsonl"), loop=fleet.control_plane(None))
    the_relay = relay.Relay(queue, sinks, _Quiet(), clock=clock)
    assert _record(the_relay, answer(ITEM_B))
    for _ in range(10):
        while the_relay.step():
            pass
        due = queue.next_due()
        if due is None:
            break
        clock.now = max(clock.now, due) + 0.001
    assert len(b.replies) == 1  # found in B's event log: not typed in twice
    looked = [q for q in b.requests if q.method == "GET"]
    assert [(q.query["type"], q.query["workItem"]) for q in looked] == [
        ("session.reply_sent", ITEM_B)
    ]
    assert a.requests == [] and queue.depth() == 0


class _Quiet:
    def react(self, channel: str, ts: str, name: str) -> None: ...
    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...
    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None: ...


def test_status_and_metrics_name_each_instance(
    make_bot: Callable[..., Bot], loops: tuple[FakeLoop, FakeLoop]
) -> None:
    bot = make_bot()
    assert bot.post(ask(1, ITEM_B), SECRET_B).status == 202
    loops[0].stop()  # A's control plane is gone
    status = bot.room.admin.status(time.time())
    line_a = next(line for line in status.splitlines() if line.startswith("instance team-a:"))
    line_b = next(line for line in status.splitlines() if line.startswith("instance team-b:"))
    assert "UNREACHABLE" in line_a and "last event none yet" in line_a
    assert "reachable" in line_b and "queue 1 to post, 0 to relay" in line_b
    assert "1 learned" in line_b and "two secrets (rotating)" in line_b
    metrics = bot.room.routes.metrics_text()[0].decode()
    assert 'theloop_instance_reachable{instance="team-a"} 0.0' in metrics
    assert 'theloop_instance_reachable{instance="team-b"} 1.0' in metrics
    assert 'theloop_instance_queue_depth{instance="team-b",queue="inbox"} 1.0' in metrics
    assert 'theloop_instance_last_event_timestamp_seconds{instance="team-b"}' in metrics
    assert "token-of-b" not in status and SECRET_B not in status


def test_the_single_secret_form_ignores_a_key_id(make_bot: Callable[..., Bot]) -> None:
    single = Environment.from_env({"THELOOP_WEBHOOK_SECRET": SECRET_A})
    bot = make_bot(env=single)
    assert bot.room.fleet is None
    assert bot.post(ask(1, ITEM_B), SECRET_A, "team-b").status == 202
    assert bot.post(ask(2, ITEM_B), SECRET_B).status == 401


def test_words_to_a_standing_session_go_to_the_instance_that_opened_its_thread(
    make_bot: Callable[..., Bot], loops: tuple[FakeLoop, FakeLoop]
) -> None:
    a, b = loops
    b.standing = {"triage": True}
    bot = make_bot()
    started = {"id": "up-1", "eventType": "standing.started", "workItem": "standing:triage"}
    assert bot.post(started, SECRET_B, "b-2026").status == 202
    words = replace(answer("standing:triage", "look at the flaky queue"), kind=kinds.REPLY)
    the_relay = bot.room.decisions.relay
    assert _record(the_relay, words) and the_relay.step()
    assert b.said == [
        {"name": "triage", "text": "look at the flaky queue", "actor": "slack:U0ALICE01"}
    ]
    assert a.requests == []


def test_the_last_event_is_the_instances_not_this_processs(
    make_bot: Callable[..., Bot], loops: tuple[FakeLoop, FakeLoop]
) -> None:
    """A replica beside the one that took the event in, or the bot after a restart, says
    when the instance last spoke — not "none yet"."""
    shared: dict[str, Any] = {}
    first = make_bot(store=shared)
    assert first.post(ask(1, ITEM_B), SECRET_B).status == 202
    other = make_bot(store=shared)
    line_b = next(
        line
        for line in other.room.admin.status(time.time()).splitlines()
        if line.startswith("instance team-b:")
    )
    assert "last event none yet" not in line_b and "s ago" in line_b
    metrics = other.room.routes.metrics_text()[0].decode()
    assert 'theloop_instance_last_event_timestamp_seconds{instance="team-b"}' in metrics
    assert 'theloop_instance_last_event_timestamp_seconds{instance="team-a"}' not in metrics


def test_the_doctor_says_of_each_instance_whether_it_signs_right(
    make_bot: Callable[..., Bot], loops: tuple[FakeLoop, FakeLoop]
) -> None:
    bot = make_bot()
    assert bot.post(ask(1, ITEM_B), SECRET_B, "b-2026").status == 202
    assert bot.post(ask(2, ITEM_B), SECRET_B, "b-2026").status == 202
    found = bot.room.admin.doctor(None)
    assert "instance team-b's deliveries: 2 of its last 2 accepted, signed right" in found
    assert "instance team-a's deliveries: no event of it has reached the webhook" in found
    assert "instance team-b's events: last event 0 s ago; queue 2 to post, 0 to relay" in found
    # A sender with the wrong secret under B's key id, and one with no instance's secret.
    assert bot.post(ask(3, ITEM_B), "w" * 40, "b-2026").status == 401
    assert bot.post(ask(4, ITEM_B), "w" * 40).status == 401
    found = bot.room.admin.doctor(None)
    assert "2 accepted, 1 badly signed (401), 0 about another instance's work item" in found
    assert "requests signed by no instance" in found
    assert bot.post(ask(5, ITEM_A), SECRET_B, "b-2026").status == 403
    assert "1 about another instance's work item (403)" in bot.room.admin.doctor(None)
    assert SECRET_B not in found and "token-of-b" not in found
