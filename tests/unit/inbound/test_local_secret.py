"""A first run on the Text console gets a webhook secret of its own; nowhere else does."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

from looproom.assembly import Activation
from looproom.inbound import local_secret
from looproom.inbound import webhook as ingress
from looproom.inbound.signing import sign
from looproom.settings import Environment, Settings


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


def _room(tmp_path: Path, *, console: bool) -> Activation:
    return Activation(
        Environment(backend="Text"),
        Settings(),
        store={},
        data_dir=tmp_path / "theloop",
        slack=None,
        say=lambda _to, _text: None,
        admins=("@admin",),
        bot_member=lambda: "@theloop",
        console=console,
    )


def _post(room: Activation, secret: str) -> int:
    body = json.dumps({"eventType": "session.awaiting_input", "workItem": "github:a/b#1"}).encode()
    stamp = int(time.time())
    headers = {"X-TheLoop-Timestamp": str(stamp), "X-TheLoop-Signature": sign(secret, stamp, body)}
    return room.routes.receive(ingress.Request("POST", headers, body, len(body))).status


def test_on_the_console_the_webhook_takes_events_signed_with_the_local_secret(
    tmp_path: Path,
) -> None:
    room = _room(tmp_path, console=True)
    try:
        secret = (tmp_path / "theloop" / local_secret.FILE).read_text().strip()
        assert _post(room, secret) == 202
        assert _post(room, "another") == 401
        assert "theloop_send.py" in room.first_run_line
        assert "the console's own" in room.admin.status(time.time())
    finally:
        room.stop()


def test_off_the_console_no_secret_still_answers_503_and_offers_no_line(tmp_path: Path) -> None:
    room = _room(tmp_path, console=False)
    try:
        assert _post(room, "anything") == 503
        assert room.first_run_line == ""
    finally:
        room.stop()
