"""A real SlackV3 bot pointed at the loopback fake of Slack, and a signed sender for it.

Used by the e2e fixtures (``conftest.py``) and by ``bench/bench_e2e.py``.
"""

from __future__ import annotations

import http.client
import json
import time
from typing import Any

from botproc import BotProcess

from looproom.inbound.signing import sign
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.support.corpus import MESSAGES

SECRET = "e2e-slack-webhook-secret"
LOOP, API_LOOP = "C0LOOP0001", "C0APILOOP1"


class SlackBot:
    """A running SlackV3 bot and the fake Slack it talks to."""

    def __init__(self, process: BotProcess, slack: FakeSlack) -> None:
        self.process, self.slack = process, slack

    def send(self, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST ``event`` to the bot's webhook, signed; its status and JSON answer."""
        body = json.dumps(event).encode()
        stamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-TheLoop-Timestamp": stamp,
            "X-TheLoop-Signature": sign(SECRET, stamp, body),
        }
        connection = http.client.HTTPConnection(self.process.host, self.process.port, timeout=30)
        try:
            connection.request("POST", "/theloop/events", body=body, headers=headers)
            response = connection.getresponse()
            return response.status, json.loads(response.read() or b"{}")
        finally:
            connection.close()


def corpus(stem: str) -> dict[str, Any]:
    """A real the-loop message from the shared corpus, ``origin`` dropped, id set."""
    (path,) = MESSAGES.glob(f"{stem}-*.json")
    wire = json.loads(path.read_text(encoding="utf-8"))
    wire.pop("origin", None)
    return {**wire, "id": f"e2e-{path.stem}"}


def slack_env(slack: FakeSlack) -> dict[str, str]:
    """The bot's environment for the fake: tokens, its URL, no proxy in between."""
    return {
        "THELOOP_SLACK_BOT_TOKEN": BOT_TOKEN,
        "THELOOP_SLACK_APP_TOKEN": APP_TOKEN,
        "THELOOP_SLACK_API_URL": slack.url,
        "THELOOP_WEBHOOK_SECRET": SECRET,
        "THELOOP_ADMINS": "U0ALICE01",
        **{name: "" for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
    }
