"""Plugin tests: Errbot's own ``testbot`` with the repo's plugins, in an isolated environment.

``pytest_plugins = ["errbot.backends.test"]`` is refused by pytest in a non-root conftest,
so the fixture is imported here instead (the same fixture, scoped to these tests). Its bot
is started with a bound a loaded machine meets: Errbot gives it 2 s to say it is ready, and
activating the plugins on a busy machine takes longer than that.

Every test gets a clean theloop environment: a webhook secret, a settings file path in its
own temp dir (empty unless the test writes it: ``@pytest.mark.theloop_yaml("...")``), an
HTTP port the OS picks, and none of the operator's THELOOP_*/THE_LOOP_*/GitHub variables.
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from errbot.backends.test import TestBot, testbot  # noqa: F401 - the fixture, re-exported

from tests.support.signed import WEBHOOK_PATH, webhook_headers

SECRET = "plugin-test-webhook-secret"
#: A bound on waiting for the test bot to start (for each message it says on the way),
#: never an expectation of speed.
START_TIMEOUT = 60


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "theloop_yaml(text): the plugin's settings file")
    config.addinivalue_line("markers", "theloop_env(**vars): extra environment for the plugin")


@pytest.fixture(autouse=True)
def theloop_env(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Path:
    """The environment the plugin reads at activation; returns the settings file path."""
    for name in list(os.environ):
        if name.startswith(("THELOOP_", "THE_LOOP_")) or name in ("GH_TOKEN", "GITHUB_TOKEN"):
            monkeypatch.delenv(name)
    config = tmp_path / "theloop.yaml"
    monkeypatch.setenv("THELOOP_CONFIG", str(config))
    monkeypatch.setenv("THELOOP_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("THELOOP_HTTP_PORT", "0")  # any free port: the plugin says which
    marker = request.node.get_closest_marker("theloop_yaml")
    text = textwrap.dedent(marker.args[0]) if marker is not None else ""
    config.write_text(text, encoding="utf-8")  # THELOOP_CONFIG names a file: it must exist
    env_marker = request.node.get_closest_marker("theloop_env")
    for name, value in (env_marker.kwargs if env_marker else {}).items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    return config


@pytest.fixture(autouse=True)
def patient_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """``testbot`` starts its bot with :data:`START_TIMEOUT` rather than Errbot's 2 s."""
    monkeypatch.setattr(TestBot, "start", functools.partialmethod(TestBot.start, START_TIMEOUT))


@pytest.fixture
def webhook_secret() -> str:
    return SECRET


@pytest.fixture
def plugin(testbot: Any) -> Any:  # noqa: F811 - the fixture imported above, requested
    """The TheLoop plugin object inside ``testbot``: its queues, worker and relay."""
    return testbot.bot.plugin_manager.get_plugin_obj_by_name("TheLoop")


@dataclass(frozen=True)
class Answered:
    """What the plugin's HTTP server answered."""

    status_code: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def http_port(plugin: Any) -> int:
    """The port the plugin's server listens on now (a reactivation picks another)."""
    server = getattr(plugin, "_http", None)
    if server is None or not server.port:
        raise ConnectionRefusedError("theloop's HTTP server is not listening")
    return server.port


@pytest.fixture
def post_event(plugin: Any) -> Callable[..., Answered]:
    """POST to the webhook over HTTP, signed as the-loop signs."""

    def post(body: bytes, *, secret: str = SECRET, ts: int | None = None) -> Answered:
        connection = http.client.HTTPConnection("127.0.0.1", http_port(plugin), timeout=30)
        try:
            connection.request("POST", WEBHOOK_PATH, body, webhook_headers(secret, body, ts))
            response = connection.getresponse()
            return Answered(response.status, response.read())
        finally:
            connection.close()

    return post
