"""A first run on the Text console gets a webhook secret of its own; nowhere else does."""

from __future__ import annotations

import stat
from pathlib import Path

from looproom.inbound import local_secret
from looproom.settings import Environment


def test_the_console_makes_one_secret_once_readable_only_by_its_owner(tmp_path: Path) -> None:
    env = Environment(backend="Text", data_dir=str(tmp_path))
    made = local_secret.ensure(env, tmp_path / "theloop", console=True)
    assert len(made) == 64
    path = tmp_path / "theloop" / local_secret.FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert local_secret.ensure(env, tmp_path / "theloop", console=True) == made  # kept
    assert local_secret.local_secret_in(env) == made  # what the shell doctor finds


def test_off_the_console_an_unset_secret_stays_unset_fail_closed(tmp_path: Path) -> None:
    env = Environment(backend="SlackV3", data_dir=str(tmp_path))
    assert local_secret.ensure(env, tmp_path, console=False) == ""
    assert not (tmp_path / local_secret.FILE).exists()


def test_the_environments_secret_wins_and_no_file_is_made(tmp_path: Path) -> None:
    env = Environment(backend="Text", webhook_secret="from-env")
    assert local_secret.ensure(env, tmp_path, console=True) == "from-env"
    assert not (tmp_path / local_secret.FILE).exists()


def test_the_line_to_copy_names_the_file_never_the_secret(tmp_path: Path) -> None:
    env = Environment(backend="Text", http_host="0.0.0.0", http_port=4000)
    made = local_secret.ensure(env, tmp_path, console=True)
    line = local_secret.send_line(env, tmp_path)
    assert made not in line
    assert str(tmp_path.resolve() / local_secret.FILE) in line
    assert "--url http://127.0.0.1:4000/theloop/events" in line
    assert "\n" not in line
