"""The asked member is told, reminded and escalated to — once, within their hours, never
after the answer — by the attention queue's steps, against the fake Slack.

Real parts: the room's memory fed a real gate event, the asks in a SQLite file, the
attention queue a durable SQLite queue (reopened for a restart), the steps posting through
the real transport to the loopback Slack. Time is a test clock; each due item is claimed
and settled as the worker would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.attention import steps
from looproom.attention.record import ANSWERED, DM, REMINDED
from looproom.attention.side import AttentionSide
from looproom.attention.store import AskStore, sqlite_asks
from looproom.decide.authorization import AccessPolicy
from looproom.durable.contract import Item
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.queue import DurableQueue
from looproom.events import Event
from looproom.relay.decision import Decision
from looproom.room.buttons import blocks_for
from looproom.room.memory import Memory
from looproom.settings import Settings
from looproom.slack.direct import Direct
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

ROOM = "C0LOOP0001"
ALICE, BOB = "U0ALICE01", "U0BOB0001"
ITEM = "github:acme/api#7"
GATE = Event(
    "phase-approval-pending", ITEM, id="g1", text="Design ready", detail={"node": "design"}
)
NOON = 1_800_000_000.0 - (1_800_000_000 % 86400) + 12 * 3600  # 12:00 UTC


class Clock:
    def __init__(self) -> None:
        self.now = NOON

    def __call__(self) -> float:
        return self.now


@dataclass
class Room:
    slack: FakeSlack
    transport: SlackTransport
    side: AttentionSide
    deliver: Callable[[Item], Outcome]
    memory: Memory
    asks: AskStore
    path: Path
    clock: Clock
    queue: DurableQueue

    def open_gate(self) -> str:
        """The room posts the gate (its buttons as the room draws them) and learns it."""
        blocks = blocks_for(GATE, interactive=True)
        posted = self.transport.post_message(ROOM, text="📋 Design ready", blocks=blocks)
        state = self.memory.observe(GATE, ROOM, posted.ts, "")
        self.side.feed.observed_event(GATE, state)
        return posted.ts

    def run(self, *, restart: bool = False) -> list[Any]:
        """Each due item delivered and settled as the worker does; a restart first reopens
        the queue, as the next process would (what was in flight comes back flagged)."""
        if restart:
            self.queue = DurableQueue(self.path, "attention", clock=self.clock)
            self.side._queued.queue = self.queue  # the new process's queue
        outcomes = []
        while (item := self.queue.claim(self.clock.now)) is not None:
            outcome = self.deliver(item)
            outcomes.append((item.key, outcome))
            if isinstance(outcome, RetryLater):
                self.queue.retry(item.key, outcome.after or 5.0, outcome.reason)
            elif isinstance(outcome, Failed):
                self.queue.park(item.key, outcome.reason)
            else:
                self.queue.done(item.key)
        return outcomes

    def answer(self, member: str, origin: str) -> None:
        self.memory.settle(ITEM, "gate", member, "12:00")
        channel, ts = origin.split(":")[:2]
        decision = Decision("approve", ITEM, member, origin, "t", channel=channel, ts=ts)
        self.side.recorded(lambda _d: None)(decision)

    def dm(self, member: str) -> list[dict[str, Any]]:
        channel = "D" + member[1:10]
        return self.slack.messages(channel) if channel in self.slack.channels else []

    def thread(self, ts: str) -> list[dict[str, Any]]:
        return [m for m in self.slack.messages(ROOM) if m.get("thread_ts") == ts and m["ts"] != ts]


def make(tmp_path: Path, slack: FakeSlack, attention: dict[str, Any]) -> Room:
    settings = Settings.from_mapping({"attention": attention})
    clock = Clock()
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer())
    path = tmp_path / "queues.sqlite3"
    queue = DurableQueue(path, "attention", clock=clock)
    asks = sqlite_asks(path)
    store: dict[str, Any] = {}
    memory = Memory(store)
    policy = AccessPolicy("UBOT", frozenset({ALICE, BOB}))
    side = AttentionSide(
        settings,
        store,
        lambda: policy,
        str,
        asks,
        memory.get,
        queue=queue,
        slack=transport,
        clock=clock,
    )
    assert side.homes is not None
    delivery = side.homes.deliver_or(
        steps.Steps(asks, Direct(transport), side.feed.whom.room, clock).deliver
    )
    return Room(slack, transport, side, delivery, memory, asks, path, clock, queue)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


DIRECT = {"direct": True, "ask": "deciders", "remindAfter": 60, "escalateAfter": 120}


def test_nothing_configured_names_the_members_in_the_thread_and_messages_nobody_directly(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, {"ask": "deciders", "escalateTo": ["S0LEADS"]})
    ts = room.open_gate()
    assert [a.ts for a in room.asks.open_asks()] == [ts]
    room.clock.now += 10 * 86400
    assert {key.split(":")[0] for key, _ in room.run()} == {"home", "mention"}
    room.run(restart=True)
    [mention] = room.thread(ts)  # once, however long it waits; no reminder, no escalation
    assert mention["text"] == f"🔔 <@{ALICE}> <@{BOB}> — a gate here waits on you."
    assert (room.dm(ALICE), room.dm(BOB), slack.calls_to("conversations.open")) == ([], [], [])
    assert "Waiting on you (1)" in str(slack.homes[ALICE]["blocks"][0])


def test_an_ask_answered_before_its_mention_is_sent_names_nobody(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, {"ask": "deciders"})
    ts = room.open_gate()
    room.answer(BOB, f"{ROOM}:{ts}")
    room.run()
    assert room.thread(ts) == []


def test_each_member_asked_is_named_in_the_thread_and_gets_the_ask_to_answer_directly(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, DIRECT)
    ts = room.open_gate()
    room.run()
    [mention] = room.thread(ts)
    assert f"<@{ALICE}>" in mention["text"] and f"<@{BOB}>" in mention["text"]
    assert "<!channel>" not in mention["text"] and "<!here>" not in mention["text"]
    for member in (ALICE, BOB):
        [dm] = room.dm(member)
        actions = [
            e["action_id"] for b in dm["blocks"] if b["type"] == "actions" for e in b["elements"]
        ]
        assert {"theloop:approve", "theloop-attention:claim"} <= set(actions)
        assert room.asks.open_asks()[0].dm_of(member) == f"D{member[1:]}:{dm['ts']}"


def test_a_press_in_the_direct_message_is_read_as_the_same_press_on_the_ask(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, DIRECT)
    ts = room.open_gate()
    room.run()
    [dm] = room.dm(ALICE)
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": f"D{ALICE[1:]}"},
        "container": {"channel_id": f"D{ALICE[1:]}", "message_ts": dm["ts"]},
        "message": {"ts": dm["ts"], "blocks": dm["blocks"], "text": dm["text"]},
        "actions": [{"action_id": "theloop:approve", "value": "approve"}],
    }
    read = room.side.pressed(payload)
    assert (read["channel"]["id"], read["message"]["ts"], read["container"]["message_ts"]) == (
        ROOM,
        ts,
        ts,
    )
    assert not any(
        b.get("block_id", "").startswith("theloop-attention:") for b in read["message"]["blocks"]
    )
    room.answer(ALICE, f"{ROOM}:{ts}:theloop:approve")
    closed = room.asks.get(room.asks.of_item(ITEM)[0].id)
    assert (closed.outcome, closed.answered_by, closed.answered_how) == (ANSWERED, ALICE, DM)
    room.run()
    for member in (ALICE, BOB):
        [dm] = room.dm(member)
        assert f"answered by <@{ALICE}>" in dm["text"]
        assert not [b for b in dm["blocks"] if b["type"] == "actions"]


def test_one_reminder_per_member_after_the_time_and_the_older_message_goes(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, DIRECT)
    room.open_gate()
    room.run()
    room.clock.now += 59  # one second before it is due
    room.run()
    assert len(room.dm(ALICE)) == 1 and "Still waiting" not in room.dm(ALICE)[0]["text"]
    room.clock.now += 1
    room.run()
    [reminder] = room.dm(ALICE)  # brought back up: the first message was deleted
    assert "Still waiting on you" in reminder["blocks"][0]["elements"][0]["text"]
    room.clock.now += 3600
    room.run()
    assert len(room.dm(ALICE)) == 1 and len(room.dm(BOB)) == 1
    ask = room.asks.open_asks()[0]
    assert sorted(m for m, s, _ in room.asks.steps_of(ask.id) if s == REMINDED) == [ALICE, BOB]


def test_a_reminder_waits_for_the_members_own_working_hours(
    tmp_path: Path, slack: FakeSlack
) -> None:
    slack.time_zones[ALICE] = ("Asia/Tokyo", 9 * 3600)  # 12:00 UTC is 21:00 there
    room = make(tmp_path, slack, DIRECT)
    room.open_gate()
    room.run()
    room.clock.now += 60
    outcomes = dict(room.run())
    waits = outcomes[steps.key(steps.REMIND, room.asks.open_asks()[0].id, ALICE)]
    assert isinstance(waits, RetryLater) and waits.after == 12 * 3600 - 60  # 09:00 Tokyo
    assert "Still waiting" in room.dm(BOB)[0]["blocks"][0]["elements"][0]["text"]
    assert "Still waiting" not in room.dm(ALICE)[0]["blocks"][0]["elements"][0]["text"]
    room.clock.now += 12 * 3600 - 60
    room.run()
    assert "Still waiting" in room.dm(ALICE)[0]["blocks"][0]["elements"][0]["text"]


def test_a_claim_stops_the_others_reminders_and_says_who_is_on_it(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, DIRECT)
    ts = room.open_gate()
    room.run()
    room.side.reacted("U0STRANGER", ROOM, ts, "eyes")  # not asked: no claim
    room.side.reacted(BOB, ROOM, ts, "thumbsup")  # not a claim
    assert room.asks.open_asks()[0].claimed_by == ""
    room.side.reacted(BOB, ROOM, ts, "eyes")
    room.run()
    assert any(m["text"] == f"👀 <@{BOB}> is on it." for m in room.thread(ts))
    room.clock.now += 60
    room.run()
    assert "Still waiting" not in room.dm(ALICE)[0]["blocks"][0]["elements"][0]["text"]
    assert "Still waiting" in room.dm(BOB)[0]["blocks"][0]["elements"][0]["text"]


def test_the_claimer_is_shown_on_the_asks_own_message_once(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, DIRECT)
    ts = room.open_gate()
    room.run()
    room.side.reacted(BOB, ROOM, ts, "eyes")
    room.side.reacted(ALICE, ROOM, ts, "eyes")  # the second claim: nothing changes
    room.run()
    ask = room.asks.open_asks()[0]
    room.queue.put(steps.key(steps.CLAIMED, ask.id), steps.payload(steps.CLAIMED, ask.id))
    room.run()  # the step again (a retry, a second replica): the line is not repeated
    [gate] = [m for m in slack.messages(ROOM) if m["ts"] == ts]
    lines = [b for b in gate["blocks"] if b["type"] == "context" and "on it" in str(b)]
    assert [b["elements"][0]["text"] for b in lines] == [f"👀 <@{BOB}> is on it."]
    assert gate["blocks"][-1] == lines[0] and gate["text"] == "📋 Design ready"
    actions = [
        e["action_id"] for b in gate["blocks"] if b["type"] == "actions" for e in b["elements"]
    ]
    assert "theloop:approve" in actions  # still answerable where it is
    room.clock.now += 60
    room.run()
    assert "is on it" not in json.dumps(room.dm(BOB)[0]["blocks"])  # the card's, not the DM's


def press_in_dm(room: Room, member: str, action: str) -> Any:
    [dm] = room.dm(member)
    channel = f"D{member[1:]}"
    return room.side.pressed(
        {
            "type": "block_actions",
            "user": {"id": member},
            "channel": {"id": channel},
            "container": {"channel_id": channel, "message_ts": dm["ts"]},
            "message": {"ts": dm["ts"], "blocks": dm["blocks"], "text": dm["text"]},
            "actions": [{"action_id": action, "value": "x"}],
        }
    )


def reminded(room: Room, member: str) -> bool:
    return "Still waiting" in json.dumps(room.dm(member), ensure_ascii=False)


SNOOZE = "theloop-attention:snooze"


def test_remind_me_later_puts_that_members_reminder_back_once_and_the_others_not(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, {**DIRECT, "snoozeFor": 600})
    room.open_gate()
    room.run()
    room.clock.now += 10
    assert press_in_dm(room, ALICE, SNOOZE) is None  # nothing for the desk to relay
    assert press_in_dm(room, ALICE, SNOOZE) is None  # pressed again: the first stands
    room.run()
    room.clock.now += 50  # the reminder's time: Bob's comes, Alice's waits
    room.run()
    assert reminded(room, BOB) and not reminded(room, ALICE)
    room.clock.now += 549  # one second before the snooze ends
    room.run()
    assert not reminded(room, ALICE)
    room.clock.now += 1
    room.run()
    room.clock.now += 3600
    room.run()
    [reminder] = room.dm(ALICE)
    assert "Still waiting" in reminder["blocks"][0]["elements"][0]["text"]
    ask = room.asks.open_asks()[0]
    taken = [s for m, s, _ in room.asks.steps_of(ask.id) if m == ALICE]
    assert sorted(taken) == ["reminded", "snoozed"]


def test_a_snooze_after_the_reminder_brings_it_back_once_but_never_after_the_answer(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, {**DIRECT, "snoozeFor": 600})
    ts = room.open_gate()
    room.run()
    room.clock.now += 60
    room.run()
    [first] = room.dm(ALICE)
    press_in_dm(room, ALICE, SNOOZE)
    room.run()
    room.clock.now += 600
    room.run()
    [again] = room.dm(ALICE)  # brought back up once more, the older copy gone
    assert again["ts"] != first["ts"] and reminded(room, ALICE)
    room.clock.now += 3600
    room.run()
    assert [m["ts"] for m in room.dm(ALICE)] == [again["ts"]]
    # Bob's snooze would end after the answer: nothing comes.
    press_in_dm(room, BOB, SNOOZE)
    room.run()
    bob = [m["ts"] for m in room.dm(BOB)]
    room.answer(ALICE, f"{ROOM}:{ts}")
    room.clock.now += 3600
    room.run()
    assert [m["ts"] for m in room.dm(BOB)] == bob
    assert "answered by" in room.dm(BOB)[0]["text"]
    assert room.queue.depth() == 0  # nothing left waiting for an answered ask


def test_nobody_is_reminded_once_the_ask_is_answered(tmp_path: Path, slack: FakeSlack) -> None:
    room = make(tmp_path, slack, {**DIRECT, "escalateTo": ["S0LEADS"]})
    ts = room.open_gate()
    room.run()
    room.answer(BOB, f"{ROOM}:{ts}")
    room.clock.now += 3600
    room.run()
    assert all("Still waiting" not in str(m) for m in room.dm(ALICE) + room.dm(BOB))
    assert not any("subteam" in m["text"] for m in room.thread(ts))
    assert room.queue.depth() == 0  # nothing left waiting for an answered ask


def test_the_escalation_names_the_group_once_after_the_longer_time(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, {**DIRECT, "escalateTo": ["S0LEADS", "U0LEAD01"]})
    ts = room.open_gate()
    room.run()
    room.clock.now += 119
    room.run()
    assert not any("subteam" in m["text"] for m in room.thread(ts))
    room.clock.now += 1
    room.run()
    room.clock.now += 600
    room.run(restart=True)
    [escalation] = [m for m in room.thread(ts) if "⏫" in m["text"]]
    assert escalation["text"].startswith("⏫ <!subteam^S0LEADS> <@U0LEAD01>")


def test_an_escalation_to_named_members_waits_for_their_hours_and_a_group_does_not(
    tmp_path: Path, slack: FakeSlack
) -> None:
    lead = "U0LEAD001"
    slack.users[lead] = "lead"
    slack.time_zones[lead] = ("Asia/Tokyo", 9 * 3600)  # 12:00 UTC is 21:00 there
    room = make(tmp_path, slack, {**DIRECT, "escalateTo": [lead]})
    ts = room.open_gate()
    room.run()
    room.clock.now += 120
    outcomes = dict(room.run())
    waits = outcomes[steps.key(steps.ESCALATE, room.asks.open_asks()[0].id)]
    assert isinstance(waits, RetryLater) and waits.after == 12 * 3600 - 120  # 09:00 Tokyo
    assert not any("⏫" in m["text"] for m in room.thread(ts))
    room.clock.now += 12 * 3600 - 120
    room.run()
    assert [m["text"][:14] for m in room.thread(ts) if "⏫" in m["text"]] == [f"⏫ <@{lead}>"]


def test_an_escalation_naming_a_group_goes_at_once_whatever_the_members_hours(
    tmp_path: Path, slack: FakeSlack
) -> None:
    lead = "U0LEAD001"
    slack.users[lead] = "lead"
    slack.time_zones[lead] = ("Asia/Tokyo", 9 * 3600)
    room = make(tmp_path, slack, {**DIRECT, "escalateTo": ["S0LEADS", lead]})
    ts = room.open_gate()
    room.run()
    room.clock.now += 120
    room.run()
    [escalation] = [m for m in room.thread(ts) if "⏫" in m["text"]]
    assert escalation["text"].startswith(f"⏫ <!subteam^S0LEADS> <@{lead}>")


def test_an_escalations_handles_are_mentioned_as_their_members_and_an_unknown_one_shown(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack, {**DIRECT, "escalateTo": ["S0LEADS", "@bob"]})
    ts = room.open_gate()
    room.clock.now += 120
    room.run()
    [escalation] = [m for m in room.thread(ts) if "⏫" in m["text"]]
    assert escalation["text"].startswith(f"⏫ <!subteam^S0LEADS> <@{BOB}> —")
    other = make(tmp_path / "b", slack, {**DIRECT, "escalateTo": ["@nobody-here"]})
    other_ts = other.open_gate()
    other.clock.now += 120
    other.run()
    [shown] = [m for m in other.thread(other_ts) if "⏫" in m["text"]]
    assert shown["text"].startswith("⏫ @nobody-here —")


@pytest.mark.parametrize("posted", [False, True])
def test_a_kill_between_taking_the_reminder_and_settling_it_gives_exactly_one(
    tmp_path: Path, slack: FakeSlack, posted: bool
) -> None:
    room = make(tmp_path, slack, DIRECT)
    room.open_gate()
    room.run()
    room.clock.now += 60
    ask = room.asks.open_asks()[0]
    remind = steps.key(steps.REMIND, ask.id, ALICE)
    # Claim Alice's reminder and die: after taking the step, before (or after) the post.
    while (item := room.queue.claim(room.clock.now)) is not None and item.key != remind:
        room.queue.retry(item.key, 0, "not this one")
    assert item is not None
    if posted:
        assert isinstance(room.deliver(item), Delivered)
    else:
        assert room.asks.take_for(ask.id, ALICE, REMINDED, room.clock.now)
    room.run(restart=True)
    assert _reminders(slack, ask.id, ALICE) == 1  # posted once, whatever is shown after
    reminders = [
        m for m in room.dm(ALICE) if "Still waiting" in m["blocks"][0]["elements"][0]["text"]
    ]
    assert len(reminders) == 1


def test_a_room_without_im_write_parks_the_direct_message_and_says_why(
    tmp_path: Path, slack: FakeSlack
) -> None:
    slack.scopes = slack.scopes.replace("im:write,", "")
    room = make(tmp_path, slack, DIRECT)
    room.open_gate()
    outcomes = dict(room.run())
    dm = outcomes[steps.key(steps.DM, room.asks.open_asks()[0].id, ALICE)]
    assert isinstance(dm, Failed) and "im:write" in dm.reason


# -- any interleaving ----------------------------------------------------------------------

OPS = st.lists(
    st.one_of(
        st.tuples(st.just("tick"), st.sampled_from([0, 30, 61, 130])),
        st.tuples(st.just("run"), st.just("")),
        st.tuples(st.just("crash"), st.booleans().map(str)),
        st.tuples(st.just("answer"), st.sampled_from([ALICE, BOB])),
        st.tuples(st.just("claim"), st.sampled_from([ALICE, BOB])),
    ),
    max_size=14,
)


def _reminders(slack: FakeSlack, ask_id: str, member: str) -> int:
    keyed = steps.key(steps.REMIND, ask_id, member)
    calls = slack.calls_to("chat.postMessage")
    return sum(1 for c in calls if c.response.get("ok") and keyed in str(c.args.get("metadata")))


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_nobody_is_reminded_after_the_answer_nor_twice_whatever_the_interleaving(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, Any]]
) -> None:
    with FakeSlack() as slack:
        room = make(tmp_path_factory.mktemp("ask"), slack, DIRECT)
        ts = room.open_gate()
        ask_id = room.asks.open_asks()[0].id
        at_answer: dict[str, int] | None = None
        at_claim: dict[str, int] = {}
        for op, arg in ops:
            if op == "tick":
                room.clock.now += arg
            elif op == "run":
                room.run()
            elif op == "crash":  # one due item claimed, maybe delivered, never settled
                item = room.queue.claim(room.clock.now)
                if item is not None and arg == "True":
                    room.deliver(item)
                room.run(restart=True)
            elif op == "answer" and at_answer is None:
                at_answer = {m: _reminders(slack, ask_id, m) for m in (ALICE, BOB)}
                room.answer(arg, f"{ROOM}:{ts}")
            elif op == "claim" and room.side.claim(room.asks.get(ask_id), arg):
                other = BOB if arg == ALICE else ALICE
                at_claim[other] = _reminders(slack, ask_id, other)
        room.clock.now += 10_000
        room.run(restart=True)
        room.run()
        sent = {m: _reminders(slack, ask_id, m) for m in (ALICE, BOB)}
        assert all(count <= 1 for count in sent.values()), sent  # nobody twice
        if at_answer is not None:
            assert sent == at_answer  # nobody after the answer
            assert room.queue.depth() == 0
        else:
            for member in (ALICE, BOB):  # unanswered: each reminded once, but a claim's others
                assert sent[member] == at_claim.get(member, 1)
