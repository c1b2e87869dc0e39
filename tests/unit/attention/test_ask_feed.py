"""The asks on record follow the room: an ask opens when a work item starts waiting on
people, and closes once — answered (by whom, how) or moved on — whatever the order and
number of times the room is told.

The room's own memory is fed real events and real decisions are recorded; the store is
a real SQLite file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looproom.attention.feed import Feed
from looproom.attention.owners import Owners
from looproom.attention.record import ANSWERED, BUTTON, DM, MOVED_ON, TYPED, Ask, ask_id
from looproom.attention.store import sqlite_asks
from looproom.attention.whom import Whom
from looproom.control.item_status import open_questions
from looproom.decide.authorization import AccessPolicy
from looproom.events import Event
from looproom.relay.decision import Decision
from looproom.room.memory import Memory
from looproom.settings.attention import parse

ITEM = "github:acme/api#7"
DECIDERS = frozenset({"U0DEC1", "U0DEC2"})


class Told:
    def __init__(self) -> None:
        self.opened: list[Ask] = []
        self.closed: list[Ask] = []


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(tmp_path: Path, attention: dict | None = None, people: dict | None = None):
    errors: list[str] = []
    settings = parse(attention, errors)
    assert errors == []
    store: dict = {}
    owners = Owners(store, people or {})
    policy = AccessPolicy("UBOT", DECIDERS, collaborators=frozenset({"U0COL"}))
    told, clock = Told(), Clock()
    feed = Feed(
        sqlite_asks(tmp_path / "asks.sqlite3"),
        Whom(settings, lambda: policy, owners),
        clock=clock,
    )
    feed.told.opened = told.opened.append  # type: ignore[method-assign]
    feed.told.closed = told.closed.append  # type: ignore[method-assign]
    return feed, Memory(store), told, clock


def shown(feed: Feed, memory: Memory, event: Event, ts: str) -> None:
    feed.observed_event(event, memory.observe(event, "C1", ts, "0.1"))


GATE = Event("phase-approval-pending", ITEM, id="g1", detail={"node": "design"})
QUESTION = Event("session.awaiting_input", ITEM, id="q1", text="Which database?")


def answer(memory: Memory, feed: Feed, kind: str, member: str, origin: str) -> None:
    memory.settle(ITEM, kind, member, "10:00")
    channel = origin.split(":")[0]
    decision = Decision("approve", ITEM, member, origin, "t", channel=channel)
    feed.decided(decision, memory.get(ITEM))


def test_a_gate_asks_the_deciders_and_its_answer_closes_it_with_who_and_how(
    tmp_path: Path,
) -> None:
    feed, memory, told, clock = make(tmp_path)
    shown(feed, memory, GATE, "2.0")
    [ask] = told.opened
    assert (ask.kind, ask.channel, ask.ts, ask.asked, ask.basis) == (
        "gate",
        "C1",
        "2.0",
        ("U0DEC1", "U0DEC2"),
        "deciders",
    )
    shown(feed, memory, GATE, "2.0")  # told again (a redelivery): nothing new
    assert len(told.opened) == 1
    clock.now += 90
    answer(memory, feed, "gate", "U0DEC2", "C1:2.0:approve")
    [closed] = told.closed
    assert (closed.outcome, closed.answered_by, closed.answered_how) == (
        ANSWERED,
        "U0DEC2",
        BUTTON,
    )
    assert closed.waited(now=0) == 90


@pytest.mark.parametrize(("origin", "how"), [("D9:3.0:approve", DM), ("C1:3.0", TYPED)])
def test_how_an_answer_came_is_kept(tmp_path: Path, origin: str, how: str) -> None:
    feed, memory, told, _ = make(tmp_path)
    shown(feed, memory, GATE, "2.0")
    answer(memory, feed, "gate", "U0DEC1", origin)
    assert told.closed[0].answered_how == how


def test_a_question_asks_the_collaborators_too(tmp_path: Path) -> None:
    feed, memory, told, _ = make(tmp_path)
    shown(feed, memory, QUESTION, "3.0")
    assert told.opened[0].asked == ("U0DEC1", "U0DEC2", "U0COL")


def test_the_owner_is_asked_alone_where_the_room_knows_one(tmp_path: Path) -> None:
    feed, memory, told, _ = make(tmp_path, people={"U0DEC2": "octocat"})
    owned = Event("work-item.started", ITEM, id="s", actor={"ids": {"github": "OctoCat"}})
    shown(feed, memory, owned, "1.0")
    shown(feed, memory, GATE, "2.0")
    assert (told.opened[0].asked, told.opened[0].basis) == (("U0DEC2",), "owner")


def test_an_owner_who_may_not_answer_is_not_asked_and_deciders_is_per_room(
    tmp_path: Path,
) -> None:
    stranger = Event("x", ITEM, id="s", actor={"ids": {"slack": "U0STRANGER"}})
    feed, memory, told, _ = make(tmp_path)
    shown(feed, memory, stranger, "1.0")
    shown(feed, memory, GATE, "2.0")
    assert told.opened[0].asked == ("U0DEC1", "U0DEC2")
    feed, memory, told, _ = make(tmp_path / "b", {"rooms": {"C1": {"ask": "deciders"}}})
    owner = Event("x", ITEM, id="s", actor={"ids": {"slack": "U0DEC1"}})
    shown(feed, memory, owner, "1.0")
    shown(feed, memory, GATE, "2.0")
    assert told.opened[0].basis == "deciders"


def test_a_gate_the_work_item_moved_past_closes_without_an_answer(tmp_path: Path) -> None:
    feed, memory, told, _ = make(tmp_path)
    shown(feed, memory, GATE, "2.0")
    shown(feed, memory, Event("phase.started", ITEM, id="p", detail={"node": "build"}), "4.0")
    [closed] = told.closed
    assert (closed.outcome, closed.answered_by) == (MOVED_ON, "")
    assert feed.asks.open_asks() == []


def test_an_answer_the_relay_gave_up_on_waits_again(tmp_path: Path) -> None:
    feed, memory, told, _ = make(tmp_path)
    shown(feed, memory, GATE, "2.0")
    answer(memory, feed, "gate", "U0DEC1", "C1:2.0:approve")
    memory.reopen(ITEM, "gate")
    feed.observed(ITEM, memory.get(ITEM))
    assert [a.id for a in feed.asks.open_asks()] == [told.opened[0].id]


def test_on_a_plain_chat_each_question_is_an_ask_of_its_own(tmp_path: Path) -> None:
    feed, memory, told, clock = make(tmp_path)

    def plain(event: Event) -> None:  # a plain backend's message has no channel or ts
        feed.observed_event(event, memory.observe(event))

    plain(QUESTION)
    plain(QUESTION)  # told again: the same ask
    assert len(told.opened) == 1
    clock.now += 30
    memory.settle(ITEM, "ask", "U0DEC1", "10:00")
    feed.decided(Decision("answer", ITEM, "U0DEC1", "plain:1", "t"), memory.get(ITEM))
    clock.now += 30
    plain(Event("session.awaiting_input", ITEM, id="q2", text="And the cache?"))
    first, second = feed.asks.of_item(ITEM)
    assert (first.outcome, first.answered_by, first.waited(0)) == (ANSWERED, "U0DEC1", 30)
    assert second.is_open and second.opened == first.opened + 60


STEPS = st.lists(
    st.sampled_from(["gate", "question", "answer-gate", "answer-question", "move", "again"]),
    max_size=12,
)


@given(steps=STEPS)
def test_every_ask_is_opened_once_and_closed_at_most_once(tmp_path_factory, steps) -> None:
    feed, memory, told, clock = make(tmp_path_factory.mktemp("feed"))
    for seq, step in enumerate(steps, start=1):
        clock.now += 1
        if step == "gate":
            shown(feed, memory, GATE, f"{seq}.0")
        elif step == "question":
            shown(feed, memory, QUESTION, f"{seq}.0")
        elif step.startswith("answer-"):
            kind = "gate" if step.endswith("gate") else "ask"
            answer(memory, feed, kind, "U0DEC1", f"C1:{seq}.0")
        elif step == "move":
            event = Event("phase.completed", ITEM, id=f"m{seq}", detail={"node": "design"})
            shown(feed, memory, event, f"{seq}.0")
        else:
            feed.observed(ITEM, memory.get(ITEM))
    opened = [a.id for a in told.opened]
    closed = [a.id for a in told.closed]
    assert len(opened) == len(set(opened)) and len(closed) == len(set(closed))
    assert set(closed) <= set(opened)
    still = {a.id for a in feed.asks.open_asks()}
    assert still == set(opened) - set(closed)
    waiting = open_questions(memory.get(ITEM))
    assert still == {ask_id(ITEM, q.kind, q.channel, q.ts) for q, _w, _a in waiting}
    assert all(a.answered_by in ("", "U0DEC1") for a in told.closed)
