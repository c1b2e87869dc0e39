"""``restart``, ``upgrade`` and ``standing …`` remember the commands they sent as far as
`docs/decisions.md` says: the last 1 000. A redelivery of the oldest of 1 000 restarts
nothing; once 1 001 were sent it is forgotten, and a redelivery that late is sent again.
The 998 or 999 commands between are put in the store directly (as the claim writes them);
the first and the last go through the control plane's loopback fake."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from looproom.control.loop_control import LoopControl
from looproom.decide.authorization import AccessPolicy
from looproom.settings.grants import INSTANCE, STANDING
from tests.fakes.loop_api import FakeLoop

ALICE, DOCUMENTED = "U0ALICE01", 1000


@pytest.fixture
def loop() -> Iterator[FakeLoop]:
    with FakeLoop({"github:acme/api#7": False}) as fake:
        yield fake


def _sent(loop: FakeLoop, count: int) -> LoopControl:
    """A control that sent ``count`` commands: ``first`` the oldest, ``last`` the newest."""
    policy = AccessPolicy("UBOT", frozenset({ALICE}), granted=frozenset({INSTANCE, STANDING}))
    store: dict[str, Any] = {}
    room = LoopControl(loop.url, lambda: policy, store, lambda _r: "")
    assert "scheduled its restart" in room.restart(ALICE, "first", upgrade=False)
    ((key, claims),) = ((k, v) for k, v in store.items() if isinstance(v, dict))
    (value,) = claims.values()
    store[key] = {**claims, **{f"restart:between-{n}": value for n in range(count - 2)}}
    assert "scheduled its restart" in room.restart(ALICE, "last", upgrade=False)
    return room


def test_the_oldest_of_1000_commands_is_still_not_sent_twice(loop: FakeLoop) -> None:
    room = _sent(loop, DOCUMENTED)
    assert "asked already" in room.restart(ALICE, "first", upgrade=False)
    assert len(loop.restarts) == 2


def test_past_1000_the_oldest_is_forgotten_and_a_redelivery_that_late_is_sent(
    loop: FakeLoop,
) -> None:
    room = _sent(loop, DOCUMENTED + 1)
    assert "scheduled its restart" in room.restart(ALICE, "first", upgrade=False)
    assert "asked already" in room.restart(ALICE, "last", upgrade=False)
    assert len(loop.restarts) == 3
