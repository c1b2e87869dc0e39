"""The decision desk: judge → store → acknowledge, atomically; refusals go
to the member alone; an unauthorized attempt also gets ⚠️ and a log line."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from looproom.decide.authorization import AccessPolicy
from looproom.decide.desk import Desk, Reopening, room_facts
from looproom.decide.judging import Received
from looproom.decide.verdict import ADMITTED, REFUSED
from looproom.durable.queue import DurableQueue
from looproom.events import Event
from looproom.relay import relay
from looproom.relay.decision import Decision
from looproom.relay.sinks import LedgerSink, Sinks
from looproom.room import buttons
from looproom.room.memory import Memory
from tests.support.corpus import MESSAGES

ITEM, ALICE, MALLORY = "github:acme/api#7", "U0ALICE01", "U0MALLORY"


@dataclass
class Room:
    said: list[tuple[Any, ...]] = field(default_factory=list)

    def react(self, channel: str, ts: str, name: str) -> None:
        self.said.append(("react", ts, name))

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self.said.append(("reply", thread_ts, text))

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self.said.append(("tell", member, text))

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self.said.append(("update", ts, blocks))

    def of(self, kind: str) -> list[tuple[Any, ...]]:
        return [s for s in self.said if s[0] == kind]


def event(name: str) -> Event:
    raw = json.loads(next(MESSAGES.glob(f"{name}-*.json")).read_text("utf-8"))
    raw.pop("origin", None)
    return Event.from_wire({**raw, "workItem": ITEM})


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    queue = DurableQueue(tmp_path / "q.sqlite3", relay.RELAY)
    room = Room()
    the_relay = relay.Relay(queue, Sinks(LedgerSink(tmp_path / "l.jsonl")), room)
    memory = Memory({})
    memory.observe(event("01"), "C1", "100.0", thread_ts="50.0")
    memory.observe(event("06"), "C1", "200.0", thread_ts="50.0")
    memory.observe(event("15"), "C1", "300.0", thread_ts="50.0")
    return Desk(memory, the_relay, room, lambda: AccessPolicy("U0THELOOP", frozenset({ALICE})))


def press(action_id: str, ts: str, member: str = ALICE) -> dict[str, Any]:
    return {
        "type": "block_actions",
        "user": {"id": member},
        "channel": {"id": "C1"},
        "message": {"ts": ts, "thread_ts": "50.0", "text": "gate", "blocks": []},
        "actions": [{"action_id": action_id, "value": "approve"}],
    }


def test_a_typed_approval_is_stored_then_eyed_and_settles_the_gate(desk: Desk) -> None:
    said = Received(ALICE, "approve", "C1", "201.0", thread_ts="50.0")
    verdict = desk.said(said, desk.where("C1", "50.0"))
    assert verdict.status == ADMITTED and desk.relay.queue.depth() == 1
    assert desk.room.of("react") == [("react", "201.0", "eyes")]  # type: ignore[attr-defined]
    assert desk.memory.get(ITEM).gate.answered_by == ALICE  # type: ignore[union-attr]
    again = desk.pressed(press(buttons.APPROVE, "200.0"))
    assert again is not None and again.reason == "already-answered"
    assert desk.relay.queue.depth() == 1


def test_a_slack_redelivery_of_the_same_message_is_not_recorded_twice(desk: Desk) -> None:
    said = Received(ALICE, "go with option 1", "C1", "301.0", thread_ts="300.0")
    assert desk.said(said, desk.where("C1", "300.0")).status == ADMITTED
    desk.memory.reopen(ITEM, "ask")  # even if the question were open again
    verdict = desk.said(said, desk.where("C1", "300.0"))
    assert verdict.reason == "duplicate" and desk.relay.queue.depth() == 1


def test_an_unauthorized_attempt_gets_a_refusal_a_warning_and_a_log_line(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="looproom.decide.desk")
    said = Received(MALLORY, "approve", "C1", "202.0", thread_ts="50.0")
    verdict = desk.said(said, desk.where("C1", "50.0"))
    assert verdict.status == REFUSED and desk.relay.queue.depth() == 0
    assert ("react", "202.0", "warning") in desk.room.said  # type: ignore[attr-defined]
    ((_, member, text),) = desk.room.of("tell")  # type: ignore[attr-defined]
    assert member == MALLORY and "slack.authorizedUsers" in text
    assert any(r.levelno == logging.WARNING and MALLORY in r.getMessage() for r in caplog.records)


def test_a_press_updates_the_message_in_place_and_a_second_press_relays_nothing(desk: Desk) -> None:
    first = desk.pressed(press(buttons.APPROVE, "200.0"))
    assert first is not None and first.status == ADMITTED
    ((_, ts, blocks),) = desk.room.of("update")  # type: ignore[attr-defined]
    assert ts == "200.0" and "pressed by <@U0ALICE01>" in blocks[-1]["elements"][0]["text"]
    second = desk.pressed(press(buttons.APPROVE, "200.0"))
    assert second is not None and second.status == REFUSED
    assert desk.relay.queue.depth() == 1 and len(desk.room.of("update")) == 1  # type: ignore[attr-defined]


def test_a_press_is_told_taken_once_stored_before_the_room_answers_it(desk: Desk) -> None:
    room: Room = desk.room  # type: ignore[assignment]

    def answered() -> int:
        return len(room.of("update")) + len(room.of("tell"))

    seen: list[tuple[int, int]] = []  # (decisions stored, the room's answers) when told
    desk.pressed(
        press(buttons.APPROVE, "200.0"),
        lambda: seen.append((desk.relay.queue.depth(), answered())),
    )
    assert seen == [(1, 0)] and answered() == 1
    refused: list[int] = []
    desk.pressed(press(buttons.APPROVE, "200.0"), lambda: refused.append(answered()))
    assert refused == [1] and answered() == 2  # told before the member hears why not


def test_a_given_up_relay_reopens_the_question(desk: Desk) -> None:
    verdict = desk.pressed(press(buttons.APPROVE, "200.0"))
    assert verdict is not None and verdict.decision is not None
    taken_back: list[Decision] = []
    Reopening(desk.memory, taken_back.append).given_up(verdict.decision)  # the relay parked it
    assert desk.memory.get(ITEM).gate.answered_by == ""  # type: ignore[union-attr]
    assert taken_back == [verdict.decision]


def test_a_room_bound_to_one_work_item_or_repository_needs_no_reference() -> None:
    ids = {"#api-loop": "C1", "#all": "C2"}.get
    bindings = {ITEM: "#api-loop", "github:acme/web#1": "#all", "github:acme/web#2": "#all"}
    rooms = (("acme/api", "#api-loop"), ("acme/*", "#all"))
    assert room_facts("C1", bindings, rooms, lambda r: ids(r, r)) == (ITEM, "acme/api")
    assert room_facts("C2", bindings, rooms, lambda r: ids(r, r)) == ("", "")


@pytest.mark.parametrize(
    "named", ["github:ACME/api#7", "github:Acme/API#7", "https://github.com/acme/API/issues/7"]
)
def test_a_work_item_named_in_another_letter_case_is_the_one_the_room_was_shown(
    desk: Desk, named: str
) -> None:
    """A member types the work item as it reads on their screen; GitHub's names ignore
    letter case, so it is the same work item: admitted, and its gate settled, not a second
    empty one refused as foreign or answered twice."""
    said = Received(ALICE, f"approve {named}", "C2", "401.0")
    verdict = desk.said(said, desk.where("C2", ""))
    assert verdict.status == ADMITTED, verdict
    assert verdict.decision is not None and verdict.decision.work_item == ITEM
    assert desk.memory.get(ITEM).gate.answered_by == ALICE  # type: ignore[union-attr]
    again = desk.said(Received(ALICE, f"approve {ITEM}", "C2", "402.0"), desk.where("C2", ""))
    assert again.reason == "already-answered" and desk.relay.queue.depth() == 1
