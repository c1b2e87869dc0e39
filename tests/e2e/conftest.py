"""End-to-end fixtures: the loopback fake of Slack, and real SlackV3 bots talking to it.

``fake_slack`` is a :class:`tests.fakes.slack_api.FakeSlack` on a free loopback port.
``slack_bot(settings_yaml)`` starts a real ``errbot -c config.py`` process (the SlackV3
backend, the real slack_sdk, Socket Mode against the fake) in the test's temp dir, pointed
at the fake with ``THELOOP_SLACK_API_URL``; every bot started is killed when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from botproc import BotProcess
from slackbot import API_LOOP, LOOP, SlackBot, slack_env

from tests.fakes.slack_api import FakeSlack


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop"), (API_LOOP, "api-loop")]) as slack:
        yield slack
        slack.release()  # a hung call must not outlive the test


@pytest.fixture
def slack_bot(tmp_path: Path, fake_slack: FakeSlack) -> Iterator[Callable[[str], SlackBot]]:
    """Start a SlackV3 bot with ``settings_yaml`` as its theloop.yaml."""
    started: list[BotProcess] = []

    def start(settings_yaml: str) -> SlackBot:
        data_dir = tmp_path / f"bot-{len(started)}"
        data_dir.mkdir()
        (data_dir / "theloop.yaml").write_text(settings_yaml, encoding="utf-8")
        process = BotProcess(data_dir, backend="SlackV3", env=slack_env(fake_slack))
        started.append(process)
        process.start(timeout=90)
        return SlackBot(process, fake_slack)

    yield start
    for process in started:
        process.kill()
