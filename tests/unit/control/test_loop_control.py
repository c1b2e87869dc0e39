"""``/the-loop status | restart | upgrade | standing …``: each behind its own grant, one
call to the-loop's control plane (its loopback fake), at most once per command."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from the_loop.core import daemons
from the_loop.runlock import RunLock

from looproom.control.loop_control import LoopControl
from looproom.control.plane_choice import Plane, Planes
from looproom.decide.authorization import AccessPolicy
from looproom.loop_log.book import sqlite_records
from looproom.loop_log.channel import ChannelLog
from looproom.settings.grants import INSTANCE, STANDING
from tests.fakes.loop_api import FakeLoop

ALICE, CAROL = "U0ALICE01", "U0CAROL01"
GRANTED = frozenset({INSTANCE, STANDING})


@pytest.fixture
def loop() -> Iterator[FakeLoop]:
    with FakeLoop({"github:acme/api#7": False}) as fake:
        fake.standing = {"triage": True, "nightly": False}
        yield fake


def control(loop: FakeLoop, granted: frozenset[str] = GRANTED, **kw: Any) -> LoopControl:
    policy = AccessPolicy(
        "UBOT", frozenset({ALICE}), collaborators=frozenset({CAROL}), granted=granted
    )
    links = {"standing:triage": "https://slack.com/archives/C1/p100"}
    return LoopControl(
        loop.url,
        lambda: policy,
        kw.get("store", {}),
        lambda r: links.get(r, ""),
        split=kw.get("split", lambda: ""),
        records=kw.get("records"),
    )


def test_status_names_the_instance_and_what_it_manages(loop: FakeLoop) -> None:
    text = control(loop).instance_status(ALICE)
    assert "`loop-one`" in text and "manages 1 work item(s)" in text
    assert "`github:acme/api#7`" in text


def test_status_says_each_service_as_the_loops_own_status_does(
    loop: FakeLoop, tmp_path: Path
) -> None:
    """Each service running with its pid, or stopped though enabled and why, or disabled;
    whether the instance is ok; its state root; its standing sessions — the facts the-loop
    serves, read over its state by its own lifecycle code."""
    config = {
        "state": {"root": str(tmp_path / "state")},
        "polling": {"enabled": True},
        "webhooks": {"ghWebhook": {"enabled": True}},
    }
    loop.loop_config = config
    poller = RunLock(daemons._pidfile("poller", config), name="poller")
    assert poller.acquire()
    try:
        text = control(loop, split=lambda: "split check (09:00 UTC): ok — 2/2").instance_status(
            ALICE
        )
    finally:
        poller.release()
    assert "`loop-one` (mode: open) · not ok (an enabled service is down)" in text
    assert f"• poller: running (pid {os.getpid()})" in text
    assert "• gh-webhook: stopped (enabled) — webhooks.ghWebhook.enabled is true" in text
    assert "• slack-listener: disabled" in text
    assert f"• state: `{tmp_path / 'state'}`" in text
    assert "• standing: nightly stopped · triage running" in text
    assert text.endswith("• slack (this bot's listener): split check (09:00 UTC): ok — 2/2")


def test_a_the_loop_without_the_lifecycle_routes_still_names_the_instance(
    loop: FakeLoop,
) -> None:
    text = control(loop).instance_status(ALICE)  # no config: no /daemons, a bare /health
    assert "`loop-one` (mode: open) · ok" in text and "• standing: nightly stopped" in text


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
    policy = AccessPolicy("UBOT", frozenset({ALICE}), granted=GRANTED)
    room = LoopControl(url, lambda: policy, {}, lambda _r: "")
    assert "cannot be reached" in room.restart(ALICE, "t1", upgrade=False)
    assert "cannot be reached" in room.instance_status(ALICE)


# -- many instances (``instances:``): the command names one, or the room's owner ------------


@pytest.fixture
def two() -> Iterator[tuple[FakeLoop, FakeLoop]]:
    with FakeLoop({"github:acme/api#7": False}) as a, FakeLoop({"github:beta/web#3": False}) as b:
        a.name, b.name = "loop-a", "loop-b"
        a.standing, b.standing = {"triage": True}, {"nightly": False}
        yield a, b  # type: ignore[misc]


def fleet(two: tuple[FakeLoop, FakeLoop], store: dict[str, Any] | None = None) -> LoopControl:
    a, b = two
    owners = {"github:acme/api#7": "team-a", "github:beta/web": "team-b"}
    planes = Planes(
        [Plane("team-a", a.url), Plane("team-b", b.url, "token-of-b")],
        lambda ref: owners.get(ref, ""),
    )
    policy = AccessPolicy("UBOT", frozenset({ALICE}), granted=GRANTED)
    return LoopControl(planes, lambda: policy, store if store is not None else {}, lambda _r: "")


def test_status_shows_each_instance_by_name_or_the_one_named(
    two: tuple[FakeLoop, FakeLoop],
) -> None:
    room = fleet(two)
    both = room.instance_status(ALICE)
    assert "*team-a* · *the-loop instance* `loop-a`" in both
    assert "*team-b* · *the-loop instance* `loop-b`" in both
    only_b = room.instance_status(ALICE, "team-b")
    assert "`loop-b`" in only_b and "loop-a" not in only_b
    assert two[1].requests[-1].headers["Authorization"] == "Bearer token-of-b"
    assert "Authorization" not in two[0].requests[-1].headers  # team-a has no token


def test_a_restart_goes_to_the_instance_named_or_the_rooms_never_guessed(
    two: tuple[FakeLoop, FakeLoop],
) -> None:
    a, b = two
    room = fleet(two)
    asked = room.restart(ALICE, "t1", upgrade=False)
    assert "name the-loop instance as the last word — one of `team-a`, `team-b`" in asked
    assert a.restarts == b.restarts == []  # two instances and no telling: nothing sent
    assert "*team-b* · the-loop scheduled its upgrade" in room.restart(
        ALICE, "t2", upgrade=True, name="team-b"
    )
    assert b.restarts == [{"withUpgrade": True}] and a.restarts == []
    # In a room bound to one of A's work items, A is meant.
    assert "*team-a*" in room.restart(ALICE, "t3", upgrade=False, context=["github:acme/api#7"])
    # In a room of one of B's repositories, B.
    assert "*team-b*" in room.restart(ALICE, "t4", upgrade=False, context=["github:beta/web"])
    assert a.restarts == [{"withUpgrade": False}] and len(b.restarts) == 2
    assert "`zed` is not an instance" in room.restart(ALICE, "t5", upgrade=False, name="zed")


def test_one_trigger_restarts_each_instance_at_most_once(two: tuple[FakeLoop, FakeLoop]) -> None:
    store: dict[str, Any] = {}
    assert "scheduled" in fleet(two, store).restart(ALICE, "t1", upgrade=False, name="team-a")
    again = fleet(two, store)  # Slack delivered it again, after a restart of the bot
    assert "asked already" in again.restart(ALICE, "t1", upgrade=False, name="team-a")
    assert len(two[0].restarts) == 1


def test_standing_names_its_instance_last_and_list_shows_every_instance(
    two: tuple[FakeLoop, FakeLoop],
) -> None:
    a, b = two
    room = fleet(two)
    listed = room.standing(ALICE, "list", "t1")
    assert "*team-a* · *Standing sessions*" in listed and "`triage`: running" in listed
    assert "*team-b* · *Standing sessions*" in listed and "`nightly`: stopped" in listed
    only_a = room.standing(ALICE, "list team-a", "t2")
    assert "`triage`" in only_a and "nightly" not in only_a
    assert "name the-loop instance" in room.standing(ALICE, "start nightly", "t3")
    assert "*team-b* · *Standing sessions*\n• `nightly`: started" in room.standing(
        ALICE, "start nightly team-b", "t4"
    )
    assert b.standing == {"nightly": True} and a.standing == {"triage": True}
    assert "takes nothing more than the instance" in room.standing(ALICE, "list x y", "t5")


def test_the_grant_is_asked_before_any_instance_is_chosen(two: tuple[FakeLoop, FakeLoop]) -> None:
    a, b = two
    planes = Planes([Plane("team-a", a.url), Plane("team-b", b.url)])
    narrow = AccessPolicy("UBOT", frozenset({ALICE}), granted=frozenset())
    room = LoopControl(planes, lambda: narrow, {}, lambda _r: "")
    assert "`instance.command`" in room.restart(ALICE, "t1", upgrade=False, name="team-a")
    assert "`standing.command`" in room.standing(ALICE, "list team-b", "t2")
    assert a.requests == [] and b.requests == []


def test_each_command_sent_and_refused_is_kept_as_the_loops_own_slash_command_records_it(
    loop: FakeLoop, tmp_path: Path
) -> None:
    """`channel.command_received` and `channel.command_completed` for what reached the-loop
    (once per command, however often Slack redelivers it); `channel.dropped` for who may not."""
    records = sqlite_records(tmp_path / "records.sqlite3")
    room = control(loop, records=ChannelLog(records))
    room.restart(ALICE, "t1", upgrade=True)
    room.restart(ALICE, "t1", upgrade=True)  # redelivered: asked already, kept once
    room.standing(ALICE, "restart ghost", "t2")  # the-loop answers 404
    room.restart(CAROL, "t3", upgrade=False)  # not granted
    kept = [(r["event"], r["fields"]) for r in records.since(0).records]
    common = {"channel": "slack", "actor": ALICE}
    assert kept == [
        ("channel.command_received", {**common, "family": "instance", "verb": "upgrade"}),
        (
            "channel.command_completed",
            {**common, "family": "instance", "verb": "upgrade", "outcome": "ok"},
        ),
        (
            "channel.command_received",
            {**common, "family": "standing", "verb": "restart", "standing": "ghost"},
        ),
        (
            "channel.command_completed",
            {
                **common,
                "family": "standing",
                "verb": "restart",
                "standing": "ghost",
                "outcome": "failed",
            },
        ),
        ("channel.dropped", {"channel": "slack", "reason": "unauthorized-actor", "actor": CAROL}),
    ]
