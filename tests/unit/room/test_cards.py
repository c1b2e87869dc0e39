"""The parents' cards: redrawn on a stage of their own, never in a delivery slot, coalesced.

Against the loopback fake of Slack through the real transport. The edit budget (Slack's
tier 3, shared by the workspace) is spent by holding ``chat.update`` in the transport's
limits on a clock the test moves: while it is held no edit can go, and the test says when
it comes back — so nothing here depends on how long anything takes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.assembly import Activation
from looproom.durable.outcome import Delivered
from looproom.durable.queue import DurableQueue
from looproom.durable.worker import Worker
from looproom.events import KNOWN_EVENTS, Event
from looproom.inbound import webhook as ingress
from looproom.inbound.signing import sign
from looproom.room import voice
from looproom.room.cards import YIELD_CAP, Cards, Owed
from looproom.room.outlets import event_delivery
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Environment, Settings
from looproom.slack.limits import COMEBACK, MethodLimits, Tier
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack
from tests.support.wait import wait_for

TIMEOUT = 30.0  # a bound on waiting, never an expectation of speed
EDIT = "chat.update"
ROOM_A, ROOM_B = "C0ROOMA001", "C0ROOMB001"
ITEM_A, ITEM_B = "github:acme/api#7", "github:acme/web#8"
ROOMS = (("acme/api", ROOM_A), ("acme/web", ROOM_B))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


#: One work item's lifecycle, each event moving its card on; the last is what it must show.
def lifecycle(item: str) -> list[Event]:
    kinds = [
        ("phase.started", {"phase": "design", "node": "design"}),
        ("phase-approval-pending", {"node": "design-approval"}),
        ("phase.started", {"phase": "implementation", "node": "implement"}),
        ("pr-review-pending", {"node": "pr-review"}),
        ("work-item-complete", {}),
    ]
    return [
        Event(kind, item, id=f"{item}-{n}", detail=detail) for n, (kind, detail) in enumerate(kinds)
    ]


FINAL = "🎉 Done"
SECRET = "cards-test-secret"


class Room:
    """An outlet and its cards over ``store`` (which outlives them: a restart keeps it)."""

    def __init__(self, slack: FakeSlack, store: dict[str, Any], *, paced: bool = False) -> None:
        """``paced``: posts keep Slack's pace in real time (a worker's retries wait it out)."""
        self.clock = Clock()
        client = WebClient(token=BOT_TOKEN, base_url=slack.url)
        pacer = Pacer() if paced else Pacer(clock=self.clock)
        self.transport = SlackTransport.beside(client, pacer=pacer, max_inline_wait=0.0)
        # One edit a minute, no burst: a test spends it as another room would.
        self.transport.limits = MethodLimits({EDIT: Tier(per_minute=1, burst=1)}, self.clock)
        self.book = BindingBook(store)
        self.cards = Cards(self.transport, self.book, clock=self.clock)
        settings = Settings(channel="#the-loop", subscribe=KNOWN_EVENTS, rooms=ROOMS)
        self.outlet = SlackOutlet(self.transport, self.book, settings, cards=self.cards)

    def deliver(self, event: Event) -> Any:
        self.clock.now += 5.0  # beyond the posts' pacing: this is about edits
        return self.outlet.deliver(event, maybe_delivered=False)

    def spend_the_edit_budget(self) -> None:
        """Another room takes the edit budget's turn: none for a minute (the room's clock)."""
        assert self.transport.limits.reserve(EDIT, most=0.0) == 0.0

    def a_minute_later(self) -> None:
        self.clock.now += 61.0


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM_A, "api"), (ROOM_B, "web"), ("C0LOOP0001", "the-loop")]) as f:
        yield f


def _card(slack: FakeSlack, room: str) -> str:
    (parent,) = slack.top_level(room)
    return str(parent["text"])


def _edits(slack: FakeSlack) -> list[Any]:
    return [call for call in slack.calls_to(EDIT) if call.status == 200]


def test_a_card_owed_many_states_while_the_budget_is_spent_is_drawn_once_with_the_last(
    slack: FakeSlack,
) -> None:
    room = Room(slack, {})
    first, *rest = lifecycle(ITEM_A)
    assert isinstance(room.deliver(first), Delivered)  # opens the parent, drawn as posted
    room.spend_the_edit_budget()
    room.cards.start()
    try:
        for event in rest:
            assert isinstance(room.deliver(event), Delivered)  # none waits for the edit
        assert slack.calls_to(EDIT) == [] and room.cards.owed == 1
        room.a_minute_later()
        wait_for(lambda: FINAL in _card(slack, ROOM_A), TIMEOUT, "the card drawn")
    finally:
        assert room.cards.stop() is True
    (edit,) = _edits(slack)  # one edit for four states
    assert FINAL in str(edit.args["text"])
    assert len(slack.thread(ROOM_A, slack.top_level(ROOM_A)[0]["ts"])) == 5  # every post


def test_a_post_in_another_room_is_not_held_by_redraws_waiting_even_with_one_slot(
    slack: FakeSlack, tmp_path: Path
) -> None:
    room = Room(slack, {}, paced=True)
    inbox = DurableQueue(tmp_path / "inbox.sqlite3", "inbox")
    worker = Worker(inbox, event_delivery(room.outlet), slots=1)
    a_events = lifecycle(ITEM_A)
    room.deliver(a_events[0])
    room.spend_the_edit_budget()
    for event in [*a_events[1:], lifecycle(ITEM_B)[0]]:
        inbox.put(event.delivery_key, event.to_json(), group=event.work_item)
    room.cards.start()
    worker.start()
    try:
        wait_for(lambda: inbox.depth() == 0, TIMEOUT, "every event posted")
        assert slack.top_level(ROOM_B)  # room B's post went while room A's card waited
        assert slack.calls_to(EDIT) == [] and room.cards.owed == 1
        assert FINAL not in _card(slack, ROOM_A)
        room.a_minute_later()
        wait_for(lambda: FINAL in _card(slack, ROOM_A), TIMEOUT, "room A's card drawn")
    finally:
        assert worker.stop() is True
        assert room.cards.stop() is True
        inbox.close()


def test_a_card_owed_when_the_bot_died_is_drawn_with_the_last_state_after_the_restart(
    slack: FakeSlack,
) -> None:
    store: dict[str, Any] = {}
    dead = Room(slack, store)
    first, *rest = lifecycle(ITEM_A)
    dead.deliver(first)
    dead.spend_the_edit_budget()
    for event in rest:
        dead.deliver(event)  # settled: the inbox forgets them; the card is owed in the book
    del dead  # the bot dies with the card owed; its stage never ran
    assert slack.calls_to(EDIT) == []
    restarted = Room(slack, store)
    restarted.cards.start()
    try:
        wait_for(lambda: FINAL in _card(slack, ROOM_A), TIMEOUT, "the card drawn")
    finally:
        assert restarted.cards.stop() is True
    assert len(_edits(slack)) == 1
    owed = restarted.book.binding(ITEM_A, ROOM_A)
    assert owed is not None and not owed.dirty


def test_a_card_a_replica_died_owing_is_drawn_by_a_live_one_once_it_stayed_owed(
    slack: FakeSlack,
) -> None:
    store: dict[str, Any] = {}  # the shared database: both replicas' book
    live, dead = Room(slack, store), Room(slack, store)
    first, *rest = lifecycle(ITEM_A)
    dead.deliver(first)
    dead.spend_the_edit_budget()
    dead.deliver(rest[0])  # owed; the dead replica's drawers would draw it
    assert live.cards.rescan() == 0  # first seen owed: maybe another replica's to draw
    for event in rest[1:]:
        dead.deliver(event)  # still moving on: someone is delivering it
    assert live.cards.rescan() == 0
    del dead  # dies owing the card
    assert live.cards.rescan() == 1  # owed unchanged since the last look: no one draws it
    live.cards.draw_due()
    assert FINAL in _card(slack, ROOM_A) and len(_edits(slack)) == 1
    assert live.cards.rescan() == 0  # drawn: owed no more


def _a_failed_edit(slack: FakeSlack) -> tuple[Room, list[Event]]:
    """A room whose card's edit after the second event failed; its retry not due yet."""
    room = Room(slack, {})
    events = lifecycle(ITEM_A)
    room.deliver(events[0])
    slack.fail(EDIT, "ok_false", error="internal_error")
    room.deliver(events[1])
    room.cards.draw_due()
    return room, events


