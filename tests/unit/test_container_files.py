"""The Dockerfile and compose.yaml say what the deploy page promises, and build from files
that exist (a build is not run here: it needs Docker and a network for the base image)."""

from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")


def _instructions(name: str) -> list[str]:
    joined = DOCKERFILE.replace("\\\n", " ")
    return [m.group(1).strip() for m in re.finditer(rf"^{name}\s+(.*)$", joined, re.MULTILINE)]


def test_it_starts_with_the_one_start_command_as_a_user_that_is_not_root() -> None:
    assert json.loads(_instructions("CMD")[-1]) == ["errbot", "-c", "config.py"]
    user = _instructions("USER")[-1]
    assert user not in ("root", "0")
    made = [run for run in _instructions("RUN") if "useradd" in run]
    assert made and made[0].split("&&")[0].split()[-1] == user  # the image makes that user


def test_the_data_directory_is_the_volume_and_health_is_checked_over_http() -> None:
    assert json.loads(_instructions("VOLUME")[-1]) == ["/data"]
    assert "THELOOP_DATA_DIR=/data" in DOCKERFILE
    assert "/theloop/health" in _instructions("HEALTHCHECK")[-1]
    assert _instructions("FROM")[0].endswith("-slim")


def test_every_file_it_copies_exists_and_is_not_ignored() -> None:
    ignored = [
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    for copy in _instructions("COPY"):
        for source in copy.split()[:-1]:
            assert (ROOT / source).exists(), source
            assert not any(fnmatch.fnmatch(source, pattern) for pattern in ignored), source


def test_compose_keeps_the_data_in_a_volume_and_the_port_on_loopback() -> None:
    service = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["theloop"]
    assert "theloop-data:/data" in service["volumes"]
    assert all(port.startswith("127.0.0.1:") for port in service["ports"])
    assert "THELOOP_WEBHOOK_SECRET" in service["environment"]


def _docker_runs(text: str) -> list[str]:
    """Each `docker run …` command in ``text``, its continued lines joined (comments too)."""
    joined = re.sub(r"\\\n#?\s*", " ", text)
    return re.findall(r"docker run [^\n]*", joined)


def test_the_settings_file_the_image_names_is_mounted_wherever_it_is_run() -> None:
    # THELOOP_CONFIG names it, so a missing file stops the bot at start.
    named = re.search(r"THELOOP_CONFIG=(\S+)", DOCKERFILE).group(1)
    service = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["theloop"]
    assert any(volume.endswith(f":{named}:ro") for volume in service["volumes"])
    runs = _docker_runs(DOCKERFILE) + _docker_runs((ROOT / "docs" / "deploy.md").read_text())
    assert len(runs) >= 2
    assert all(f":{named}:ro" in run for run in runs), runs
