"""``config.py``: a wrong setting stops the bot at start, with the error the plugin gives."""

from __future__ import annotations

import importlib.util
import os
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from errbot.bootstrap import bot_config_defaults
from slack_sdk.web import WebClient
from slackv3.slackv3 import SlackBackend

from looproom.settings import ConfigError, Environment
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

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


def _slack_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **env: str) -> WebClient:
    """The Web API client of the backend ``config.py`` names, as Errbot builds that backend
    and SlackV3 then gives it its client (``serve_once``)."""
    for name in [k for k in os.environ if k.startswith(("THELOOP_", "THE_LOOP_"))]:
        monkeypatch.delenv(name)
    base = {"THELOOP_DATA_DIR": str(tmp_path / "data"), "THELOOP_BACKEND": "SlackV3"}
    for name, value in {**base, "THELOOP_SLACK_BOT_TOKEN": BOT_TOKEN, **env}.items():
        monkeypatch.setenv(name, value)
    names = runpy.run_path(str(CONFIG))
    config = SimpleNamespace(**{key: value for key, value in names.items() if key.isupper()})
    bot_config_defaults(config)
    if config.BACKEND == "SlackV3":
        backend_class: type = SlackBackend
    else:
        assert config.BACKEND == "SlackV3Url"
        folder = Path(config.BOT_EXTRA_BACKEND_DIR[0]) / "slackv3_url"
        spec = importlib.util.spec_from_file_location("slackv3_url", folder / "slackv3_url.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        backend_class = module.SlackV3Url
    backend = backend_class(config)
    backend.thread_pool.close()
    backend.slack_web = WebClient(token=backend.token, proxy=backend.proxies)
    return backend.slack_web


def test_unset_the_slack_client_calls_slack_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _slack_client(tmp_path, monkeypatch).base_url == "https://slack.com/api/"


@pytest.mark.parametrize("written", ["{url}", "{url}/"])
def test_another_slack_api_address_is_the_one_the_slack_client_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    with FakeSlack() as slack:
        url = slack.url.rstrip("/")
        client = _slack_client(tmp_path, monkeypatch, THELOOP_SLACK_API_URL=written.format(url=url))
        assert client.auth_test()["user_id"]
        assert [call.method for call in slack.calls] == ["auth.test"]