def test_a_look_in_the_book_does_not_hurry_a_card_waiting_for_its_retry(
    slack: FakeSlack,
) -> None:
    room, _events = _a_failed_edit(slack)
    tried = len(slack.calls_to(EDIT))
    assert room.cards.rescan() == 0 and room.cards.rescan() == 0  # held here: left to it
    room.cards.draw_due()
    assert len(slack.calls_to(EDIT)) == tried


def test_the_next_event_draws_a_card_a_failed_edit_left_stale(slack: FakeSlack) -> None:
    room, events = _a_failed_edit(slack)
    assert voice.state(events[1]) not in _card(slack, ROOM_A)
    room.deliver(events[2])  # owes the card a new state: due now
    room.a_minute_later()  # the edit budget's next turn
    room.cards.draw_due()
    assert voice.state(events[2]) in _card(slack, ROOM_A)
    assert len(slack.top_level(ROOM_A)) == 1  # never a new parent


def _owed_with_a_budget_of_one_edit_a_second(slack: FakeSlack) -> tuple[Room, MethodLimits]:
    """A room whose work item's card is owed, and its edit budget: one a second."""
    room = Room(slack, {})
    limits = MethodLimits({EDIT: Tier(per_minute=60, burst=1)}, room.clock)
    room.transport.limits = limits
    first, second, *_ = lifecycle(ITEM_A)
    room.deliver(first)
    room.deliver(second)
    assert room.cards.owed == 1
    return room, limits


