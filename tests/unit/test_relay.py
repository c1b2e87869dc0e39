"""The relay (DESIGN §3.3): stored before acknowledged, relayed exactly once through sinks
that are not idempotent themselves, retried with backoff, parked with ⚠️ when refused —
against loopback fakes of GitHub and the-loop's control plane."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from looproom import compose, relay
from looproom.compose import Decision
from looproom.queue import DurableQueue
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop

ITEM = "github:acme/api#7"
REPOS = {"acme/api": "/srv/checkouts/api"}


@dataclass
class Clock:
    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Room:
    """Records what the relay says in the room."""

    said: list[tuple[str, ...]] = field(default_factory=list)
    broken: bool = False

    def react(self, channel: str, ts: str, name: str) -> None:
        self._say("react", channel, ts, name)

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._say("reply", channel, thread_ts, text)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._say("tell", channel, member, text)

    def _say(self, *what: str) -> None:
        if self.broken:
            raise ConnectionError("slack is down")
        self.said.append(what)

    def reactions(self) -> list[str]:
        return [s[3] for s in self.said if s[0] == "react"]

    def replies(self) -> list[str]:
        return [s[3] for s in self.said if s[0] == "reply"]


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def loop() -> Iterator[FakeLoop]:
    with FakeLoop() as fake:
        yield fake  # type: ignore[misc]


@dataclass
class Rig:
    relay: relay.Relay
    queue: DurableQueue
    room: Room
    clock: Clock
    ledger: relay.LedgerSink
    given_up: list[Decision]

    def drain(self, rounds: int = 20) -> None:
        """Relay everything due, advancing the clock past each backoff."""
        for _ in range(rounds):
            while self.relay.step():
                pass
            due = self.queue.next_due()
            if due is None:
                return
            self.clock.now = max(self.clock.now, due) + 0.001


def rig(tmp_path: Path, github: FakeGitHub | None = None, loop: FakeLoop | None = None) -> Rig:
    clock, room, given_up = Clock(), Room(), []
    queue = DurableQueue(tmp_path / "queues.sqlite3", relay.RELAY, clock=clock)
    ledger = relay.LedgerSink(tmp_path / "ledger.jsonl")
    sinks = relay.Sinks(
        ledger=ledger,
        github=relay.GitHubSink(github.url, TOKEN, timeout=5) if github else None,
        loop=relay.LoopSink(loop.url, timeout=5) if loop else None,
    )
    the_relay = relay.Relay(queue, sinks, room, on_given_up=given_up.append, clock=clock)
    return Rig(the_relay, queue, room, clock, ledger, given_up)


def decision(kind: str = compose.APPROVE, **fields: Any) -> Decision:
    base = {
        "work_item": ITEM,
        "member": "U0ALICE01",
        "origin": "C1:201.0",
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "channel": "C1",
        "ts": "201.0",
        "thread": "200.0",
        "gate": "requirements-approval",
    }
    return Decision(kind=kind, **{**base, **fields})


def test_a_decision_is_stored_before_the_eyes_and_only_once(tmp_path: Path) -> None:
    r = rig(tmp_path)
    assert r.relay.record(decision(), REPOS)
    assert r.queue.depth() == 1 and r.room.reactions() == ["eyes"]
    assert not r.relay.record(decision(), REPOS)  # a redelivery: same key
    assert r.queue.depth() == 1 and r.room.reactions() == ["eyes"]


def test_an_approval_lands_once_on_github_and_the_room_is_told(
    tmp_path: Path, github: FakeGitHub
) -> None:
    r = rig(tmp_path, github=github)
    r.relay.record(decision(words="ship it"), REPOS)
    r.drain()
    assert github.posted() == [compose.relay_body(decision(words="ship it"))]
    assert r.room.reactions() == ["eyes", "white_check_mark"]
    ((_, channel, thread, text),) = [s for s in r.room.said if s[0] == "reply"]
    assert (channel, thread) == ("C1", "200.0") and text.startswith("✅ recorded — moving on")
    assert r.queue.depth() == 0


def test_a_sink_that_fails_twice_gets_the_decision_exactly_once(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", 502, times=2)
    r = rig(tmp_path, github=github)
    r.relay.record(decision(), REPOS)
    r.drain()
    assert len(github.posted()) == 1 and r.queue.depth() == 0


def test_a_comment_that_landed_but_was_not_answered_is_not_posted_again(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", kind="land_then_drop")
    r = rig(tmp_path, github=github)
    r.relay.record(decision(), REPOS)
    r.drain()
    assert len(github.posted()) == 1
    assert [q.method for q in github.requests] == ["POST", "GET"]  # looked, found it


def test_a_rate_limit_waits_as_long_as_github_says(tmp_path: Path, github: FakeGitHub) -> None:
    github.fail("/comments", 429, headers={"Retry-After": "42"})
    r = rig(tmp_path, github=github)
    r.relay.record(decision(), REPOS)
    assert r.relay.step()
    (item,) = r.queue.list()
    assert item.due == pytest.approx(r.clock.now + 42) and "rate limit" in item.last_error
    # GitHub's own form: 403, nothing remaining, and the (wall-clock) reset time.
    reset = int(time.time()) + 60
    github.fail(
        "/comments", 403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)}
    )
    r.clock.now = item.due
    assert r.relay.step()
    assert r.queue.list()[0].due == pytest.approx(r.clock.now + 60, abs=2)


def test_a_refusal_is_parked_with_the_reason_and_the_question_reopened(
    tmp_path: Path, github: FakeGitHub, caplog: pytest.LogCaptureFixture
) -> None:
    r = rig(tmp_path)
    r.relay.sinks.github = relay.GitHubSink(github.url, "ghp_wrong_token_value", timeout=5)
    caplog.set_level(logging.DEBUG)
    r.relay.record(decision(), REPOS)
    r.drain()
    (item,) = r.queue.list()
    assert (
        item.state == "parked" and "401" in item.last_error and "Bad credentials" in item.last_error
    )
    assert r.room.reactions() == ["eyes", "warning"]
    assert "could not be relayed" in r.room.replies()[0] and item.key in r.room.replies()[0]
    assert [d.key for d in r.given_up] == [decision().key]
    assert "ghp_wrong_token_value" not in caplog.text + item.last_error + "".join(r.room.replies())
    assert github.posted() == []


def test_the_room_hears_once_when_the_relay_is_still_trying(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", 503, times=5)
    r = rig(tmp_path, github=github)
    r.relay.record(decision(), REPOS)
    r.drain()
    still = [t for t in r.room.replies() if "has not reached the-loop yet" in t]
    assert len(still) == 1 and len(github.posted()) == 1


def test_an_answer_reaches_the_waiting_session(tmp_path: Path, loop: FakeLoop) -> None:
    r = rig(tmp_path, loop=loop)
    r.relay.record(decision(compose.ANSWER, words="Option 1", thread="300.0"), REPOS)
    r.drain()
    assert loop.replies == [
        {"ref": ITEM, "text": "Option 1", "actor": "slack:U0ALICE01", "comment": True}
    ]
    assert loop.requests[0].headers["Idempotency-Key"] == decision(compose.ANSWER).key


def test_an_answer_with_no_session_is_parked_with_the_loops_reason(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.sessions.clear()
    r = rig(tmp_path, loop=loop)
    r.relay.record(decision(compose.ANSWER, words="1"), REPOS)
    r.drain()
    (item,) = r.queue.list()
    assert item.state == "parked" and "no session registered" in item.last_error


def test_a_skip_reports_what_the_loop_rejected(tmp_path: Path, loop: FakeLoop) -> None:
    r = rig(tmp_path, loop=loop)
    r.relay.record(decision(compose.SKIP, nodes=("evidence", "human-approval"), origin="a"), REPOS)
    r.relay.record(decision(compose.SKIP, nodes=("human-approval",), origin="b"), REPOS)
    r.drain()
    assert [s["nodes"] for s in loop.skips] == [["evidence", "human-approval"], ["human-approval"]]
    assert loop.skips[0]["repo"] == "/srv/checkouts/api"
    assert "rejected: human-approval" in r.room.replies()[0]
    (parked,) = r.queue.list()
    assert "rejected the skip of human-approval" in parked.last_error


def test_without_sinks_the_ledger_records_each_decision_once(tmp_path: Path) -> None:
    r = rig(tmp_path)
    r.relay.record(decision(), REPOS)
    r.relay.record(decision(compose.ANSWER, words="Option 1", origin="C1:301.0"), REPOS)
    r.drain()
    lines = r.ledger.lines()
    assert [line["kind"] for line in lines] == ["approve", "answer"]
    assert lines[0]["body"] == compose.relay_body(decision())
    assert lines[1]["json"]["text"] == "Option 1"
    # A retry of a line already written (a crash before `done`) writes nothing new.
    item = json.loads(compose.payload(decision(), compose.Sinks()))
    assert r.ledger.send(item).detail == "already in the ledger"
    assert len(r.ledger.lines()) == 2


def test_a_broken_room_never_loses_a_decision(tmp_path: Path, github: FakeGitHub) -> None:
    r = rig(tmp_path, github=github)
    r.room.broken = True
    assert r.relay.record(decision(), REPOS)
    r.drain()
    assert len(github.posted()) == 1 and r.queue.depth() == 0


def test_a_decision_stored_for_a_sink_that_went_away_is_kept(tmp_path: Path) -> None:
    r = rig(tmp_path)
    r.queue.put(
        "k",
        json.dumps(
            {
                "key": "k",
                "decision": decision().to_dict(),
                "target": {"sink": "github", "repo": "acme/api", "number": 7, "body": "x"},
            }
        ),
    )
    assert r.relay.step()
    (item,) = r.queue.list()
    assert item.state == "pending" and "not configured" in item.last_error


def test_the_queue_lists_what_has_not_landed(tmp_path: Path) -> None:
    r = rig(tmp_path)
    r.relay.record(decision(), REPOS)
    (line,) = relay.queue_lines(r.queue.list(), r.clock.now)
    assert "approve · github:acme/api#7 by U0ALICE01" in line and decision().key in line
