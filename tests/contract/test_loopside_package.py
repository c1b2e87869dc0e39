"""``pip install ./loopside`` gives the-loop's Python the sender command and the graph hook.

Installed into a fresh virtualenv with no network (no build isolation, no index), then
used as an operator would: ``theloop-send`` posts a signed event that the bot's webhook
accepts, and the-loop's own extension loader loads the installed hook from the shipped
snippet.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.webhook_bot import SECRET, Bot, serving

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    place = tmp_path_factory.mktemp("loopside")
    source = place / "src"
    shutil.copytree(ROOT / "loopside", source, ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = place / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(env_dir)], check=True
    )
    python = env_dir / "bin" / "python"
    # No network, so no build isolation: the build runs on this environment's setuptools
    # (a fresh virtualenv's bundled one cannot build a wheel without the `wheel` package).
    build_env = {**os.environ, "PYTHONPATH": sysconfig.get_paths()["purelib"]}
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--disable-pip-version-check",
            str(source),
        ],
        check=True,
        capture_output=True,
        env=build_env,
    )
    return env_dir


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[Bot]:
    with serving(tmp_path) as running:
        yield running


def test_the_installed_command_sends_a_signed_event_the_bot_accepts(
    venv: Path, bot: Bot, tmp_path: Path
) -> None:
    question = tmp_path / "q.md"
    question.write_text("Which option?\n\n1. this\n2. that\n", encoding="utf-8")
    done = subprocess.run(
        [
            str(venv / "bin" / "theloop-send"),
            "--url",
            bot.url,
            "--secret-env",
            "MY_SECRET",
            "--event-type",
            "decision-pending",
            "--work-item",
            "github:acme/api#7",
            "--text-file",
            str(question),
        ],
        env={"PATH": os.environ.get("PATH", ""), "MY_SECRET": SECRET},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    [event] = bot.events()
    assert (event.event_type, event.work_item) == ("decision-pending", "github:acme/api#7")


def test_the_loops_loader_loads_the_installed_hook_from_the_installed_snippet(
    venv: Path,
) -> None:
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    snippet = venv / "share" / "theloop-loopside" / "the-loop-hooks.yaml"
    script = f"""
import json, pathlib, sys, yaml
from the_loop.graph.extensions import load_modules, read_declaration
table = load_modules(pathlib.Path("."), read_declaration(yaml.safe_load(open({str(snippet)!r}))))
files = [sys.modules[name].__file__ for name in ("theloop_hook", "theloop_send")]
print(json.dumps([sorted(table), *files]))
"""
    # the-loop's own Python (this one) with only the installed package added to its path.
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": site}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    hooks, hook_file, send_file = json.loads(done.stdout)
    assert hooks == ["x-theloop-notify"]
    assert hook_file.startswith(site) and send_file.startswith(site)
    assert sysconfig.get_paths()["purelib"] not in hook_file


def test_the_installed_records_command_runs_on_the_loops_python_and_says_why_it_read_nothing(
    venv: Path, tmp_path: Path
) -> None:
    """``theloop-records`` is installed beside the sender; run by the-loop's Python (which
    has ``the_loop``), it gets as far as asking the bot — and says what the bot answered."""
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    command = venv / "bin" / "theloop-records"
    assert command.is_file()
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": site, "NO_SECRET": " "}
    log = tmp_path / "events.jsonl"
    argv = ["--url", "http://127.0.0.1:9", "--state", str(tmp_path / "s"), "--event-log", str(log)]
    done = subprocess.run(
        [sys.executable, "-m", "theloop_records", *argv, "--secret-env", "NO_SECRET"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "NO_SECRET (--secret-env) is not set" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "theloop_records", *argv, "--secret-env", "A_SECRET"],
        env={**env, "A_SECRET": "s3cret"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "could not reach 127.0.0.1:9" in done.stderr
    assert not log.exists()  # nothing read, nothing written
