"""The relay: stored before acknowledged, relayed exactly once through sinks
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

from looproom.decide import kinds
from looproom.durable.queue import DurableQueue
from looproom.http.client import HttpResult
from looproom.loop_log.book import sqlite_records
from looproom.relay import forms, relay, texts
from looproom.relay.decision import Decision
from looproom.relay.sinks import GitHubSink, LedgerSink, LoopSink, Sinks
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop

ITEM = "github:acme/api#7"
REPOS = {"acme/api": "/srv/checkouts/api"}


def relay_body(decision: Decision) -> str:
    """The issue comment ``decision`` is relayed as (the ledger keeps the same body)."""
    return str(kinds.target(decision, forms.Destinations())["body"])


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


class Parked(list[Decision]):
    """What the relay gave up on for good, in order (the desk's side reopens them)."""

    def given_up(self, decision: Decision) -> None:
        self.append(decision)


@dataclass
class Rig:
    relay: relay.Relay
    queue: DurableQueue
    room: Room
    clock: Clock
    ledger: LedgerSink
    given_up: Parked

    def record(self, decision: Decision, repos: dict[str, str] = REPOS) -> bool:
        """Record ``decision`` with its target, as the desk does."""
        return self.relay.record(
            decision, kinds.target(decision, self.relay.sinks.available(repos))
        )

    def drain(self, rounds: int = 20) -> None:
        """Relay everything due, advancing the clock past each backoff."""
        for _ in range(rounds):
            while self.relay.step():
                pass
            due = self.queue.next_due()
            if due is None:
                return
            self.clock.now = max(self.clock.now, due) + 0.001


def rig(
    tmp_path: Path,
    github: FakeGitHub | None = None,
    loop: FakeLoop | None = None,
    **horizons: float,
) -> Rig:
    """``horizons``: the relay's ``notice_after`` and ``give_up_after``, when not its own."""
    clock, room, given_up = Clock(), Room(), Parked()
    queue = DurableQueue(tmp_path / "queues.sqlite3", relay.RELAY, clock=clock)
    ledger = LedgerSink(tmp_path / "ledger.jsonl")
    sinks = Sinks(
        ledger=ledger,
        github=GitHubSink(github.url, TOKEN, timeout=5) if github else None,
        loop=LoopSink(loop.url, timeout=5, clock=clock) if loop else None,
    )
    the_relay = relay.Relay(queue, sinks, room, parked=given_up, clock=clock, **horizons)
    return Rig(the_relay, queue, room, clock, ledger, given_up)


#: When the decisions here were made: recent, as a live one is, and one instant for all, so a
#: body built again in a test is the body the relay sent even when the clock ticks between.
AT = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def decision(kind: str = kinds.APPROVE, **fields: Any) -> Decision:
    base = {
        "work_item": ITEM,
        "member": "U0ALICE01",
        "origin": "C1:201.0",
        "at": AT,
        "channel": "C1",
        "ts": "201.0",
        "thread": "200.0",
        "gate": "requirements-approval",
    }
    return kinds.stamped(Decision(kind=kind, **{**base, **fields}))


def test_a_decision_is_stored_before_the_eyes_and_only_once(tmp_path: Path) -> None:
    r = rig(tmp_path)
    assert r.record(decision())
    assert r.queue.depth() == 1 and r.room.reactions() == ["eyes"]
    assert not r.record(decision())  # a redelivery: same key
    assert r.queue.depth() == 1 and r.room.reactions() == ["eyes"]


def test_an_approval_lands_once_on_github_and_the_room_is_told(
    tmp_path: Path, github: FakeGitHub
) -> None:
    r = rig(tmp_path, github=github)
    r.record(decision(words="ship it"))
    r.drain()
    assert github.posted() == [relay_body(decision(words="ship it"))]
    assert r.room.reactions() == ["eyes", "white_check_mark"]
    ((_, channel, thread, text),) = [s for s in r.room.said if s[0] == "reply"]
    assert (channel, thread) == ("C1", "200.0") and text.startswith("✅ recorded — moving on")
    assert r.queue.depth() == 0


def test_a_sink_that_fails_twice_gets_the_decision_exactly_once(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", 502, times=2)
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    assert len(github.posted()) == 1 and r.queue.depth() == 0


def test_a_comment_that_landed_but_was_not_answered_is_not_posted_again(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", kind="land_then_drop")
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    assert len(github.posted()) == 1
    assert [q.method for q in github.requests] == ["POST", "GET"]  # looked, found it


def test_a_rate_limit_waits_as_long_as_github_says(tmp_path: Path, github: FakeGitHub) -> None:
    github.fail("/comments", 429, headers={"Retry-After": "42"})
    r = rig(tmp_path, github=github)
    r.record(decision())
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
    r.relay.sinks.github = GitHubSink(github.url, "ghp_wrong_token_value", timeout=5)
    caplog.set_level(logging.DEBUG)
    r.record(decision())
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


def test_a_comment_answered_with_a_redirect_is_parked_with_where_it_pointed_never_a_check(
    tmp_path: Path, github: FakeGitHub
) -> None:
    moved = f"{github.url}/repositories/42/issues/7/comments"
    github.fail("/comments", 301, headers={"Location": moved})
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    (item,) = r.queue.list()
    assert item.state == "parked" and "301" in item.last_error and moved in item.last_error
    assert r.room.reactions() == ["eyes", "warning"]
    told = r.room.replies()[0]
    assert "could not be relayed: not delivered: GitHub answered 301" in told and moved in told
    assert github.posted() == [] and [q.method for q in github.requests] == ["POST"]


def test_the_room_hears_once_when_the_relay_is_still_trying(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", 503, times=5)
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    still = [t for t in r.room.replies() if "has not reached the-loop yet" in t]
    assert len(still) == 1 and len(github.posted()) == 1


def test_an_answer_reaches_the_waiting_session(tmp_path: Path, loop: FakeLoop) -> None:
    r = rig(tmp_path, loop=loop)
    r.record(decision(kinds.ANSWER, words="Option 1", thread="300.0"))
    r.drain()
    assert loop.replies == [
        {"ref": ITEM, "text": "Option 1", "actor": "slack:U0ALICE01", "comment": True}
    ]
    assert loop.requests[0].headers["Idempotency-Key"] == decision(kinds.ANSWER).key


def test_an_answer_the_loop_was_too_busy_to_type_is_retried_not_lost(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.busy = 2  # the-loop answers 200 "delivered": false twice ("the caller may retry")
    r = rig(tmp_path, loop=loop)
    r.record(decision(kinds.ANSWER, words="Option 1", thread="300.0"))
    r.drain()
    assert [reply["text"] for reply in loop.replies] == ["Option 1"]
    assert r.queue.depth() == 0


def test_an_answer_with_no_session_is_parked_with_the_loops_reason(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.sessions.clear()
    r = rig(tmp_path, loop=loop)
    r.record(decision(kinds.ANSWER, words="1"))
    r.drain()
    (item,) = r.queue.list()
    assert item.state == "parked" and "no session registered" in item.last_error


def test_a_skip_reports_what_the_loop_rejected(tmp_path: Path, loop: FakeLoop) -> None:
    r = rig(tmp_path, loop=loop)
    r.record(decision(kinds.SKIP, nodes=("evidence", "human-approval"), origin="a"))
    r.record(decision(kinds.SKIP, nodes=("human-approval",), origin="b"))
    r.drain()
    assert [s["nodes"] for s in loop.skips] == [["evidence", "human-approval"], ["human-approval"]]
    assert loop.skips[0]["repo"] == "/srv/checkouts/api"
    assert "rejected: human-approval (not a selectable node of this loop)" in r.room.replies()[0]
    (parked,) = r.queue.list()
    assert "rejected the skip of human-approval (not a selectable" in parked.last_error


def test_without_sinks_the_ledger_records_each_decision_once(tmp_path: Path) -> None:
    r = rig(tmp_path)
    approval = decision()  # one decision: its body carries the second it was made
    r.record(approval)
    r.record(decision(kinds.ANSWER, words="Option 1", origin="C1:301.0"))
    r.drain()
    lines = r.ledger.lines()
    assert [line["kind"] for line in lines] == ["approve", "answer"]
    assert lines[0]["body"] == relay_body(approval)
    assert lines[1]["json"]["text"] == "Option 1"
    # A retry of a line already written (a crash before `done`) writes nothing new.
    item = json.loads(forms.payload(approval, kinds.target(approval, forms.Destinations())))
    assert r.ledger.send(item).detail == "already in the ledger"
    assert len(r.ledger.lines()) == 2


def test_a_broken_room_never_loses_a_decision(tmp_path: Path, github: FakeGitHub) -> None:
    r = rig(tmp_path, github=github)
    r.room.broken = True
    assert r.record(decision())
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
    r.record(decision())
    (line,) = texts.queue_lines(r.queue.list(), r.clock.now)
    assert "approve · github:acme/api#7 by U0ALICE01" in line and decision().key in line


def test_the_peers_error_text_reaches_the_room_inert(tmp_path: Path, loop: FakeLoop) -> None:
    # the-loop's 404 detail echoes the ref it was given; a ref is producer-controlled.
    ref = "github:acme/api#7 <!channel> <https://evil.example|click>"
    r = rig(tmp_path, loop=loop)
    r.record(decision(kinds.ANSWER, words="1", work_item=ref))
    r.drain()
    (text,) = r.room.replies()
    assert "no session registered" in text
    assert "<!channel>" not in text and "<https://evil" not in text
    assert "&lt;https://evil.example|click&gt;" in text


def test_a_still_trying_reply_carries_the_peers_words_inert(
    tmp_path: Path, github: FakeGitHub
) -> None:
    github.fail("/comments", 503, times=3, body={"message": "down <!here> @everyone"})
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    (still,) = [t for t in r.room.replies() if "has not reached the-loop yet" in t]
    assert "<!here>" not in still and "@everyone" not in still and "here" in still


def _answer_rig(tmp_path: Path, loop: FakeLoop) -> tuple[Rig, str]:
    r = rig(tmp_path, loop=loop)
    answer = decision(kinds.ANSWER, words="Option 1", thread="300.0")
    r.record(answer)
    return r, answer.key


def test_an_answer_whose_answer_was_lost_is_found_in_the_event_log_not_sent_twice(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.fail("/sessions/reply", kind="land_then_drop")  # delivered, then the line dropped
    r, _ = _answer_rig(tmp_path, loop)
    loop.clock = r.clock  # the-loop's clock agrees with ours
    r.drain()
    assert len(loop.replies) == 1  # the-loop does not deduplicate: no second POST
    lookup = [q for q in loop.requests if q.method == "GET"]
    assert [q.query["type"] for q in lookup] == ["session.reply_sent"]
    assert lookup[0].query["workItem"] == ITEM
    assert r.queue.depth() == 0 and r.room.reactions() == ["eyes", "white_check_mark"]


def test_an_answer_that_failed_with_a_5xx_and_never_reached_the_session_is_sent_again(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.fail("/sessions/reply", 500)  # the handler failed before typing anything
    r, _ = _answer_rig(tmp_path, loop)
    loop.clock = r.clock
    r.drain()
    assert len(loop.replies) == 1 and r.queue.depth() == 0
    methods = [(q.method, q.path) for q in loop.requests]
    assert methods == [
        ("POST", forms.REPLY_PATH),
        ("GET", "/api/v1/events"),
        ("POST", forms.REPLY_PATH),
    ]


def test_a_reply_by_someone_else_in_the_log_is_not_taken_for_this_one(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.fail("/sessions/reply", 502)
    r, _ = _answer_rig(tmp_path, loop)
    loop.clock = r.clock
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.999Z", time.gmtime(r.clock.now + 1))
    other = {"event": "session.reply_sent", "work_item": ITEM, "actor": "slack:U0BOB0001"}
    loop.events.append({**other, "ts": stamp})
    r.drain()
    assert [reply["actor"] for reply in loop.replies] == ["slack:U0ALICE01"]


def test_an_answer_that_may_have_landed_is_parked_only_when_the_loop_has_no_such_log(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.fail("/sessions/reply", kind="land_then_drop")
    loop.fail("/api/v1/events", 404, times=1, body={"detail": "Not Found"})  # an older the-loop
    r, key = _answer_rig(tmp_path, loop)
    r.drain()
    assert len(loop.replies) == 1
    (item,) = r.queue.list()
    assert item.state == "parked" and f"!theloop queue retry {key}" in item.last_error
    assert f"!theloop queue drop {key}" in item.last_error and "answered 404" in item.last_error
    assert "may have reached the-loop" in r.room.replies()[0] and key in r.room.replies()[0]
    assert r.room.reactions() == ["eyes", "warning"] and r.given_up == []  # not reopened


def test_an_answer_that_never_left_is_retried_until_it_lands(tmp_path: Path) -> None:
    with FakeLoop() as gone:
        url = gone.url
    r = rig(tmp_path)
    r.relay.sinks.loop = LoopSink(url, timeout=5)  # connection refused
    r.record(decision(kinds.ANSWER, words="1"))
    r.relay.step()
    (item,) = r.queue.list()
    assert item.state == "pending" and "unreachable" in item.last_error
    with FakeLoop() as loop:
        r.relay.sinks.loop = LoopSink(loop.url, timeout=5)
        r.drain()
        assert len(loop.replies) == 1 and r.queue.depth() == 0


def test_a_skip_whose_answer_was_lost_is_retried_as_the_loop_keeps_the_first(
    tmp_path: Path, loop: FakeLoop
) -> None:
    loop.fail("/graph/skip", kind="land_then_drop")
    r = rig(tmp_path, loop=loop)
    r.record(decision(kinds.SKIP, nodes=("evidence",)))
    r.drain()
    assert r.queue.depth() == 0 and r.room.reactions() == ["eyes", "white_check_mark"]


def test_the_duplicate_check_reads_every_page_of_a_busy_issue(
    tmp_path: Path, github: FakeGitHub
) -> None:
    for n in range(150):  # others' comments since the decision, ahead of ours
        github._create(("acme/api", 7), f"comment {n}")
    github.fail("/comments", kind="land_then_drop")
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    assert github.posted().count(relay_body(decision())) == 1
    gets = [q for q in github.requests if q.method == "GET"]
    assert [q.query.get("page", "1") for q in gets] == ["1", "2"]
    assert r.queue.depth() == 0


def test_the_duplicate_check_sends_the_token_only_to_its_own_api() -> None:
    api = "https://api.github.com"
    foreign = HttpResult(200, {"Link": '<https://evil.example/r?page=2>; rel="next"'})
    own = HttpResult(200, {"link": '<https://api.github.com/r?page=2>; rel="next"'})
    assert foreign.next_page(api) is None
    assert own.next_page(api) == "https://api.github.com/r?page=2"


def test_a_secondary_rate_limit_waits_instead_of_parking(
    tmp_path: Path, github: FakeGitHub
) -> None:
    secondary = {"message": "You have exceeded a secondary rate limit. Please wait."}
    github.fail("/comments", 403, headers={"Retry-After": "90"}, body=secondary)
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.relay.step()
    (item,) = r.queue.list()
    assert item.state == "pending" and item.due == pytest.approx(r.clock.now + 90)
    github.fail("/comments", 403, body=secondary)  # no header: GitHub says wait a minute
    r.clock.now = item.due
    r.relay.step()
    (item,) = r.queue.list()
    assert item.state == "pending" and item.due == pytest.approx(r.clock.now + 60)
    r.drain()
    assert len(github.posted()) == 1 and r.given_up == []


@pytest.mark.parametrize(
    ("kind", "next_step"),
    [("start", "starts its session"), ("pause", "`resume` wakes it"), ("do", "ad-hoc loop")],
)
def test_a_landed_control_verb_says_what_happens_next(kind: str, next_step: str) -> None:
    made = Decision(kind, "github:acme/api#7", "U0ALICE01", "C1:1.1", "2026-11-30T10:00:00Z")
    text = texts.landed_text(kinds.stamped(made), "")
    assert text.startswith("✅ recorded") and next_step in text and "<@U0ALICE01>" in text


def test_a_renamed_keyword_reaches_the_comment_the_sink_posts() -> None:
    from looproom.settings.keywords import parse

    renamed = parse({"start": "loop go"}, "relay.keywords")
    sinks = Sinks(LedgerSink(Path("unused")), keywords=renamed)
    decision = Decision("start", "github:acme/api#7", "U0ALICE01", "C1:1.1", "2026-11-30T10:00:00Z")
    target = kinds.target(decision, sinks.available({}))
    assert target["body"].startswith("loop go\n\n")


# -- records of the conversation: the mirror, then the session -------------------------------


def _reply_rig(tmp_path: Path, github: FakeGitHub, loop: FakeLoop) -> Rig:
    r = rig(tmp_path, github=github, loop=loop)
    loop.clock = r.clock
    r.record(decision(kinds.REPLY, words="prefer the smaller migration"))
    return r


def test_a_reply_is_mirrored_on_the_ticket_before_it_reaches_the_session(
    tmp_path: Path, github: FakeGitHub, loop: FakeLoop
) -> None:
    loop.fail("/sessions/reply", 503, times=1)  # the session's side fails once
    r = _reply_rig(tmp_path, github, loop)
    r.relay.step()
    (mirror,) = github.posted()
    assert "> prefer the smaller migration" in mirror and loop.replies == []
    r.drain()
    assert github.posted() == [mirror]  # the retry found the mirror: not posted twice
    assert [reply["comment"] for reply in loop.replies] == [False]
    assert r.room.reactions() == ["eyes", "white_check_mark"]


def test_a_reply_whose_mirror_fails_does_not_reach_the_session_until_it_lands(
    tmp_path: Path, github: FakeGitHub, loop: FakeLoop
) -> None:
    github.fail("/comments", 502, times=2)
    r = _reply_rig(tmp_path, github, loop)
    r.relay.step()
    assert loop.replies == [] and github.posted() == []
    r.drain()
    assert len(github.posted()) == 1 and len(loop.replies) == 1


def test_a_reply_for_a_session_that_is_gone_keeps_its_mirror_and_says_so(
    tmp_path: Path, github: FakeGitHub
) -> None:
    with FakeLoop({}) as no_sessions:
        r = _reply_rig(tmp_path, github, no_sessions)
        r.drain()
    assert len(github.posted()) == 1
    (said,) = r.room.replies()
    assert "is recorded on the work item" in said and "did not get it" in said
    assert "no session registered" in said and r.room.reactions() == ["eyes", "warning"]


def test_replies_to_one_session_go_one_at_a_time_in_the_order_said(
    tmp_path: Path, github: FakeGitHub, loop: FakeLoop
) -> None:
    loop.fail("/sessions/reply", kind="land_then_drop")
    r = _reply_rig(tmp_path, github, loop)
    second = decision(kinds.REPLY, words="and keep the index", origin="C1:202.0", ts="202.0")
    r.record(second)
    r.drain()
    assert [reply["text"] for reply in loop.replies] == [
        "prefer the smaller migration",
        "and keep the index",
    ]


def test_a_context_record_that_landed_is_kept_once_for_the_loops_event_log(
    tmp_path: Path, github: FakeGitHub, loop: FakeLoop
) -> None:
    """the-loop's `channel.context_recorded`, with the thread and how many messages — once
    it is on the ticket, never before, and never again for a redelivery."""
    r = rig(tmp_path, github=github, loop=loop)
    records = sqlite_records(tmp_path / "records.sqlite3")
    r.relay = relay.Relay(r.queue, r.relay.sinks, r.room, clock=r.clock, records=records)
    said = decision(kinds.CONTEXT, words="alice: ship it", count=3, thread="200.0")
    r.record(said)
    assert records.since(0).records == []  # stored, not landed yet
    r.drain()
    r.record(said)
    r.drain()
    (kept,) = records.since(0).records
    assert kept["event"] == "channel.context_recorded"
    assert kept["fields"] == {
        "channel": "slack",
        "work_item": ITEM,
        "actor": "U0ALICE01",
        "thread": "200.0",
        "count": 3,
        "channel_id": "C1",
    }


@pytest.mark.parametrize(("others", "posts"), [(999, 1), (1000, 2)])
def test_the_duplicate_check_reads_ten_pages_and_no_more(
    tmp_path: Path,
    github: FakeGitHub,
    caplog: pytest.LogCaptureFixture,
    others: int,
    posts: int,
) -> None:
    # docs/decisions.md: the comments since the first try are read, ten pages of 100: ours
    # as the 1000th is found and not posted again; as the 1001st it is not seen, and the
    # log says the look-up stopped short.
    for n in range(others):
        github._create(("acme/api", 7), f"comment {n}")
    github.fail("/comments", kind="land_then_drop")  # ours lands after the others
    r = rig(tmp_path, github=github)
    r.record(decision())
    r.drain()
    assert github.posted().count(relay_body(decision())) == posts
    pages = [q.query.get("page", "1") for q in github.requests if q.method == "GET"]
    assert pages == [str(n) for n in range(1, 11)]
    assert ("more than 10 pages of comments" in caplog.text) is (posts == 2)
