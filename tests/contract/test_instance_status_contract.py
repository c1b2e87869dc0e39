"""What of the-loop's own ``status`` its control plane serves, read from the real the-loop.

``/the-loop status`` here draws the instance from the-loop's API (``/instance``,
``/health``, ``/daemons``, ``/standing-sessions``). the-loop's own ``status`` adds two
findings — another state root holding a poller heartbeat (``conflictingRoots``) and the
live sessions' environment against ``env.file`` (``sessionEnvironment``) — which it
computes in the process that runs it, from its host's files and tmux panes. These tests
hold the room's claim that no route serves either: if a the-loop release starts serving
them, they fail, and the room should show them.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
import yaml
from fastapi.testclient import TestClient
from the_loop.api import facade, mcp, routes
from the_loop.api.app import create_app
from the_loop.channels.commands import render_status
from the_loop.cli_config import load_cli_config
from the_loop.core.lifecycle import status_all

#: The two findings' keys in the-loop's status document, and what computes each.
FINDINGS = ("conflictingRoots", "sessionEnvironment")
COMPUTED_BY = ("status_all", "rival_roots", "environment_drift")
#: A server-sent stream: it never ends, and carries events, not the instance's status.
STREAM = "/api/v1/stream"


@pytest.fixture
def rival_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, Path, Path]:
    """A the-loop whose state root is ``state/``, run where ``./.the-loop`` also holds a
    poller heartbeat — the split ``conflictingRoots`` reports."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    rival = tmp_path / ".the-loop"
    rival.mkdir()
    (rival / "poll-status.json").write_text("{}", encoding="utf-8")
    config_path = tmp_path / "cli-config.yaml"
    config = {
        "state": {"root": str(tmp_path / "state")},
        "service": {"hostIngresses": False, "mcp": {"enabled": False}},
    }
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return load_cli_config(config_path), config_path, rival


def test_the_loops_own_status_reports_the_rival_root(rival_root: tuple[dict, Path, Path]) -> None:
    """The finding is real where the-loop runs: its local status names the rival."""
    config, config_path, rival = rival_root
    document = status_all(config, config_path=config_path)
    assert document["conflictingRoots"] == [str(rival)]
    assert "sessionEnvironment" in document
    assert f"• conflict: `{rival}` also holds a poller heartbeat" in render_status(document)


def test_no_route_of_the_loops_api_serves_either_finding(
    rival_root: tuple[dict, Path, Path],
) -> None:
    """Every instance-wide read the API has (each GET without a required parameter) is
    asked: none names the rival root or carries either finding."""
    config, config_path, rival = rival_root
    app = create_app(config, config_path=config_path)
    client = TestClient(app)
    paths = _instance_reads(app.openapi())
    assert {"/api/v1/health", "/api/v1/daemons", "/api/v1/instance"} <= set(paths)
    for path in paths:
        answer = client.get(path)
        assert answer.status_code == 200, path
        body = json.dumps(answer.json()) if answer.content else ""
        assert str(rival) not in body, path
        assert not any(f'"{key}"' in body for key in FINDINGS), path


def test_the_loops_api_code_calls_nothing_that_computes_them() -> None:
    """Neither the REST routes, their facade nor the MCP tools call what computes the two
    findings — so a route with a required parameter serves them no more than the others."""
    for module in (routes, facade, mcp):
        source = inspect.getsource(module)
        assert not any(f"{name}(" in source for name in COMPUTED_BY), module.__name__


def _instance_reads(spec: dict) -> list[str]:
    """The GET paths of the-loop's OpenAPI document that take no required parameter."""
    found = []
    for path, operations in spec["paths"].items():
        get = operations.get("get")
        if get is None or path == STREAM or not path.startswith("/api/v1/"):
            continue
        if not any(parameter.get("required") for parameter in get.get("parameters", [])):
            found.append(path)
    return found
