"""``make doctor`` (``python -m looproom.doctor``) as a process, against the fake Slack."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.support import ports

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _doctor(tmp_path: Path, port: int, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("THELOOP_", "THE_LOOP_"))}
    (tmp_path / "theloop.yaml").write_text("slack:\n  channel: '#the-loop'\n")
    clean.update(
        THELOOP_CONFIG=str(tmp_path / "theloop.yaml"),
        THELOOP_DATA_DIR=str(tmp_path / "data"),
        THELOOP_HTTP_PORT=str(port),
        THELOOP_WEBHOOK_SECRET="s3cret-" * 6,
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "looproom.doctor"],
        cwd=ROOT,  # as `make doctor` runs it: relative paths are the checkout's
        env={**clean, "PYTHONPATH": str(ROOT / "plugins" / "theloop")},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _free_port() -> int:
    """The bot's port, where nothing listens: no other test takes it meanwhile."""
    return ports.reserve()


def test_from_a_shell_it_opens_its_own_connection_and_hears_every_echo(
    slack: FakeSlack, tmp_path: Path
) -> None:
    slack.echo_posts = True
    done = _doctor(
        tmp_path,
        _free_port(),
        THELOOP_SLACK_BOT_TOKEN=BOT_TOKEN,
        THELOOP_SLACK_APP_TOKEN=APP_TOKEN,
        THELOOP_SLACK_API_URL=slack.url,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✅ Socket Mode: connected" in done.stdout
    assert "3/3 echoes came back" in done.stdout
    assert BOT_TOKEN not in done.stdout and APP_TOKEN not in done.stdout


def test_beside_a_running_bot_it_does_not_open_a_second_connection(
    slack: FakeSlack, tmp_path: Path
) -> None:
    with socket.socket() as running:  # something answers on the bot's port
        running.bind(("127.0.0.1", 0))
        running.listen()
        done = _doctor(
            tmp_path,
            running.getsockname()[1],
            THELOOP_SLACK_BOT_TOKEN=BOT_TOKEN,
            THELOOP_SLACK_APP_TOKEN=APP_TOKEN,
            THELOOP_SLACK_API_URL=slack.url,
        )
    assert "run `!theloop doctor` in chat" in done.stdout
    assert slack.calls_to("apps.connections.open") == []


def test_a_problem_exits_one(slack: FakeSlack, tmp_path: Path) -> None:
    slack.scopes = "chat:write"
    done = _doctor(
        tmp_path,
        _free_port(),
        THELOOP_SLACK_BOT_TOKEN=BOT_TOKEN,
        THELOOP_SLACK_API_URL=slack.url,
        THELOOP_SLACK_SIGNING_SECRET="x",
    )
    assert done.returncode == 1
    assert "❌ Slack scopes: `groups:read` is not granted" in done.stdout
