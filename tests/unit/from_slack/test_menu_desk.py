"""The desk's side of talking: record-context reads the thread once, and the forms act as
the typed words do.

A context record reads the thread since its last record and refuses when nothing new was
said, when the thread cannot be read, or when there is no thread; the **Request changes**
press opens a form instead of a hint, and its submission is the typed ``changes <why>``,
authorized and recorded once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from looproom.decide import kinds, talk
from looproom.decide.authorization import AccessPolicy
from looproom.decide.desk import Desk
from looproom.decide.judging import Received
from looproom.decide.verdict import ADMITTED, REFUSED
from looproom.durable.queue import DurableQueue
from looproom.from_slack import modals, shortcuts
from looproom.from_slack.context_requests import ContextRequest, ContextRequests
from looproom.from_slack.menu_desk import MenuDesk, WhyForm
from looproom.loop_log.book import sqlite_records
from looproom.relay import forms, relay
from looproom.relay.decision import Decision
from looproom.relay.sinks import LedgerSink, Sinks
from looproom.room import buttons
from looproom.room.memory import Memory
from tests.support.wait import wait_for
from tests.unit.decide.test_desk import ALICE, MALLORY, Room, event, press

LINES = [
    talk.ThreadMessage("51.0", ALICE, "we keep v1"),
    talk.ThreadMessage("52.0", MALLORY, "agreed"),
]


class Views:
    def __init__(self) -> None:
        self.opened: list[tuple[str, Mapping[str, Any]]] = []

    def __call__(self, trigger: str, view: Mapping[str, Any]) -> bool:
        self.opened.append((trigger, view))
        return True


@pytest.fixture
def lines() -> list[talk.ThreadMessage] | None:
    return list(LINES)


PATIENCE = 20.0  # a bound on waiting for the deferred read, never a measure


def _desk(tmp_path: Path, thread_lines: Any) -> Desk:
    queue = DurableQueue(tmp_path / "q.sqlite3", relay.RELAY)
    room = Room()
    the_relay = relay.Relay(queue, Sinks(LedgerSink(tmp_path / "l.jsonl")), room)
    memory = Memory({})
    memory.observe(event("06"), "C1", "200.0", thread_ts="50.0")
    policy = AccessPolicy("U0THELOOP", frozenset({ALICE}))
    return Desk(memory, the_relay, room, lambda: policy, thread_lines=thread_lines)


@pytest.fixture
def desk(tmp_path: Path, lines: list[talk.ThreadMessage] | None) -> Desk:
    return _desk(tmp_path, lambda _c, _t: lines)


def stored(desk: Desk) -> list[dict[str, Any]]:
    return [json.loads(item.payload)["decision"] for item in desk.relay.queue.list()]


def record_context(desk: Desk, ts: str, thread: str = "50.0") -> Any:
    said = Received(ALICE, "record-context", "C1", ts, thread_ts=thread)
    return desk.said(said, desk.where("C1", thread))


def test_context_goes_once_and_a_second_record_with_nothing_new_is_refused(desk: Desk) -> None:
    first = record_context(desk, "53.0")
    assert first.status == ADMITTED
    (decision,) = stored(desk)
    link = "https://slack.com/archives/C1/p{}?thread_ts=50.0&cid=C1"
    assert decision["count"] == 2 and decision["words"] == (
        f"{talk.CONTEXT_FRAME}\n\n"
        f"**@{ALICE}** (<@{ALICE}>, decider, 00:00 UTC, {link.format(510)}):\n> we keep v1\n\n"
        f"**@{MALLORY}** (<@{MALLORY}>, no role on this work item, 00:00 UTC, "
        f"{link.format(520)}):\n> agreed"
    )
    again = record_context(desk, "54.0")
    assert again.status == REFUSED and again.reason == "no-new-context"
    assert len(stored(desk)) == 1


@pytest.mark.parametrize("lines", [None])
def test_a_thread_that_cannot_be_read_records_nothing(desk: Desk) -> None:
    verdict = record_context(desk, "53.0")
    assert verdict.reason == "thread-unreadable" and stored(desk) == []


def test_record_context_without_a_thread_says_where_to_say_it(desk: Desk) -> None:
    said = Received(ALICE, "record-context", "C1", "", origin="slash:T1")
    verdict = desk.said(said, desk.where("C1", "50.0"))
    assert verdict.reason == "no-thread" and stored(desk) == []


def test_request_changes_asks_the_reason_and_the_answer_is_the_typed_change_request(
    desk: Desk,
) -> None:
    views = Views()
    desk = Desk(
        desk.memory, desk.relay, desk.room, desk._policy, ask_why=WhyForm(desk.memory, views)
    )
    talking = MenuDesk(desk, views, desk._policy)
    verdict = desk.pressed({**press(buttons.CHANGES, "200.0"), "trigger_id": "T1"})
    assert verdict is not None and verdict.reason == "changes-without-reason"
    assert desk.room.of("tell") == []  # type: ignore[attr-defined]
    ((trigger, view),) = views.opened
    assert trigger == "T1" and view["callback_id"] == modals.CHANGES_VIEW
    values = {"why": {"why": {"type": "plain_text_input", "value": "rename the flag"}}}
    submitted = {
        "type": "view_submission",
        "user": {"id": ALICE},
        "view": {**view, "id": "V1", "state": {"values": values}},
    }
    assert talking.interactive(submitted) and talking.interactive(submitted)  # sent twice
    (decision,) = stored(desk)
    assert decision["kind"] == kinds.CHANGES and decision["words"] == "rename the flag"
    typed = kinds.target(Decision.from_dict(decision), forms.Destinations())
    assert typed["body"].startswith("changes requested\n\nrename the flag\n\n")


def test_a_stranger_submitting_the_form_is_refused_like_typing_it(desk: Desk) -> None:
    opened = modals.FormOrigin("C1", "50.0", "200.0")
    view = modals.changes_view(opened, "requirements-approval")
    values = {"why": {"why": {"type": "plain_text_input", "value": "no"}}}
    submitted = {
        "type": "view_submission",
        "user": {"id": MALLORY},
        "view": {**view, "id": "V2", "state": {"values": values}},
    }
    assert MenuDesk(desk, Views(), desk._policy).interactive(submitted)
    assert stored(desk) == []
    assert any("slack.authorizedUsers" in s[2] for s in desk.room.of("tell"))  # type: ignore[attr-defined]


def test_a_context_request_stored_before_the_bot_stopped_is_recorded_once_at_start(
    desk: Desk,
) -> None:
    store: dict[str, Any] = {}
    where = desk.where("C1", "50.0")
    asked = ContextRequest(
        "shortcut:trigger-9", ALICE, "C1", "50.0", work_item=where.work_item, thread_bound=True
    )
    # Slack was answered, then the bot stopped before it read the thread.
    assert ContextRequests(store).take(asked)
    restarted = MenuDesk(desk, Views(), desk._policy, store)
    assert restarted.contexts_waiting() == 1
    restarted.resume()
    (decision,) = stored(desk)
    assert decision["kind"] == "context" and decision["count"] == 2
    assert restarted.contexts_waiting() == 0
    restarted.resume()  # started again: nothing waits, nothing more is recorded
    assert len(stored(desk)) == 1
    assert not ContextRequests(store).take(asked)  # and Slack delivering it again is not new


def test_a_shortcut_and_its_form_reach_the_loops_log_once_each_with_ids_not_words(
    desk: Desk, tmp_path: Path
) -> None:
    kept = sqlite_records(tmp_path / "records.sqlite3")
    recording = Desk(desk.memory, desk.relay, desk.room, desk._policy, records=kept)
    views = Views()
    talking = MenuDesk(recording, views, recording._policy)
    shortcut = {
        "type": "message_action",
        "callback_id": shortcuts.RECORD_DECISION,
        "trigger_id": "T7",
        "user": {"id": ALICE},
        "channel": {"id": "C1"},
        "message": {"ts": "51.0", "thread_ts": "50.0", "text": "we keep v1"},
    }
    assert talking.interactive(shortcut) and talking.interactive(shortcut)  # sent twice
    view = views.opened[0][1]
    values = {
        "kind": {"kind": {"type": "static_select", "selected_option": {"value": "tech"}}},
        "what": {"what": {"type": "plain_text_input", "value": "we keep v1"}},
        "why": {"why": {"type": "plain_text_input", "value": "clients pinned it"}},
    }
    submitted = {
        "type": "view_submission",
        "user": {"id": ALICE},
        "view": {**view, "id": "V7", "state": {"values": values}},
    }
    assert talking.interactive(submitted) and talking.interactive(submitted)
    page = [(r["event"], r["fields"]) for r in kept.since(0).records]
    item = desk.memory.locate("C1", "50.0")
    assert page[:2] == [
        (
            "channel.shortcut_received",
            {
                "channel": "slack",
                "work_item": item,
                "actor": ALICE,
                "shortcut": shortcuts.RECORD_DECISION,
            },
        ),
        (
            "channel.view_submitted",
            {"channel": "slack", "work_item": item, "actor": ALICE, "kind": "tech"},
        ),
    ]
    assert [event for event, _ in page].count("channel.view_submitted") == 1
    assert "v1" not in json.dumps(page) and "pinned" not in json.dumps(page)


def test_a_context_with_nothing_new_is_the_loops_snapshot_empty_not_a_drop(
    desk: Desk, tmp_path: Path
) -> None:
    kept = sqlite_records(tmp_path / "records.sqlite3")
    recording = Desk(
        desk.memory,
        desk.relay,
        desk.room,
        desk._policy,
        thread_lines=lambda _c, _t: LINES,
        records=kept,
    )
    assert record_context(recording, "53.0").status == ADMITTED
    assert record_context(recording, "54.0").reason == "no-new-context"
    page = [(r["event"], r["fields"]) for r in kept.since(0).records]
    item = desk.memory.locate("C1", "50.0")
    assert ("channel.reply_received", ALICE) in [(e, f.get("actor")) for e, f in page]
    assert page[-1] == (
        "channel.snapshot_empty",
        {"channel": "slack", "work_item": item, "thread": "50.0", "channel_id": "C1"},
    )
    assert "channel.dropped" not in [event for event, _ in page]


def test_record_context_typed_is_stored_and_its_thread_read_after_the_caller_returns(
    tmp_path: Path, lines: list[talk.ThreadMessage]
) -> None:
    # The thread's read held until let go: the typed message's caller (Slack's event over
    # HTTP) has its answer meanwhile, and the request is stored.
    let_go, reads = threading.Event(), []

    def held_read(_channel: str, _thread: str) -> list[talk.ThreadMessage]:
        reads.append(1)
        let_go.wait(PATIENCE)
        return lines

    store: dict[str, Any] = {}
    desk = _desk(tmp_path, held_read)
    menus = MenuDesk(desk, Views(), desk._policy, store)
    desk._later = menus.later  # as the decision side wires them
    try:
        record_context(desk, "53.0")
        assert menus.contexts_waiting() == 1 and stored(desk) == []
        record_context(desk, "53.0")  # the same message delivered again: taken once
    finally:
        let_go.set()
    wait_for(lambda: menus.contexts_waiting() == 0, PATIENCE, "the thread recorded")
    (decision,) = stored(desk)
    assert decision["kind"] == "context" and decision["count"] == 2 and len(reads) == 1
