"""``config.py``: a wrong setting stops the bot at start, naming the variable (DESIGN §3.5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONFIG = Path(__file__).resolve().parents[2] / "config.py"


def _load(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("THELOOP_", "THE_LOOP_"))}
    clean |= {"THELOOP_DATA_DIR": str(tmp_path / "data"), "THELOOP_BACKEND": "Null", **env}
    return subprocess.run(
        [sys.executable, str(CONFIG), "--webserver"],
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
    assert "Webserver" in result.stdout
