"""``/the-loop status | restart | upgrade | standing …``: each behind its own grant, one
call to the-loop's control plane (its loopback fake), at most once per command."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from looproom.decide.authorization import INSTANCE, STANDING, Policy
from looproom.decide.loop_control import LoopControl
from tests.fakes.loop_api import FakeLoop

ALICE, CAROL = "U0ALICE01", "U0CAROL01"
GRANTED = frozenset({INSTANCE, STANDING})


@pytest.fixture
def loop() -> Iterator[FakeLoop]:
    with FakeLoop({"github:acme/api#7": False}) as fake:
        fake.standing = {"triage": True, "nightly": False}
        yield fake


def control(loop: FakeLoop, granted: frozenset[str] = GRANTED, **kw: Any) -> LoopControl:
    policy = Policy("UBOT", frozenset({ALICE}), collaborators=frozenset({CAROL}), granted=granted)
    links = {"standing:triage": "https://slack.com/archives/C1/p100"}
    return LoopControl(loop.url, lambda: policy, kw.get("store", {}), lambda r: links.get(r, ""))


def test_status_names_the_instance_and_what_it_manages(loop: FakeLoop) -> None:
    text = control(loop).instance_status(ALICE)
    assert "`loop-one`" in text and "manages 1 work item(s)" in text
    assert "`github:acme/api#7`" in text


def test_each_family_is_refused_with_the_reason_where_it_is_not_granted(loop: FakeLoop) -> None:
    narrow = control(loop, granted=frozenset())
    assert "`instance.command`" in narrow.restart(ALICE, "t1", upgrade=False)
    assert "`standing.command`" in narrow.standing(ALICE, "list", "t2")
    assert "`instance.command`" in narrow.instance_status(ALICE)
    # A collaborator never steers the-loop, granted room or not.
    assert "`instance.command`" in control(loop).restart(CAROL, "t3", upgrade=True)
    assert loop.restarts == []


def test_restart_and_upgrade_are_asked_once_per_command(loop: FakeLoop) -> None:
    store: dict[str, Any] = {}
    room = control(loop, store=store)
    assert "scheduled its restart (pid 4242)" in room.restart(ALICE, "t1", upgrade=False)
    assert "asked already" in room.restart(ALICE, "t1", upgrade=False)  # Slack redelivered
    again = control(loop, store=store)  # after a restart of the bot, too
    assert "asked already" in again.restart(ALICE, "t1", upgrade=False)
    assert "scheduled its upgrade" in room.restart(ALICE, "t2", upgrade=True)
    assert loop.restarts == [{"withUpgrade": False}, {"withUpgrade": True}]


def test_standing_list_shows_each_session_and_its_thread(loop: FakeLoop) -> None:
    text = control(loop).standing(ALICE, "list", "t1")
    assert "• `nightly`: stopped (declared)" in text
    assert "• `triage`: running (declared) — <https://slack.com/archives/C1/p100|its thread>" in (
        text
    )


def test_standing_start_stop_restart_and_what_the_loop_refuses(loop: FakeLoop) -> None:
    room = control(loop)
    assert "`nightly`: started" in room.standing(ALICE, "start nightly", "t1")
    assert loop.standing["nightly"] is True
    assert "`nightly`: stopped" in room.standing(ALICE, "stop nightly", "t2")
    assert "answered 404" in room.standing(ALICE, "restart ghost", "t3")
    assert "one session name" in room.standing(ALICE, "start Not_A_Name", "t4")
    assert "takes a verb" in room.standing(ALICE, "delete triage", "t5")


def test_an_unreachable_loop_is_said_never_taken_for_a_success() -> None:
    with FakeLoop() as gone:
        url = gone.url
    policy = Policy("UBOT", frozenset({ALICE}), granted=GRANTED)
    room = LoopControl(url, lambda: policy, {}, lambda _r: "")
    assert "cannot be reached" in room.restart(ALICE, "t1", upgrade=False)
    assert "cannot be reached" in room.instance_status(ALICE)
