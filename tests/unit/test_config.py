"""``config.py``: a wrong setting stops the bot at start, with the error the plugin gives."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from looproom.settings import ConfigError, Environment

CONFIG = Path(__file__).resolve().parents[2] / "config.py"


def _load(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("THELOOP_", "THE_LOOP_"))}
    clean |= {"THELOOP_DATA_DIR": str(tmp_path / "data"), "THELOOP_BACKEND": "Null", **env}
    return subprocess.run(
        [sys.executable, str(CONFIG), "--check"],
        env=clean,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("level", ["VERBOSE", "warn", "10"])
def test_an_unknown_log_level_stops_the_bot_naming_the_variable(tmp_path: Path, level: str) -> None:
    result = _load(tmp_path, THELOOP_LOG_LEVEL=level)
    assert result.returncode != 0
    assert "THELOOP_LOG_LEVEL" in result.stderr and "DEBUG, INFO" in result.stderr


@pytest.mark.parametrize("level", ["debug", "WARNING", ""])
def test_a_known_log_level_in_any_case_is_accepted(tmp_path: Path, level: str) -> None:
    result = _load(tmp_path, THELOOP_LOG_LEVEL=level)
    assert result.returncode == 0, result.stderr
    assert "http server on" in result.stdout


@pytest.mark.parametrize(
    "env",
    [
        {"THELOOP_HTTP_PORT": "http"},
        {"THELOOP_BACKEND": "IRC"},
        {"THELOOP_BACKEND": "SlackV3"},
        {"THELOOP_SLACK_API_URL": "slack.example"},
        {"THELOOP_LOOP_API": "ftp://loop", "THELOOP_LOG_LEVEL": "LOUD"},
    ],
)
def test_a_bad_variable_stops_the_bot_with_the_plugins_own_error(
    tmp_path: Path, env: dict[str, str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        Environment.from_env({"THELOOP_BACKEND": "Null", **env})
    result = _load(tmp_path, **env)
    assert result.returncode != 0
    assert str(caught.value) in result.stderr


def test_the_http_server_address_comes_from_the_environment(tmp_path: Path) -> None:
    result = _load(tmp_path, THELOOP_HTTP_HOST="0.0.0.0", THELOOP_HTTP_PORT="8123")
    assert result.returncode == 0, result.stderr
    assert "http server on 0.0.0.0:8123" in result.stdout


def test_errbots_own_webserver_is_not_loaded(tmp_path: Path) -> None:
    # Its development server and open /echo must never listen beside ours.
    result = _load(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Errbot core plugins: ACLs" in result.stdout and "Webserver" not in result.stdout


def test_another_slack_api_address_runs_slackv3_with_its_client_there(tmp_path: Path) -> None:
    slack = {"THELOOP_BACKEND": "SlackV3", "THELOOP_SLACK_BOT_TOKEN": "xoxb-config-test"}
    plain = _load(tmp_path, **slack)
    moved = _load(tmp_path, **slack, THELOOP_SLACK_API_URL="http://127.0.0.1:9/api")
    assert plain.returncode == 0 and moved.returncode == 0, plain.stderr + moved.stderr
    assert "theloop: SlackV3 backend" in plain.stdout
    assert "theloop: SlackV3Url backend" in moved.stdout
