"""A private room named in the configuration is found among the bot's own rooms, so the
delivery posts to its id even when the workspace's listing does not show it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looproom.events import KNOWN_EVENTS
from looproom.settings import Settings
from tests.fakes.slack_api import FakeSlack
from tests.unit.room.test_outlets import Bot, event


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def test_a_private_room_hidden_from_the_listing_gets_its_events_by_id(slack: FakeSlack) -> None:
    hidden = slack.add_channel("war-room", private=True, listed=False)
    store: dict = {}
    bot = Bot(slack, Settings(channel="#war-room", subscribe=KNOWN_EVENTS), store)
    bot.deliver(event(1))
    bot.deliver(event(2))
    assert {call.args["channel"] for call in slack.calls_to("chat.postMessage")} == {hidden}
    assert bot.book.channel_id("#war-room") == hidden  # learnt once, then remembered
    assert len(slack.calls_to("users.conversations")) == 1
    assert slack.calls_to("conversations.list") == []
