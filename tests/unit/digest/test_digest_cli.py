"""The preview CLI: ``python -m looproom.digest [--limit N] [--mode …] [--url …]
[FILE|-]`` prints what Slack will show."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from looproom.digest import fit
from looproom.digest.__main__ import main

REPO = Path(__file__).resolve().parents[3]
TEXT = "Intro. Which one do you want?\n\n" + "Filler sentence for the preview. " * 60


def test_cli_prints_fit_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "comment.md"
    source.write_text(TEXT, encoding="utf-8")
    assert main(["--limit", "300", "--url", "https://github.com/o/r/issues/1", str(source)]) == 0
    assert capsys.readouterr().out == fit(TEXT, 300, url="https://github.com/o/r/issues/1") + "\n"


def test_cli_truncate_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "comment.md"
    source.write_text(TEXT, encoding="utf-8")
    main(["--mode", "truncate", "--limit", "250", str(source)])
    assert capsys.readouterr().out == fit(TEXT, 250, "truncate") + "\n"


def test_cli_rejects_an_unknown_mode(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--mode", "summarize", "-"])
    assert "invalid choice" in capsys.readouterr().err


def test_cli_reads_stdin_as_a_module_with_plugins_theloop_on_the_path() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "plugins" / "theloop")}
    result = subprocess.run(
        [sys.executable, "-m", "looproom.digest", "--limit", "200", "-"],
        input=TEXT,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    assert result.stdout == fit(TEXT, 200) + "\n"
    assert result.stdout.startswith("*Which one do you want?*")
    assert len(result.stdout) <= 201