def _another_room_edits_and_a_third_is_refused(limits: MethodLimits) -> None:
    """Deliveries' edits over messages in their threads: one takes the turn, one is sent
    back to its queue (and comes back for a turn)."""
    assert limits.reserve(EDIT, most=0.0) == 0.0
    assert limits.reserve(EDIT, most=0.0) is None


def test_a_card_leaves_a_turn_to_the_delivery_refused_it_and_takes_the_next_one_free(
    slack: FakeSlack,
) -> None:
    room, limits = _owed_with_a_budget_of_one_edit_a_second(slack)
    _another_room_edits_and_a_third_is_refused(limits)
    room.clock.now += 1.0  # the budget has a turn, but that delivery is on its way back
    assert limits.wait(EDIT) == 0.0 and room.cards.turn() > 0.0
    assert limits.reserve(EDIT, most=0.0) == 0.0  # it came back and took it
    room.clock.now += 1.0 + COMEBACK
    assert room.cards.turn() == 0.0  # nobody else wants this one: the card's
    room.cards.draw_due()
    assert "review of the design" in _card(slack, ROOM_A)


def test_a_card_waits_for_the_deliveries_edits_a_minute_at_most(slack: FakeSlack) -> None:
    room, limits = _owed_with_a_budget_of_one_edit_a_second(slack)
    _another_room_edits_and_a_third_is_refused(limits)
    for _ in range(int(YIELD_CAP) - 1):  # deliveries want every turn
        room.clock.now += 1.0
        assert room.cards.turn() > 0.0
        _another_room_edits_and_a_third_is_refused(limits)
    room.clock.now += 1.0
    assert limits.wanted(EDIT) > 0.0 and room.cards.turn() == 0.0  # a minute: the card's


