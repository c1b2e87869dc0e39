"""Learned claims at their default bound: 50 000 kept, as `docs/configuration.md` and
`docs/webhook.md` say — the 50 000th taken, the 50 001st refused while every kept claim is
in use, and taken in the place of one idle longer than ninety days; and who asked for a
work item nobody routed, kept for the last 5 000.

The 49 999 or 50 000 claims before the edge are put in the store directly (as the book
writes them, each copied from one the book wrote itself); the claims at and past the edge
are asked of the book. The cap is the module's default: nothing is patched.
"""

from __future__ import annotations

from typing import Any

import pytest

from looproom.instances.actors import Askers
from looproom.instances.owners import ClaimsFull, Owners
from looproom.settings.instances import Claims, Instance

DOCUMENTED_CAP = 50_000
DAY = 86_400.0
NOW = 1_000_000_000.0


def instance(name: str) -> Instance:
    return Instance(name, name, (name * 32,), f"http://{name}:1", claims=Claims())


A, B = instance("team-a"), instance("team-b")


def _filled(count: int, used: float) -> dict[str, Any]:
    """A store holding ``count`` claims of team-a, each last used at ``used``."""
    store: dict[str, Any] = {}
    Owners((A, B), store, clock=lambda: used).claim(A, "github:seed/x#0")
    ((key, learned),) = store.items()
    (value,) = learned.values()
    store[key] = {f"github:seed/x#{n}": value for n in range(count)}
    return store


def test_the_fifty_thousandth_learned_claim_is_taken() -> None:
    store = _filled(DOCUMENTED_CAP - 1, NOW - DAY)
    owners = Owners((A, B), store, clock=lambda: NOW)
    assert owners.claim(B, "github:new/y#1") == B
    assert owners.learned_total() == DOCUMENTED_CAP
    assert owners.owner("github:seed/x#0") == A  # nobody's claim given up for it


def test_the_fifty_thousand_and_first_is_refused_while_every_claim_is_in_use() -> None:
    store = _filled(DOCUMENTED_CAP, NOW - DAY)
    owners = Owners((A, B), store, clock=lambda: NOW)
    with pytest.raises(ClaimsFull, match="50000 learned claims"):
        owners.claim(B, "github:new/y#1")
    assert owners.owner("github:new/y#1") is None
    assert owners.learned_total() == DOCUMENTED_CAP
    assert owners.refused["team-b"] == 1


def test_the_fifty_thousand_and_first_takes_the_place_of_a_claim_idle_past_ninety_days() -> None:
    store = _filled(DOCUMENTED_CAP, NOW - DAY)
    idle = _filled(1, NOW - 91 * DAY)
    ((key, learned),) = idle.items()
    store[key] = {**store[key], "github:seed/x#7": learned["github:seed/x#0"]}
    owners = Owners((A, B), store, clock=lambda: NOW)
    assert owners.claim(B, "github:new/y#1") == B
    assert owners.owner("github:seed/x#7") is None  # the idle one made room
    assert owners.owner("github:seed/x#8") == A
    assert owners.learned_total() == DOCUMENTED_CAP


# -- who asked for a work item nobody routed: the last 5 000 (docs/configuration.md) -------

DOCUMENTED_ASKERS = 5000
ASKER = [("slack", "U0ASKER001")]


def _askers(count: int) -> dict[str, Any]:
    store: dict[str, Any] = {}
    Askers(store).keep("github:seed/x#0", ASKER)
    ((key, kept),) = store.items()
    (said,) = kept.values()
    store[key] = {f"github:seed/x#{n}": said for n in range(count)}
    return store


def test_who_asked_is_kept_for_the_five_thousandth_work_item_and_the_first() -> None:
    askers = Askers(_askers(DOCUMENTED_ASKERS - 1))
    askers.keep("github:new/y#1", ASKER)
    assert askers.of("github:seed/x#0") == ASKER
    assert askers.of("github:new/y#1") == ASKER


def test_the_five_thousand_and_first_forgets_who_asked_for_the_oldest() -> None:
    askers = Askers(_askers(DOCUMENTED_ASKERS))
    askers.keep("github:new/y#1", ASKER)
    assert askers.of("github:seed/x#0") == []
    assert askers.of("github:seed/x#1") == ASKER
    assert askers.of("github:new/y#1") == ASKER
