"""A ``@handle`` is looked up among the workspace's members as far as `docs/configuration.md`
says: ``users.list`` read in pages of 200, a hundred pages — 20 000 members. The member
listed 20 000th is found; in a workspace of 20 001 the listing is not taken as whole, so a
handle falls back to the last answer kept (else grants nobody, with a warning) rather than
being called unknown. Against the loopback Slack, which pages as Slack does.

``users.list`` is tier 2: past its burst (40 calls) each page waits for its turn — 3 s
at Slack's pace, so a listing that gave up at the end of the burst would stop at 8 000
members. The reach is tested with the turns a thousand times faster than Slack's (a
second, not three minutes); that a page past the burst waits for its turn rather than
fails, with a burst of two and a tenth of a second a turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient

from looproom.decide.members import CACHE_KEY, Directory
from looproom.slack.limits import TIER_2, TIERS, MethodLimits, Tier
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

DOCUMENTED_REACH = 100 * 200
#: Tier 2's burst, its turns a thousand times as often.
FAST_TIER_2 = Tier(TIER_2.per_minute * 1000, TIER_2.burst)


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _workspace(slack: FakeSlack, size: int, tier: Tier = FAST_TIER_2) -> Directory:
    """``size`` members, ``@far-away`` the last of them; the directory asks this Slack."""
    for n in range(size - 1 - len(slack.users)):
        slack.users[f"U{n:08d}"] = f"member-{n}"
    slack.users["U0FARAWAY"] = "far-away"
    assert len(slack.users) == size
    limits = MethodLimits({**TIERS, "users.list": tier})
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport(client, limits=limits, max_inline_wait=0.0)
    store: dict[str, Any] = {CACHE_KEY: {"@far-away": "U0KEPT001"}}
    return Directory(transport.users_page, store)


def test_the_twenty_thousandth_member_is_found(slack: FakeSlack) -> None:
    resolved = _workspace(slack, DOCUMENTED_REACH).resolve(["@far-away"], "slack.x")
    assert resolved.ids == {"U0FARAWAY"} and resolved.warnings == ()


def test_in_a_workspace_of_20001_the_listing_is_not_whole_and_the_kept_answer_stands(
    slack: FakeSlack,
) -> None:
    resolved = _workspace(slack, DOCUMENTED_REACH + 1).resolve(["@far-away"], "slack.x")
    assert resolved.ids == {"U0KEPT001"}
    (warning,) = resolved.warnings
    assert "taken from the cache" in warning and "more than 100 pages" in warning


def test_a_page_past_the_burst_waits_for_its_turn_and_the_listing_is_whole(
    slack: FakeSlack,
) -> None:
    directory = _workspace(slack, 5 * 200, Tier(per_minute=600, burst=2))
    resolved = directory.resolve(["@far-away"], "slack.x")
    assert resolved.ids == {"U0FARAWAY"} and resolved.warnings == ()
