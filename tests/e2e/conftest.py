"""End-to-end fixtures: the loopback fake of Slack, and real SlackV3 bots talking to it.

``fake_slack`` is a :class:`tests.fakes.slack_api.FakeSlack` on a free loopback port.
``slack_bot(settings_yaml, env)`` starts a real ``errbot -c config.py`` process (the SlackV3
backend, the real slack_sdk, Socket Mode against the fake) in the test's temp dir, pointed
at the fake with ``THELOOP_SLACK_API_URL`` (``env`` adds to its environment); every bot
started is killed when the test ends, if the test did not kill it first.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.e2e import slackbot
from tests.e2e.slackbot import API_LOOP, LOOP, SlackBot, StartBot
from tests.fakes.slack_api import FakeSlack


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop"), (API_LOOP, "api-loop")]) as slack:
        yield slack
        slack.release()  # a hung call must not outlive the test


@pytest.fixture
def slack_bot(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[StartBot]:
    """Start a SlackV3 bot with ``settings_yaml`` as its theloop.yaml (and ``env``)."""
    started: list[SlackBot] = []

    def start(settings_yaml: str, env: Mapping[str, str] | None = None) -> SlackBot:
        data_dir = tmp_path / f"bot-{len(started)}"
        bot = slackbot.start(data_dir, settings_yaml, fake_slack, env)
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.process.kill()
