"""``theloop_send.py`` as an operator runs it, against a real running bot.

The sender runs as a script on a bare interpreter (``-I -S``: no site-packages), and the
bot is a real ``errbot -c config.py`` process (``Null`` backend) on a free loopback port.
What the bot stored is read from its inbox after it stopped, through the queue's own API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import theloop_send

from tests.e2e.botproc import BotProcess
from tests.support import messages
from tests.support.signed import WEBHOOK_PATH

pytestmark = pytest.mark.e2e

SECRET = "e2e-secret-0123456789abcdef0123456789abcdef"
SECRET_ENV = "THELOOP_E2E_SECRET"
SENDER = Path(theloop_send.__file__).resolve()


def send(url: str, *args: str, secret: str = SECRET, deadline: float = 30) -> subprocess.Popen:
    command = [sys.executable, "-I", "-S", str(SENDER), "--url", url]
    command += ["--secret-env", SECRET_ENV, "--deadline", str(deadline), *args]
    env = {SECRET_ENV: secret, "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def finished(process: subprocess.Popen) -> tuple[int, str]:
    out, err = process.communicate(timeout=120)
    return process.returncode, (out + err).decode("utf-8", "replace")


def _event_file(tmp_path: Path, name: str, **fields: str) -> str:
    event = {"eventType": "phase.started", "workItem": "github:acme/api#7", **fields}
    path = tmp_path / name
    path.write_text(json.dumps(event), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BotProcess]:
    process = BotProcess(
        tmp_path_factory.mktemp("bot"), env={"THELOOP_WEBHOOK_SECRET": SECRET}
    ).start()
    yield process
    process.stop()


def test_an_event_is_delivered_once_and_its_repeat_is_a_duplicate(
    bot: BotProcess, tmp_path: Path
) -> None:
    event = _event_file(tmp_path, "started.json", text="the-loop: issue-7 started phase *design*")
    code, said = finished(send(bot.url(WEBHOOK_PATH), "--event-file", event))
    assert code == 0 and "HTTP 202" in said, said
    code, again = finished(send(bot.url(WEBHOOK_PATH), "--event-file", event))
    assert code == 0 and "duplicate" in again and "HTTP 200" in again, again


def test_a_wrong_secret_is_refused_naming_the_secret_variable(
    bot: BotProcess, tmp_path: Path
) -> None:
    event = _event_file(tmp_path, "refused.json", text="never stored")
    code, said = finished(
        send(bot.url(WEBHOOK_PATH), "--event-file", event, secret="not-the-secret")
    )
    assert code == 1 and "401" in said and SECRET_ENV in said, said
    assert "not-the-secret" not in said


def test_a_schema_error_is_refused_naming_the_field(bot: BotProcess) -> None:
    corpus = str(messages.path("12"))  # as the-loop logged it: it still carries `origin`
    code, said = finished(send(bot.url(WEBHOOK_PATH), "--event-file", corpus))
    assert code == 1 and "422" in said and "origin" in said, said


def test_a_bot_that_is_down_then_up_within_the_retry_window_gets_the_event(
    tmp_path: Path,
) -> None:
    bot = BotProcess(tmp_path / "bot", env={"THELOOP_WEBHOOK_SECRET": SECRET})  # its own port
    event = _event_file(tmp_path, "late.json", id="late-but-delivered", text="waited")
    sender = send(bot.url(WEBHOOK_PATH), "--event-file", event, deadline=90)
    try:
        bot.start()  # nothing listened when the sender started
        code, said = finished(sender)
    finally:
        sender.kill()
        bot.stop()
    assert code == 0 and "HTTP 202" in said and "attempts" in said, said  # it did retry
    with bot.inbox() as inbox:
        assert inbox.get("late-but-delivered") is not None
