"""Every way in names only the operator's work items: a thread, a ``!verb``, a DM, a group
DM and a room that hears everything each refuse a work item of a repository nobody
configured — before anything is recorded, telling the member which and why — and still
take what they took before (the end-to-end twins: ``tests/e2e/test_bounds_e2e.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from looproom.assembly import Activation
from looproom.catchup.listen_modes import ALL
from looproom.events import Event
from looproom.relay import forms
from looproom.settings import Settings
from tests.support.rooms import plain_room

ITEM, FOREIGN = "github:acme/api#7", "github:victim-org/payroll#1"
ALICE, CAROL, BOT = "U0ALICE01", "U0CAROL01", "U0THELOOP"
THREAD = "100.0"


class Rig:
    def __init__(self, room: Activation, told: list[tuple[str, str]]) -> None:
        self.room, self.told = room, told
        self._ts = 200

    def say(self, member: str, text: str, channel: str, thread: str = "", **kw: bool) -> None:
        self._ts += 1
        event = {"channel": channel, "ts": f"{self._ts}.0", "text": text, "user": member}
        if thread:
            event["thread_ts"] = thread
        self.room.decisions.listener.said(
            member, text, event, elsewhere=channel, addressed=kw.get("addressed", False)
        )

    def recorded(self) -> list[tuple[str, str]]:
        decisions = [forms.decision_of(i.payload) for i in self.room.decisions.relay.queue.list()]
        return [(d.kind, d.work_item) for d in decisions]

    def refused(self, ref: str = FOREIGN) -> bool:
        return any(f"`{ref}` is not a work item of this room" in text for _to, text in self.told)


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    settings = Settings(
        authorized_users=frozenset({ALICE}),
        collaborators=frozenset({CAROL}),
        channel="C1",
        rooms=(("acme/*", "C1"),),
    )
    told: list[tuple[str, str]] = []
    with plain_room(tmp_path, settings, say=lambda to, text: told.append((to, text))) as room:
        event = {"id": "e1", "eventType": "comment.agent", "workItem": ITEM, "text": "Started."}
        room.decisions.desk.memory.observe(Event.from_wire(event), "C1", THREAD, THREAD)
        yield Rig(room, told)


def test_a_decider_naming_a_foreign_work_item_in_a_thread_is_refused(rig: Rig) -> None:
    rig.say(ALICE, f"stop {FOREIGN}", "C1", THREAD)
    assert rig.refused() and rig.recorded() == []
    rig.say(ALICE, "stop", "C1", THREAD)  # the thread's own work item, as before
    assert rig.recorded() == [("stop", ITEM)]


def test_a_bang_verb_naming_a_foreign_work_item_is_refused(rig: Rig) -> None:
    rig.say(ALICE, f"pause {FOREIGN}", "C1", addressed=True)
    rig.say(ALICE, "pause https://github.com/victim-org/payroll/issues/1", "C1", addressed=True)
    assert rig.refused() and rig.recorded() == []
    rig.say(ALICE, "pause acme/web#3", "C1", addressed=True)  # a repository the settings name
    assert rig.recorded() == [("pause", "github:acme/web#3")]


def test_a_dm_naming_a_foreign_work_item_reaches_neither_the_ticket_nor_the_session(
    rig: Rig,
) -> None:
    rig.say(CAROL, f"{FOREIGN} @victim-org/sec-team please look", "D0CAROL01")
    assert rig.refused() and rig.recorded() == []
    rig.say(CAROL, "acme/api#7: use option 2", "D0CAROL01")  # a collaborator's reply, as before
    assert rig.recorded() == [("reply", ITEM)]


def test_a_group_dm_naming_a_foreign_work_item_is_refused(rig: Rig) -> None:
    rig.say(ALICE, f"<@{BOT}> stop {FOREIGN}", "G0GROUP01")
    assert rig.refused() and rig.recorded() == []


def test_a_room_that_hears_everything_refuses_a_foreign_work_item(rig: Rig) -> None:
    rig.room.decisions.listen_all.switch("C2", ALL)
    rig.say(ALICE, f"skip {FOREIGN} design", "C2")
    rig.say(ALICE, f"start {FOREIGN}", "C2")
    assert rig.refused() and rig.recorded() == []
