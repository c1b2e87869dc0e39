"""The Text console as ``make demo`` runs it: a real errbot, a person typing at its console.

The bot starts with the demo's own settings file and no webhook secret, so it makes a local
one; the-loop's real phase checklist arrives signed over HTTP. Shown here: the console's
person sees why a wrong command was refused (the refusal is told to them, not lost), and a
right one is taken and recorded, because the demo lets that person decide.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.botproc import REPO, BotProcess
from tests.support import messages, signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "MadaraUchiha-314/the-loop#260"
TIMEOUT = 60.0


@pytest.fixture
def console(tmp_path: Path) -> Iterator[BotProcess]:
    settings = (REPO / "demo" / "theloop.yaml").read_text(encoding="utf-8")
    (tmp_path / "theloop.yaml").write_text(settings, encoding="utf-8")
    bot = BotProcess(tmp_path, backend="Text", console=True)
    bot.start(timeout=90.0)
    try:
        yield bot
    finally:
        bot.kill()


def _shown(bot: BotProcess, words: str) -> None:
    wait_for(
        lambda: words in bot.log_text(),
        TIMEOUT,
        lambda: f"{words!r} on the console; it shows:\n{bot.log_text()[-3000:]}",
    )


def test_the_console_person_sees_a_refusal_and_then_decides(console: BotProcess) -> None:
    secret = (console.data_dir / "theloop" / "webhook-secret").read_text(encoding="ascii").strip()
    body = json.dumps(messages.event("01", id="console-01")).encode()
    headers = signed.webhook_headers(secret, body)
    assert signed.post(console.host, console.port, signed.WEBHOOK_PATH, body, headers)[0] == 202
    _shown(console, "which phases does this work item need?")

    console.type(f"execute {ITEM} without 99")
    _shown(console, "There is no phase 99 on this checklist, so nothing was recorded.")

    console.type(f"execute {ITEM} without 2")
    # The person is shown as the console shows people, not as Slack's raw mention.
    _shown(console, "recorded — moving on: the phase selection of @localhost")
    assert "<@localhost>" not in console.log_text()
    ledger = console.data_dir / "theloop" / "relay-ledger.jsonl"
    (line,) = ledger.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["actor"] == {"slack": "localhost"}
