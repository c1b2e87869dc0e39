"""What the admin commands say: parsed strictly, secrets as set/unset, producer text inert."""

from __future__ import annotations

import pytest

from looproom.admin.text import (
    Health,
    QueueCommand,
    UsageError,
    parse_queue_command,
    queue_text,
    status_text,
)
from looproom.durable.queue import Failure, Item
from looproom.settings import Environment, Settings


@pytest.mark.parametrize(
    ("args", "command"),
    [
        ("", QueueCommand("list")),
        ("list", QueueCommand("list")),
        ("retry evt-1", QueueCommand("retry", "evt-1")),
        ("drop  sha256:ab", QueueCommand("drop", "sha256:ab")),
    ],
)
def test_queue_arguments(args: str, command: QueueCommand) -> None:
    assert parse_queue_command(args) == command


@pytest.mark.parametrize("args", ["purge", "retry", "drop a b", "list all"])
def test_anything_else_is_refused_with_the_usage(args: str) -> None:
    with pytest.raises(UsageError, match=r"usage: !theloop queue \[list \| retry KEY"):
        parse_queue_command(args)


def _item(**fields: object) -> Item:
    base = dict(
        key="evt-1",
        payload='{"eventType": "decision-pending", "workItem": "github:o/r#7"}',
        state="pending",
        attempts=1,
        maybe_delivered=False,
        due=100.0,
        created=0.0,
        last_error="",
    )
    return Item(**{**base, **fields})


def test_producer_text_cannot_ping_or_break_out_of_code() -> None:
    text = queue_text(
        [_item(key="<!channel>`x", last_error="<@U123> & <https://evil|click>")], 1, now=0.0
    )
    assert "<!channel>" not in text and "<@U123>" not in text and "<https://" not in text
    assert "`‹!channel›'x`" in text


def test_the_list_says_what_each_item_waits_for() -> None:
    text = queue_text(
        [
            _item(due=160.0, last_error="ratelimited", attempts=3),
            _item(key="evt-2", state="parked", last_error="invalid_blocks"),
            _item(key="evt-3", state="inflight", maybe_delivered=True),
            _item(key="evt-4", payload="not json"),
        ],
        depth=6,
        now=100.0,
    )
    assert (
        "`evt-1` decision-pending · github:o/r#7: waiting, next try in 60 s, 3 attempt(s)" in text
    )
    assert "PARKED" in text and "invalid_blocks" in text
    assert "maybe delivered before a restart" in text
    assert "(unreadable payload)" in text
    assert "… and 2 more" in text


def test_status_never_shows_a_secret_and_says_what_to_fix() -> None:
    env = Environment.from_env({"THELOOP_SLACK_BOT_TOKEN": "xoxb-very-secret"})
    health = Health(
        counts={"pending": 1, "inflight": 0, "parked": 2},
        last_error=Failure(key="evt-9", error="channel_not_found", at=40.0),
        worker_alive=False,
        bindings=4,
    )
    text = status_text(env, Settings(), health, now=100.0)
    assert "xoxb-very-secret" not in text
    assert "THELOOP_SLACK_BOT_TOKEN: set" in text
    assert "THELOOP_LOG_LEVEL: INFO" in text and "THELOOP_SLACK_API_URL: (unset)" in text
    assert "answers 503 — set THELOOP_WEBHOOK_SECRET" in text
    assert "queue: 3 not delivered (1 waiting, 0 in flight, 2 parked)" in text
    assert "delivery worker: STOPPED" in text
    assert "last delivery error (60 s ago, `evt-9`): channel_not_found" in text
    assert "authorizedUsers: 0 (nobody may decide: fail closed)" in text


def test_status_says_what_the_room_style_does() -> None:
    health = Health(counts={}, last_error=None, worker_alive=True, bindings=0)
    text = status_text(Environment(), Settings(room_style="classic"), health, now=0.0)
    assert "room style: classic — every subscribed event is posted" in text
    agentic = status_text(Environment(), Settings(), health, now=0.0)
    assert "room style: agentic — repeats, collapsed lines" in agentic
    assert "not used yet" not in text + agentic
