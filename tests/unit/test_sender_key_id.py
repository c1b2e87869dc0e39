"""The sender names the instance it signs for (``--key-id``, ``$THELOOP_KEY_ID``), so a bot
that serves several the-loop instances knows whose secret to verify with — and a sender
without one sends exactly what it sent before."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import theloop_send

from tests.support.webhook_bot import SECRET, Bot, serving

SECRET_ENV = "THELOOP_TEST_SECRET"
HEADER = "X-TheLoop-Key-Id"
EVENT = {"eventType": "phase.started", "workItem": "github:acme/api#7"}


@pytest.fixture
def bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bot]:
    monkeypatch.setenv(SECRET_ENV, SECRET)
    monkeypatch.delenv(theloop_send.KEY_ID_ENV, raising=False)
    with serving(tmp_path) as running:
        yield running


def cli(bot: Bot, *extra: str) -> list[str]:
    return [
        "--url",
        bot.url,
        "--secret-env",
        SECRET_ENV,
        "--event-type",
        "phase.started",
        "--work-item",
        "github:acme/api#7",
        *extra,
    ]


def key_ids(bot: Bot) -> list[str | None]:
    return [request.get(HEADER) for request in bot.requests]


def test_the_key_id_given_is_sent_with_each_event(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert theloop_send.main(cli(bot, "--key-id", "team-b")) == 0
    monkeypatch.setenv(theloop_send.KEY_ID_ENV, "team-a")
    assert theloop_send.main(cli(bot, "--id", "second")) == 0
    assert theloop_send.main(cli(bot, "--id", "third", "--key-id", "team-c")) == 0
    assert key_ids(bot) == ["team-b", "team-a", "team-c"]


def test_without_a_key_id_no_header_is_sent(bot: Bot) -> None:
    assert theloop_send.main(cli(bot)) == 0
    assert key_ids(bot) == [None]


def test_a_key_id_that_is_no_header_value_is_a_usage_error(
    bot: Bot, capsys: pytest.CaptureFixture[str]
) -> None:
    assert theloop_send.main(cli(bot, "--key-id", "team a")) == theloop_send.EXIT_USAGE
    assert "--key-id 'team a'" in capsys.readouterr().err and bot.requests == []


def test_what_waited_in_the_spool_goes_with_the_key_id_too(bot: Bot, tmp_path: Path) -> None:
    spool = theloop_send.Spool(tmp_path / "spool")
    with socket.socket() as probe:  # held bound, not listening: refused, and no one else's
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}/theloop/events"
        kept = theloop_send.send_or_spool(EVENT, down, SECRET, spool, 0.2, key_id="team-b")
    assert kept.spooled
    sent = theloop_send.send_or_spool(
        {**EVENT, "text": "later"}, bot.url, SECRET, spool, 10, key_id="team-b"
    )
    assert sent.delivered and key_ids(bot) == ["team-b", "team-b"]
