"""``/the-loop status`` lists at most 20 work items (docs/decisions.md), then how many more:
twenty are listed whole, a twenty-first is counted, not listed."""

from __future__ import annotations

import pytest

from looproom.control import item_status
from looproom.decide.authorization import AccessPolicy

POLICY = AccessPolicy("U0THELOOP", frozenset({"U0ALICE01"}))


def _items(count: int) -> list[item_status.Followed]:
    return [item_status.Followed(f"github:acme/api#{n:03d}") for n in range(1, count + 1)]


@pytest.mark.parametrize(("count", "listed", "more"), [(20, 20, ""), (21, 20, "… and 1 more")])
def test_twenty_work_items_are_listed_and_a_twenty_first_is_counted(
    count: int, listed: int, more: str
) -> None:
    text = item_status.status_text(_items(count), POLICY, {})
    assert f"({count})" in text.splitlines()[0]
    assert sum(f"`github:acme/api#{n:03d}`" in text for n in range(1, count + 1)) == listed
    assert (more in text) if more else ("more —" not in text)
