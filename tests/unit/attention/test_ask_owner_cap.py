"""Work items' owners at their default bound: the last 5 000 kept, as `docs/attention.md`
says — the 5 000th owner learnt keeps the first, the 5 001st forgets it. The 4 999 or
5 000 owners before the edge are put in the store directly (as the book writes them),
the ones at and past it learnt through the book; the cap is the module's default."""

from __future__ import annotations

from typing import Any

from looproom.attention.owners import Owners

DOCUMENTED_CAP = 5000
OWNER = "U0OWNER001"


def _item(n: int) -> str:
    return f"github:acme/api#{n}"


def _filled(count: int) -> dict[str, Any]:
    store: dict[str, Any] = {}
    Owners(store, {}).learn(_item(0), OWNER)
    ((key, _),) = store.items()
    store[key] = {_item(n): OWNER for n in range(count)}
    return store


def test_the_five_thousandth_owner_learnt_keeps_the_first() -> None:
    owners = Owners(_filled(DOCUMENTED_CAP - 1), {})
    owners.learn(_item(DOCUMENTED_CAP - 1), "U0OWNER002")
    assert owners.of(_item(0)) == OWNER
    assert owners.of(_item(DOCUMENTED_CAP - 1)) == "U0OWNER002"


def test_the_five_thousand_and_first_owner_learnt_forgets_the_first() -> None:
    owners = Owners(_filled(DOCUMENTED_CAP), {})
    owners.learn(_item(DOCUMENTED_CAP), "U0OWNER002")
    assert owners.of(_item(0)) == ""  # its next ask goes to the deciders
    assert owners.of(_item(1)) == OWNER
    assert owners.of(_item(DOCUMENTED_CAP)) == "U0OWNER002"
