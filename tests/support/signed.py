"""Signed requests to the bot: the-loop's webhook and Slack's interactive endpoint.

the-loop's sender signs with the bot's own :func:`sign`; Slack signs with its ``v0``
scheme (HMAC-SHA256 of ``v0:<timestamp>:<body>`` under the app's signing secret), written
out here as Slack documents it, so the bot's check is tested against an independent copy.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import time

from looproom.inbound.signing import sign

WEBHOOK_PATH = "/theloop/events"
INTERACTIVE_PATH = "/theloop/slack/interactive"
COMMANDS_PATH = "/theloop/slack/commands"


def webhook_headers(secret: str, body: bytes, stamp: int | None = None) -> dict[str, str]:
    """What the-loop's sender sends with ``body``: JSON, its timestamp, its signature."""
    at = str(int(time.time()) if stamp is None else stamp)
    return {
        "Content-Type": "application/json",
        "X-TheLoop-Timestamp": at,
        "X-TheLoop-Signature": sign(secret, at, body),
    }


def slack_headers(secret: str, body: bytes, stamp: int | None = None) -> dict[str, str]:
    """What Slack sends with an interactive payload: a form body, signed with the app's
    signing secret."""
    at = str(int(time.time()) if stamp is None else stamp)
    base = f"v0:{at}:".encode() + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": at,
        "X-Slack-Signature": f"v0={digest}",
    }


def post(
    host: str, port: int, path: str, body: bytes, headers: dict[str, str]
) -> tuple[int, bytes]:
    """POST ``body`` over a fresh connection; the status and the raw answer."""
    connection = http.client.HTTPConnection(host, port, timeout=30)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()
