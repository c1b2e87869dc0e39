"""What the bot keeps of Slack in memory, at its default bounds as `docs/rooms.md` gives
them: the room names the workspace's listings gave (20 000, ten pages of a thousand from
each of the two listings) and the names members go by in recorded threads (the 2 000
most recently asked). Exactly the bound kept; one past, the newest room is looked up
afresh and the least recently asked member is asked again.

The directory is filled through its own ``learn``, as a listing page does; the names are
asked of the loopback Slack, the 1 999 or 2 000 before the edge put in directly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from looproom.slack.directory import ChannelDirectory
from looproom.slack.names import Names
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

ROOMS_KEPT, NAMES_KEPT = 20_000, 2000


def _rooms(directory: ChannelDirectory, count: int) -> None:
    directory.learn({"name": f"room-{n}", "id": f"C{n:09d}"} for n in range(count))


def test_the_twenty_thousandth_room_a_listing_named_is_remembered() -> None:
    directory = ChannelDirectory()
    _rooms(directory, ROOMS_KEPT)
    assert directory.get("#room-0") == "C000000000"
    assert directory.get("room-19999") == "C000019999"


def test_the_twenty_thousand_and_first_is_looked_up_afresh() -> None:
    directory = ChannelDirectory()
    _rooms(directory, ROOMS_KEPT + 1)
    assert directory.get("room-19999") == "C000019999"
    assert directory.get("room-20000") == ""


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        fake.users.update({"U0FIRST01": "first", "U0NEWEST1": "newest"})
        yield fake


def _names(slack: FakeSlack, already: int) -> Names:
    """Names that asked Slack for ``U0FIRST01`` first, then knew ``already - 1`` others."""
    names = Names(SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url)))
    assert names.name("U0FIRST01") == "first"
    for n in range(already - 1):
        names._known[f"U{n:08d}"] = f"member-{n}"  # as asked before, without 2 000 calls
    return names


def _asked(slack: FakeSlack, member: str) -> int:
    return sum(1 for call in slack.calls_to("users.info") if call.args.get("user") == member)


def test_with_two_thousand_names_known_the_first_is_not_asked_again(slack: FakeSlack) -> None:
    names = _names(slack, NAMES_KEPT - 1)
    assert names.name("U0NEWEST1") == "newest"  # the 2 000th
    assert names.name("U0FIRST01") == "first"
    assert _asked(slack, "U0FIRST01") == 1


def test_the_two_thousand_and_first_name_asks_the_least_recent_again(slack: FakeSlack) -> None:
    names = _names(slack, NAMES_KEPT)
    assert names.name("U0NEWEST1") == "newest"  # the 2 001st
    assert names.name("U0FIRST01") == "first"
    assert _asked(slack, "U0FIRST01") == 2
