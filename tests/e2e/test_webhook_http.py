"""The webhook over real HTTP against a real ``errbot -c config.py`` process.

The bot is started as ``make run`` does, with the one command (Null backend, temp data
dir, free port). Each answer of the contract is checked over a socket; only the bot's own
routes answer; a bot without a secret fails closed; a SIGKILL after 202s loses nothing;
requests hammering a starting bot do not keep the plugin from activating; a taken port is
said, not hidden.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.e2e.botproc import ACTIVATION_DONE, BotProcess
from tests.support.signed import WEBHOOK_PATH, post, webhook_headers
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SECRET = "e2e-webhook-secret"


def _event(n: int, event_type: str = "decision-pending") -> bytes:
    return json.dumps(
        {"id": f"e2e-{n}", "eventType": event_type, "workItem": f"github:acme/api#{n}"}
    ).encode()


def _post(
    bot: BotProcess,
    body: bytes,
    *,
    secret: str = SECRET,
    signed: bool = True,
) -> tuple[int, dict]:
    sent = webhook_headers(secret, body) if signed else {"Content-Type": "application/json"}
    status, raw = post(bot.host, bot.port, WEBHOOK_PATH, body, sent)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, {"raw": raw.decode(errors="replace")}


def _inbox_states(bot: BotProcess) -> dict[str, str]:
    """key → state, read-only from the bot's queue file (the bot may be running)."""
    db = sqlite3.connect(f"file:{bot.queue_file}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT key, state FROM items WHERE queue='inbox'").fetchall()
    finally:
        db.close()
    return dict(rows)


@pytest.fixture(scope="module")
def started(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BotProcess, list]]:
    """A bot started while a client keeps posting at it; what that client got back."""
    bot = BotProcess(tmp_path_factory.mktemp("bot"), env={"THELOOP_WEBHOOK_SECRET": SECRET})
    answers: list[int] = []
    stop = threading.Event()

    def hammer() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                answers.append(_post(bot, _event(100_000 + n, "phase.progress"))[0])
            except OSError:
                stop.wait(0.001)  # not listening yet: knock again at once

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    try:
        bot.start(wait=False)
        bot.wait_ready()
        wait_for(lambda: 202 in answers, 30, "a 202 once the plugin is active")
    except BaseException:
        bot.kill()
        raise
    finally:
        stop.set()
        thread.join(30)
    yield bot, answers
    bot.stop()


def test_requests_while_the_bot_starts_do_not_keep_the_plugin_from_activating(
    started: tuple[BotProcess, list],
) -> None:
    bot, answers = started
    log = bot.log_text()
    assert "TheLoop failed" not in log and "failed at activation" not in log
    # Before activation a sender hears "retry later", never a 404 it would take as final.
    assert set(answers) <= {202, 503}


def test_each_answer_of_the_contract_over_http(started: tuple[BotProcess, list]) -> None:
    bot, _ = started
    status, body = _post(bot, _event(1))
    assert (status, body["status"]) == (202, "accepted")
    assert _post(bot, _event(1)) == (200, {"status": "duplicate", "id": "e2e-1"})
    assert _post(bot, b"{not json")[0] == 400
    assert _post(bot, _event(2), secret="wrong")[0] == 401
    assert _post(bot, _event(2), signed=False)[0] == 401
    status, body = _post(bot, json.dumps({"eventType": "x", "colour": 1}).encode())
    assert status == 422
    assert {e.split(":")[0] for e in body["errors"]} == {"colour", "workItem"}
    assert _post(bot, b"x" * (300 * 1024))[0] == 413


def test_a_bot_without_a_secret_fails_closed_and_says_what_to_set(tmp_path: Path) -> None:
    with BotProcess(tmp_path).start() as bot:
        status, body = _post(bot, _event(1), secret="anything")
        assert (status, body) == (503, {"error": "webhook not configured"})
        assert "THELOOP_WEBHOOK_SECRET" in bot.log_text()


def test_accepted_events_survive_a_sigkill_and_are_delivered_after_restart(
    tmp_path: Path,
) -> None:
    with BotProcess(tmp_path, env={"THELOOP_WEBHOOK_SECRET": SECRET}).start() as bot:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda n: _post(bot, _event(n))[0], range(200)))
        assert answers == [202] * 200
        bot.kill()

        stored = _inbox_states(bot)
        assert all(f"e2e-{n}" in stored for n in range(200))

        bot.start()
        wait_for(lambda: set(_inbox_states(bot).values()) == {"done"}, 60, "all delivered")
        assert [_post(bot, _event(n))[0] for n in (0, 99, 199)] == [200, 200, 200]


def _get(bot: BotProcess, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(bot.host, bot.port, timeout=30)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_one_command_serves_only_our_routes_with_health_and_metrics(
    started: tuple[BotProcess, list],
) -> None:
    bot, _ = started
    status, body = _get(bot, "/echo")  # Errbot's own Webserver is not loaded
    assert (status, json.loads(body)["error"]) == (404, 'no such route: "/echo"')
    assert post(bot.host, bot.port, "/echo", b"<b>hi</b>", {})[0] == 404
    status, body = _get(bot, "/theloop/health")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    status, body = _get(bot, "/theloop/metrics")
    assert status == 200
    accepted = [
        line for line in body.decode().splitlines() if line.startswith("theloop_events_accepted")
    ]
    assert accepted and float(accepted[0].split()[-1]) >= 1


def test_a_taken_port_is_said_loudly_and_the_bot_runs_on(tmp_path: Path, taken_port: int) -> None:
    bot = BotProcess(tmp_path, port=taken_port, env={"THELOOP_WEBHOOK_SECRET": SECRET})
    try:
        bot.start(wait=False)
        wait_for(lambda: ACTIVATION_DONE in bot.log_text(), 60, "the plugins to activate")
        log = bot.log_text()
        assert f"NOT LISTENING: cannot listen on 127.0.0.1:{taken_port}" in log
        assert "TheLoop failed" not in log
        assert bot.process is not None and bot.process.poll() is None
    finally:
        bot.stop()
