"""Each member's App Home tab lists what waits on them, against the fake Slack.

Real parts: the room's memory fed real gate and question events, the asks in a SQLite
file, the attention queue a durable SQLite queue, the Homes published through the real
transport to the loopback Slack, which refuses a Home over its 100 blocks. Nothing is
configured (no ``attention:`` key): the Home is there regardless. Time is a test clock;
each due item is claimed and settled as the worker would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.attention import home_view, notes, steps
from looproom.attention.home import NOT_ENABLED
from looproom.attention.record import ANSWERED, HOME, Ask
from looproom.attention.side import AttentionSide
from looproom.attention.store import AskStore, sqlite_asks
from looproom.decide.authorization import AccessPolicy
from looproom.durable.contract import Item
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.queue import DurableQueue
from looproom.events import Event
from looproom.relay.decision import Decision
from looproom.room.buttons import blocks_for
from looproom.room.memory import ItemState, Memory
from looproom.settings import Settings
from looproom.slack.direct import Direct
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, HOME_BLOCK_LIMIT, FakeSlack, block_errors
from tests.support import messages

ROOM, OTHER_ROOM = "C0LOOP0001", "C0OTHER001"
ALICE, BOB = "U0ALICE01", "U0BOB0001"
ITEM, OTHER_ITEM = "github:acme/api#7", "github:beta/web#3"
NOON = 1_800_000_000.0 - (1_800_000_000 % 86400) + 12 * 3600


class Clock:
    def __init__(self) -> None:
        self.now = NOON

    def __call__(self) -> float:
        return self.now


def gate(item: str, event_id: str) -> Event:
    return Event(
        "phase-approval-pending", item, id=event_id, text="Design ready", detail={"node": "d"}
    )


@dataclass
class Room:
    slack: FakeSlack
    transport: SlackTransport
    side: AttentionSide
    deliver: Callable[[Item], Outcome]
    memory: Memory
    asks: AskStore
    clock: Clock
    queue: DurableQueue

    def show(self, event: Event, room: str = ROOM) -> str:
        """The room posts ``event`` (its buttons as the room draws them) and learns it."""
        blocks = blocks_for(event, interactive=True)
        posted = self.transport.post_message(room, text=event.text, blocks=blocks)
        state = self.memory.observe(event, room, posted.ts, "")
        self.side.feed.observed_event(event, state)
        return posted.ts

    def run(self) -> list[tuple[str, Outcome]]:
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

    def home(self, member: str) -> list[dict[str, Any]]:
        return list(self.slack.home_of(member).get("blocks") or [])

    def listed(self, member: str) -> list[str]:
        """The block ids of the asks the member's Home lists, in order."""
        return [
            b["block_id"]
            for b in self.home(member)
            if str(b.get("block_id", "")).startswith("theloop-home:")
        ]


def make(tmp_path: Path, slack: FakeSlack, *, taps: bool = True) -> Room:
    clock = Clock()
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer())
    path = tmp_path / "queues.sqlite3"
    queue = DurableQueue(path, "attention", clock=clock)
    asks = sqlite_asks(path)
    store: dict[str, Any] = {}
    memory = Memory(store)
    policy = AccessPolicy("UBOT", frozenset({ALICE, BOB}))
    side = AttentionSide(
        Settings.from_mapping({}),
        store,
        lambda: policy,
        str,
        asks,
        memory.get,
        queue=queue,
        slack=transport,
        clock=clock,
        taps=taps,
    )
    assert side.homes is not None
    deliver = side.homes.deliver_or(
        steps.Steps(asks, Direct(transport), side.feed.whom.room, clock, taps=taps).deliver
    )
    return Room(slack, transport, side, deliver, memory, asks, clock, queue)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop"), (OTHER_ROOM, "beta")]) as fake:
        yield fake


def home_press(room: Room, member: str, block_id: str) -> dict[str, Any]:
    """The press Slack sends for the answer of the Home's block ``block_id``."""
    [block] = [b for b in room.home(member) if b.get("block_id") == block_id]
    button = block["accessory"]
    return {
        "type": "block_actions",
        "user": {"id": member},
        "container": {"type": "view", "view_id": room.slack.home_of(member)["id"]},
        "view": room.slack.home_of(member),
        "trigger_id": room.slack.trigger(),
        "actions": [
            {
                "type": "button",
                "action_id": button["action_id"],
                "block_id": block_id,
                "value": button["value"],
            }
        ],
    }


