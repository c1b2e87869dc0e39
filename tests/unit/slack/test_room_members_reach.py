"""Who is in a room, read as far as `docs/admin.md` says: ``conversations.members`` in
pages of 1 000, ten of them — a room of 10 000 members is known whole; in one of 10 001
Slack's answer is not whole, and the room counts as one Slack cannot say for (only an
admin is answered about its work items), never as a list missing someone. Against the
loopback Slack, which pages as Slack does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

ROOM, DOCUMENTED_REACH = "C0LOOP0001", 10 * 1000


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        yield fake


def _members(slack: FakeSlack, count: int) -> frozenset[str] | None:
    slack.channels[ROOM]["members"] = [f"U{n:08d}" for n in range(count)]
    return SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url)).members(ROOM)


def test_a_room_of_10000_members_is_known_whole(slack: FakeSlack) -> None:
    members = _members(slack, DOCUMENTED_REACH)
    assert members is not None and len(members) == DOCUMENTED_REACH
    assert "U00009999" in members


def test_a_room_of_10001_is_one_slack_cannot_say_for(slack: FakeSlack) -> None:
    assert _members(slack, DOCUMENTED_REACH + 1) is None