def test_stopping_while_drawers_wait_for_the_budget_does_not_hang(slack: FakeSlack) -> None:
    room = Room(slack, {})
    first, second, *_ = lifecycle(ITEM_A)
    room.deliver(first)
    room.spend_the_edit_budget()
    room.deliver(second)
    room.cards.start()
    stopped: list[bool] = []
    stopper = threading.Thread(target=lambda: stopped.append(room.cards.stop()))
    stopper.start()
    stopper.join(TIMEOUT)
    assert stopped == [True]  # every drawer ended, none left waiting its turn
    assert slack.calls_to(EDIT) == []
    owed = room.book.binding(ITEM_A, ROOM_A)
    assert owed is not None and owed.dirty  # still owed, in the book, for the next start


# -- with the whole activation: the plugin's stop, then its next start ---------------------


def _activation(
    slack: FakeSlack, store: dict[str, Any], data_dir: Path
) -> tuple[Activation, SlackTransport]:
    """The room as the plugin builds it on Slack, and its transport."""
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url))
    room = Activation(
        Environment.from_env({"THELOOP_WEBHOOK_SECRET": SECRET}),
        Settings(channel="#the-loop", subscribe=KNOWN_EVENTS, rooms=ROOMS),
        store=store,
        data_dir=data_dir,
        slack=transport,
        say=lambda _to, _text: None,
        admins=(),
        bot_member=lambda: "U0BOT0001",
    )
    return room, transport


def _post(room: Activation, event: Event) -> int:
    body = event.to_json().encode()
    stamp = int(time.time())
    headers = {"X-TheLoop-Timestamp": str(stamp), "X-TheLoop-Signature": sign(SECRET, stamp, body)}
    return room.routes.receive(ingress.Request("POST", headers, body, len(body))).status


def test_deactivating_with_a_card_waiting_for_the_budget_stops_and_the_next_start_draws_it(
    slack: FakeSlack, tmp_path: Path
) -> None:
    store: dict[str, Any] = {}
    first, *rest = lifecycle(ITEM_A)
    room, transport = _activation(slack, store, tmp_path)
    room.start()
    assert _post(room, first) == 202
    wait_for(lambda: slack.top_level(ROOM_A), TIMEOUT, "the parent")
    transport.limits.hold(EDIT, 3600.0)  # Slack said: no edits for an hour
    for event in rest:
        assert _post(room, event) == 202
    wait_for(lambda: room.inbox.depth() == 0, TIMEOUT, "every event posted")
    stopped: list[bool] = []
    stopper = threading.Thread(target=lambda: stopped.append(room.stop()))
    stopper.start()
    stopper.join(TIMEOUT)
    assert stopped == [True]  # nothing left waiting its hour
    assert FINAL not in _card(slack, ROOM_A)

    again, _ = _activation(slack, store, tmp_path)  # the hour has passed: a new budget
    again.start()
    try:
        wait_for(lambda: FINAL in _card(slack, ROOM_A), TIMEOUT, "the card drawn")
    finally:
        assert again.stop() is True
    assert len(_edits(slack)) == 1


# -- the cards owed, under any interleaving of deliveries and drawers ----------------------

_OWED_STEP = st.one_of(
    st.tuples(st.just("owe"), st.sampled_from("abc")),
    st.tuples(st.just("take"), st.just("")),
    st.tuples(st.just("done"), st.sampled_from("abc")),
)


@given(st.lists(_OWED_STEP, max_size=40))
def test_a_card_owed_is_drawn_by_one_drawer_at_a_time_and_once_more_if_owed_meanwhile(
    steps: list[tuple[str, str]],
) -> None:
    owed = Owed()
    waiting: list[str] = []  # the model: owed, longest first
    drawing: set[str] = set()
    for step, item in steps:
        key = (item, ROOM_A)
        if step == "owe":
            owed.add(key, 0.0)
            if item not in waiting:
                waiting.append(item)  # owed again before its turn: keeps its place
        elif step == "take":
            free = [w for w in waiting if w not in drawing]
            taken = owed.take(1.0)
            assert taken == ((free[0], ROOM_A) if free else None)  # the longest owed, free
            if free:
                waiting.remove(free[0])
                drawing.add(free[0])
        elif item in drawing:
            owed.done(key)
            drawing.discard(item)
        assert len(owed) == len(set(waiting) | drawing)
