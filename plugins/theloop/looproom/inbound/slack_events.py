"""Slack's Events API requests, checked before Errbot's SlackV3 backend reads them.

In HTTP mode (no app token) Slack posts every event the app subscribes to — and, once, the
``url_verification`` challenge — to ``/slack/events``. SlackV3 answers that path with its
own Flask view, which trusts what it is given: a body that is not UTF-8 or is nested past
Python's recursion limit fails inside it (a 500, which Slack retries), and a forged one is
refused only after an error event no one listens for. So the server hands it only requests
:func:`admit` lets through: signed by Slack with the app's signing secret (slack_sdk's
``SignatureVerifier``; no secret means 503, fail closed) and strict JSON objects
(``looproom.strict_json``), each refusal a final 4xx naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping

from looproom import strict_json
from looproom.http_rules import MAX_BODY_BYTES, header
from looproom.inbound.webhook import Answer

#: Where Slack posts events in HTTP mode: the path SlackV3 registers its view on.
PATH = "/slack/events"


class _Clock:
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def admit(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Answer | None:
    """``None`` when Slack signed ``body`` and it is a JSON object; else the refusal."""
    from slack_sdk.signature import SignatureVerifier  # slack_sdk is a runtime dependency

    if not secret.strip():
        return Answer(503, {"error": "no signing secret configured (THELOOP_SLACK_SIGNING_SECRET)"})
    if len(body) > MAX_BODY_BYTES:
        return Answer(413, {"error": f"body too large (at most {MAX_BODY_BYTES} bytes)"})
    try:
        text = body.decode("utf-8")  # the verifier decodes it too, and would raise
    except UnicodeDecodeError as exc:
        return Answer(400, {"error": f"body: not UTF-8 (byte {exc.start})"})
    stamp = header(headers, "x-slack-request-timestamp")
    if not stamp.isascii() or not stamp.isdigit():
        return Answer(401, {"error": "missing or malformed X-Slack-Request-Timestamp"})
    verifier = SignatureVerifier(secret, clock=_Clock(now))
    if not verifier.is_valid(text, stamp, header(headers, "x-slack-signature")):
        return Answer(401, {"error": "bad signature or stale timestamp"})
    try:
        event = strict_json.loads(text)
    except strict_json.StrictJSONError as exc:
        return Answer(400, {"error": str(exc), "errors": exc.errors})
    if not isinstance(event, dict):
        return Answer(400, {"error": "body: expected a JSON object"})
    return None