def test_with_nothing_configured_each_member_asked_sees_the_ask_oldest_first(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    first = room.show(gate(ITEM, "g1"))
    room.clock.now += 600
    second = room.show(gate(OTHER_ITEM, "g2"), OTHER_ROOM)
    room.run()
    for member in (ALICE, BOB):
        assert room.listed(member) == [
            f"theloop-home:{ROOM}:{first}",
            f"theloop-home:{OTHER_ROOM}:{second}",
        ]
    [oldest] = [b for b in room.home(ALICE) if b.get("block_id", "").endswith(first)]
    assert f"`{ITEM}`" in oldest["text"]["text"] and "waiting 10 min" in oldest["text"]["text"]
    link = f"https://slack.com/archives/{ROOM}/p{first.replace('.', '')}"
    assert link in oldest["text"]["text"]
    assert (oldest["accessory"]["action_id"], oldest["accessory"]["value"]) == (
        "theloop:approve",
        "approve",
    )
    # Nothing configured: the Home and the thread's one mention, no direct message.
    assert slack.calls_to("conversations.open") == []
    assert [m["text"][0] for m in slack.thread("the-loop", first)] == ["🔔"]


def test_when_the_bot_polls_the_home_lists_each_ask_with_no_button_nobody_would_receive(
    tmp_path: Path, slack: FakeSlack
) -> None:
    """Polling (``slack.read.mode: poll``) no press reaches the bot: the Home still lists
    what waits, each ask linked to its thread, where it is answered."""
    room = make(tmp_path, slack, taps=False)
    first = room.show(gate(ITEM, "g1"))
    room.run()
    assert room.listed(ALICE) == [f"theloop-home:{ROOM}:{first}"]
    assert [b for b in room.home(ALICE) if "accessory" in b or b.get("type") == "actions"] == []
    ask = room.asks.open_asks()[0]
    drawn = notes.dm_blocks(ask, [], taps=False)  # its direct message, where one is sent
    assert [b for b in drawn if b.get("type") == "actions"] == []
    assert [b["type"] for b in notes.dm_blocks(ask, [])][-1] == "actions"  # a listener's


def test_opening_the_tab_draws_it_and_a_change_told_twice_is_drawn_once(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    assert room.side.homes is not None
    room.side.homes.opened_tab(slack.home_opened(ALICE)["event"])
    room.side.homes.opened_tab(slack.home_opened(ALICE, tab="messages")["event"])
    room.run()
    assert [user for user, _ in slack.published] == [ALICE]
    assert "Nothing waits on you." in json.dumps(room.home(ALICE))
    room.show(gate(ITEM, "g1"))
    ask = room.asks.open_asks()[0]
    room.side.homes.changed(ask, "opened")  # told again, as a second replica might be
    homes = [key for key, _ in room.run() if key.startswith("home:")]
    assert [key.split(":")[1] for key in homes] == [ALICE, BOB]


def test_a_press_on_the_home_is_the_press_on_the_ask_and_the_home_drops_it(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    ts = room.show(gate(ITEM, "g1"))
    room.run()
    press = home_press(room, ALICE, f"theloop-home:{ROOM}:{ts}")
    read = room.side.pressed(press)
    assert read is not None
    assert (read["channel"]["id"], read["message"]["ts"], read["container"]["message_ts"]) == (
        ROOM,
        ts,
        ts,
    )
    # The ask's own message, as Slack has it: the desk redraws it with who pressed.
    assert read["message"]["blocks"] == slack.messages(ROOM)[0]["blocks"]
    room.memory.settle(ITEM, "gate", ALICE, "12:00")
    decision = Decision(
        "approve", ITEM, ALICE, f"{ROOM}:{ts}:theloop:approve", "t", channel=ROOM, ts=ts
    )
    room.side.recorded(lambda _d: None)(decision)
    closed = room.asks.of_item(ITEM)[0]
    assert (closed.outcome, closed.answered_by, closed.answered_how) == (ANSWERED, ALICE, HOME)
    room.run()
    assert room.listed(ALICE) == room.listed(BOB) == []
    home = json.dumps(room.home(ALICE))
    assert "You answered lately" in home and f"`{ITEM}`" in home and "(home)" in home
    assert "You answered lately" not in json.dumps(room.home(BOB))
    # The same Home pressed again: the ask is closed, nothing to read, the Home redrawn.
    published = len(slack.published)
    assert room.side.pressed(press) is None
    room.run()
    assert len(slack.published) == published + 1


def seed(asks: AskStore, count: int, answered: int = 0) -> None:
    """``count`` asks open on Alice, a second apart; ``answered`` more she answered."""
    for n in range(count + answered):
        ask = Ask(f"a{n}", f"github:acme/api#{n}", "gate", ROOM, f"{n}.0", "", (ALICE,), NOON + n)
        asks.open(ask)
        if n >= count:
            asks.close(ask.id, ANSWERED, ALICE, HOME, NOON + 10_000 + n)


@pytest.mark.parametrize(("answered", "fits"), [(0, 98), (3, 95)])
def test_a_home_at_slacks_block_cap_shows_every_ask_and_one_more_is_cut_saying_how_many(
    tmp_path: Path, slack: FakeSlack, answered: int, fits: int
) -> None:
    room = make(tmp_path, slack)
    assert room.side.homes is not None
    seed(room.asks, fits, answered)
    assert isinstance(room.side.homes.publish(ALICE), Delivered)
    assert len(room.home(ALICE)) == 100 and len(room.listed(ALICE)) == fits
    assert "more waiting" not in json.dumps(room.home(ALICE))

    # One ask past the edge: the last ask's block gives way to the line saying how many.
    late = Ask("late", "github:acme/api#999", "gate", ROOM, "999.0", "", (ALICE,), NOON + 5000)
    room.asks.open(late)
    assert isinstance(room.side.homes.publish(ALICE), Delivered)
    blocks = room.home(ALICE)
    assert len(blocks) == 100 and len(room.listed(ALICE)) == fits - 1
    said = json.dumps(blocks, ensure_ascii=False)
    assert "… and 2 more waiting on you" in said  # the newest two of fits + 1
    assert f"theloop-home:{ROOM}:999.0" not in room.listed(ALICE)
    assert ("You answered lately" in said) == bool(answered)


def test_slacks_refusals_are_waited_out_parked_or_told_to_the_doctor(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    assert room.side.homes is not None and room.side.homes.tab_on is None  # not known yet
    slack.home_tab = False
    # Not parked (every change would park one more): the doctor says how to turn it on.
    refused = room.side.homes.publish(ALICE)
    assert isinstance(refused, Delivered) and refused.detail == NOT_ENABLED
    assert room.side.homes.tab_on is False
    slack.home_tab = True
    assert isinstance(room.side.homes.publish(ALICE), Delivered)
    assert room.side.homes.tab_on is True
    slack.fail("views.publish", "ok_false", error="invalid_arguments")
    assert isinstance(room.side.homes.publish(ALICE), Failed)  # a view Slack refuses: parked
    slack.fail("views.publish", "429", retry_after=7)
    waited = room.side.homes.publish(ALICE)  # Slack's wait, kept
    assert isinstance(waited, RetryLater) and waited.after == 7


def test_only_what_asks_me_is_on_my_home_and_what_another_answered_drops_from_it(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    assert room.side.homes is not None
    room.asks.open(Ask("late", ITEM, "gate", ROOM, "1.0", "", (ALICE,), NOON + 1))
    room.asks.open(Ask("old", OTHER_ITEM, "gate", OTHER_ROOM, "2.0", "", (ALICE, BOB), NOON))
    room.asks.open(Ask("bobs", "github:acme/api#9", "gate", ROOM, "3.0", "", (BOB,), NOON))
    room.side.homes.publish(ALICE)
    assert room.listed(ALICE) == [f"theloop-home:{OTHER_ROOM}:2.0", f"theloop-home:{ROOM}:1.0"]
    room.asks.close("old", ANSWERED, BOB, HOME, NOON + 60)
    room.side.homes.publish(ALICE)
    assert room.listed(ALICE) == [f"theloop-home:{ROOM}:1.0"]
    assert "You answered lately" not in json.dumps(room.home(ALICE))  # Bob answered it


def test_a_claim_redraws_the_home_of_everyone_the_ask_asks(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    ts = room.show(gate(ITEM, "g1"))
    room.run()
    assert "claimed by" not in json.dumps(room.home(ALICE))
    room.side.reacted(BOB, ROOM, ts, "eyes")
    room.run()
    for member in (ALICE, BOB):
        assert f"claimed by <@{BOB}>" in json.dumps(room.home(member))


@settings(max_examples=60, deadline=None)
@given(
    waiting=st.integers(min_value=0, max_value=140),
    answered=st.integers(min_value=0, max_value=8),
    name=st.text(min_size=1, max_size=400),
)
def test_any_home_is_one_slack_takes_and_accounts_for_every_ask(
    waiting: int, answered: int, name: str
) -> None:
    def ask(n: int) -> Ask:
        item = f"github:acme/{name}#{n}"
        return Ask(f"a{n}", item, "gate", ROOM, f"{n}.0", "", (ALICE, BOB), NOON + n)

    waits = [ask(n) for n in range(waiting)]
    done = [ask(1000 + n) for n in range(answered)]
    view = home_view.view(waits, done, NOON + 5000, lambda a: home_view.one_tap(a, ItemState()))
    blocks = view["blocks"]
    assert view["type"] == "home" and block_errors(blocks, HOME_BLOCK_LIMIT) == []
    listed = [b["block_id"] for b in blocks if b.get("block_id", "").startswith("theloop-home:")]
    assert listed == [home_view.block_of(a) for a in waits[: len(listed)]]  # oldest first
    said = json.dumps(blocks, ensure_ascii=False)
    more = re.search(r"… and (\d+) more waiting on you", said)
    assert len(listed) + (int(more.group(1)) if more else 0) == waiting
    assert (more is None) == (len(blocks) < HOME_BLOCK_LIMIT or len(listed) == waiting)


def corpus_event(stem: str) -> Event:
    wire = messages.event(stem)
    return Event.from_wire({**wire, "workItem": ITEM})


def thread_answers(event: Event) -> set[tuple[str, str]]:
    """The (action id, value) of each answer the ask's own message in its thread offers."""
    drawn = blocks_for(event, interactive=True)
    return {
        (e["action_id"], str(e.get("value") or ""))
        for b in drawn
        if b["type"] == "actions"
        for e in b["elements"]
        if e["type"] == "button" and "url" not in e
    }


@pytest.mark.parametrize("stem", ["06", "15", "01"])
def test_the_homes_one_tap_is_an_answer_the_asks_own_message_offers(stem: str) -> None:
    event = corpus_event(stem)  # a gate, a question stating its default, the phase selection
    state = Memory({}).observe(event, ROOM, "5.0", "")
    [kind] = [k for k in ("gate", "ask", "selection") if getattr(state, k) is not None]
    ask = Ask("a", ITEM, kind, ROOM, "5.0", "", (ALICE,), NOON)
    answer = home_view.one_tap(ask, state)
    assert answer is not None and (answer[0], answer[2]) in thread_answers(event)
    # Another message's ask (an older drawing): no answer from the Home.
    assert home_view.one_tap(Ask("b", ITEM, kind, ROOM, "4.0", "", (ALICE,), NOON), state) is None


def test_a_question_without_a_default_has_no_one_tap_answer() -> None:
    question = Event("session.awaiting_input", ITEM, id="q", text="Which index should I keep?")
    state = Memory({}).observe(question, ROOM, "5.0", "")
    assert state.ask is not None
    assert home_view.one_tap(Ask("a", ITEM, "ask", ROOM, "5.0", "", (ALICE,), NOON), state) is None


def test_an_answer_the_relay_gives_up_on_puts_the_ask_back_on_the_home(
    tmp_path: Path, slack: FakeSlack
) -> None:
    room = make(tmp_path, slack)
    ts = room.show(gate(ITEM, "g1"))
    room.memory.settle(ITEM, "gate", ALICE, "12:00")
    decision = Decision(
        "approve", ITEM, ALICE, f"{ROOM}:{ts}:theloop:approve", "t", channel=ROOM, ts=ts
    )
    room.side.recorded(lambda _d: None)(decision)
    room.run()
    assert room.listed(ALICE) == [] and "You answered lately" in json.dumps(room.home(ALICE))
    room.clock.now += 60
    room.memory.reopen(ITEM, "gate")  # as the desk's Reopening does, then tells attention
    room.side.given_up(lambda _d: None)(decision)
    room.run()
    for member in (ALICE, BOB):
        assert room.listed(member) == [f"theloop-home:{ROOM}:{ts}"]
    assert "You answered lately" not in json.dumps(room.home(ALICE))
