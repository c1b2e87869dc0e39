"""Slack's Events API requests, checked before Errbot's SlackV3 backend reads them.

In HTTP mode (no app token) Slack posts every event the app subscribes to — and, once, the
``url_verification`` challenge — to ``/slack/events``. SlackV3 answers that path with its
own Flask view, which trusts what it is given: a body that is not UTF-8 or is nested past
Python's recursion limit fails inside it (a 500, which Slack retries), and a forged one is
refused only after an error event no one listens for. So the server hands it only requests
:func:`admit` lets through: signed by Slack with the app's signing secret (slack_sdk's
``SignatureVerifier``; no secret means 503, fail closed) and strict JSON objects
(``looproom.strict_json``), each refusal a final 4xx naming what is wrong. An event the
backend has no handler for and the room reads itself (:data:`OURS`: a member opening the
app's Home tab) is taken by :func:`ours` instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from looproom import strict_json
from looproom.http.rules import header
from looproom.inbound.webhook import Answer
from looproom.slack.signed import signed_body

#: Where Slack posts events in HTTP mode: the path SlackV3 registers its view on.
PATH = "/slack/events"
#: The events the room reads itself: SlackV3 drops them unread.
OURS = frozenset({"app_home_opened"})


def admit(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Answer | None:
    """``None`` when Slack signed ``body`` and it is a JSON object; else the refusal."""
    checked = signed_body(headers, body, secret, now)
    if checked.status != 200:
        return Answer(checked.status, {"error": checked.error})
    if header(headers, "x-slack-retry-reason") == "http_timeout":
        # SlackV3 answers only once it has handled an event, and Slack resends one it waited
        # 3 s for without waiting longer: the first is still being handled, or is done.
        # Handled again, the room would answer the same message twice.
        return Answer(200, {"ok": True, "ignored": "a resend of an event already taken"})
    text = body.decode("utf-8")
    try:
        event = strict_json.loads(text)
    except strict_json.StrictJSONError as exc:
        return Answer(400, {"error": str(exc), "errors": exc.errors})
    if not isinstance(event, dict):
        return Answer(400, {"error": "body: expected a JSON object"})
    return None


def ours(body: bytes) -> Mapping[str, Any] | None:
    """The event of an admitted request when it is one the room reads itself (:data:`OURS`),
    else None (the backend's to read)."""
    payload = json.loads(body)
    event = payload.get("event") if payload.get("type") == "event_callback" else None
    return event if isinstance(event, dict) and event.get("type") in OURS else None
