"""A member's App Home tab lists what waits on them, oldest first, across every room,
and what they answered lately — as Slack's views.publish takes it (the fake's checks:
a home view, valid blocks, at most 100)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from looproom.attention import home
from looproom.attention.record import ANSWERED, DM, Ask
from looproom.attention.steps import Steps
from looproom.attention.store import AskStore, sqlite_asks
from looproom.durable.outcome import Delivered
from looproom.settings.attention import RoomAttention
from looproom.slack.direct import Direct
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

NOW = 1_800_000_000.0
ALICE, BOB = "U0ALICE01", "U0BOB0001"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def steps_for(tmp_path: Path, slack: FakeSlack) -> tuple[Steps, AskStore]:
    transport = SlackTransport.beside(WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer())
    asks = sqlite_asks(tmp_path / "asks.sqlite3")
    return Steps(asks, Direct(transport), lambda _c: RoomAttention(), lambda: NOW), asks


def ask(n: int, channel: str = "C1", asked: tuple[str, ...] = (ALICE,)) -> Ask:
    return Ask(f"a{n}", f"github:acme/api#{n}", "gate", channel, f"{n}.0", "", asked, NOW - n)


def texts(view: dict) -> list[str]:
    return [str(b.get("text", {}).get("text", "")) for b in view["blocks"]]


def test_the_home_lists_every_rooms_asks_oldest_first_then_what_i_answered(
    tmp_path: Path, slack: FakeSlack
) -> None:
    delivery, asks = steps_for(tmp_path, slack)
    asks.open(ask(1, "C1"))
    asks.open(ask(300, "C2"))  # another room, older
    asks.open(ask(2, "C1", (BOB,)))  # not mine
    asks.open(ask(50, "C3"))
    asks.close("a50", ANSWERED, ALICE, DM, NOW)
    assert isinstance(delivery.home(ALICE), Delivered)
    shown = texts(slack.homes[ALICE])
    assert shown[0] == "Waiting on you (2)"
    assert "acme/api#300" in shown[1] and "acme/api#1`" in shown[2]
    assert "You answered lately" in shown and "acme/api#50" in shown[-1]
    assert not any("acme/api#2`" in text for text in shown)
    asks.close("a300", ANSWERED, BOB, DM, NOW)  # answered by someone else: it drops
    delivery.home(ALICE)
    assert texts(slack.homes[ALICE])[0] == "Waiting on you (1)"


@pytest.mark.parametrize("waiting", [home.MAX_WAITING, home.MAX_WAITING + 1])
def test_a_long_list_stays_within_slacks_hundred_blocks_and_says_how_many_more(
    tmp_path: Path, slack: FakeSlack, waiting: int
) -> None:
    delivery, asks = steps_for(tmp_path, slack)
    for n in range(1, waiting + 1):
        asks.open(ask(n))
    for n in range(1000, 1000 + home.MAX_ANSWERED + 5):
        asks.open(ask(n))
        asks.close(f"a{n}", ANSWERED, ALICE, DM, NOW)
    delivery.home(ALICE)
    published = slack.homes[ALICE]
    assert len(published["blocks"]) <= 100
    more = [b for b in published["blocks"] if b["type"] == "context"]
    assert len(more) == (waiting > home.MAX_WAITING)


def test_nothing_waiting_says_so_and_an_app_without_a_home_tab_is_not_retried(
    tmp_path: Path, slack: FakeSlack
) -> None:
    delivery, _ = steps_for(tmp_path, slack)
    delivery.home(ALICE)
    assert texts(slack.homes[ALICE])[:2] == ["Waiting on you (0)", "Nothing waits on you. 🎉"]
    slack.home_tab = False
    assert isinstance(delivery.home(BOB), Delivered)  # drawn again at its next opening
    assert BOB not in slack.homes
