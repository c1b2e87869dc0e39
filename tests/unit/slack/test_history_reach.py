"""How much one read of a thread or of a room's top level takes: ten pages of 200 — 2 000
messages — as Slack's history methods page them for an app made for its own workspace
(`docs/slack-app.md`: pages of 200). A thread's replies come oldest first (its parent
the first of them), so a read past 1 999 replies stops after the oldest and the next read,
from the last of them, takes the rest: nothing is skipped. A room's top level comes newest
first, so a read past 2 000 holds the newest 2 000 — pinned here, with the consequence in
docs/slack-app.md.

Against the loopback Slack through the real transport."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient

from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

ROOM, ALICE, READ = "C0LOOP0001", "U0ALICE01", 10 * 200


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        yield fake


def _transport(slack: FakeSlack) -> SlackTransport:
    return SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))


def _thread(slack: FakeSlack, replies: int) -> tuple[str, list[str]]:
    parent = slack.say(ROOM, ALICE, "parent")["ts"]
    said = [slack.say(ROOM, ALICE, f"r{n}", thread_ts=parent)["ts"] for n in range(replies)]
    return parent, said


@pytest.mark.parametrize("replies", [READ - 1, READ])
def test_a_threads_replies_are_read_1999_at_a_time_and_the_next_read_takes_the_rest(
    slack: FakeSlack, replies: int
) -> None:
    parent, said = _thread(slack, replies)
    transport = _transport(slack)
    first = transport.thread(ROOM, parent)
    # Slack's first page of a thread carries its parent: 2 000 messages are 1 999 replies.
    assert first is not None and [m["ts"] for m in first] == said[: READ - 1]
    rest = transport.thread(ROOM, parent, str(first[-1]["ts"]))
    assert rest is not None and [m["ts"] for m in rest] == said[READ - 1 :]


@pytest.mark.parametrize("count", [READ, READ + 1])
def test_a_rooms_top_level_read_holds_the_newest_2000(slack: FakeSlack, count: int) -> None:
    said = [slack.say(ROOM, ALICE, f"m{n}")["ts"] for n in range(count)]
    found = _transport(slack).top_level(ROOM, "0")
    assert found is not None and [m["ts"] for m in found] == said[-READ:]
