"""Slack's signed requests: the one check every route Slack posts to makes first.

Slack signs each request it sends the app (interactivity, slash commands, the Events API)
with the app's signing secret. A request is read only when slack_sdk's
``SignatureVerifier`` accepts it within Slack's five minutes; no secret answers 503 (fail
closed), and a body over the limit is refused before anything reads it. The signature is
checked before the body is looked at: a forged request is 401 whatever its body is. A body
that is not UTF-8 (which slack_sdk's verifier cannot read) is checked over its raw bytes
with the same ``v0`` scheme, and only a signed one hears that it is not UTF-8 (400).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looproom.http.rules import MAX_BODY_BYTES


@dataclass(frozen=True)
class Checked:
    """A verified HTTP request: ``status`` 200 with the payload, or the error status."""

    status: int
    payload: Mapping[str, Any] | None = None
    error: str = ""


class _Clock:
    def __init__(self, now: float) -> None:
        self._now = now

    def now(self) -> float:
        return self._now


def signed_body(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Checked:
    """Whether Slack signed ``body`` with ``secret`` within the last 5 minutes: 200, else
    the status to answer (503 with no secret: fail closed)."""
    from slack_sdk.signature import SignatureVerifier  # slack_sdk is a runtime dependency

    if not secret.strip():
        return Checked(503, error="no signing secret configured (THELOOP_SLACK_SIGNING_SECRET)")
    if len(body) > MAX_BODY_BYTES:
        return Checked(413, error=f"body too large (at most {MAX_BODY_BYTES} bytes)")
    lowered = {key.lower(): value for key, value in headers.items()}
    stamp = lowered.get("x-slack-request-timestamp", "")
    if not stamp.isascii() or not stamp.isdigit():
        return Checked(401, error="missing or malformed X-Slack-Request-Timestamp")
    given = lowered.get("x-slack-signature")
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not _signed_raw(secret, stamp, body, given, now):
            return Checked(401, error="bad signature or stale timestamp")
        return Checked(400, error=f"body: not UTF-8 (byte {exc.start})")
    verifier = SignatureVerifier(secret, clock=_Clock(now))
    if not verifier.is_valid(body, stamp, given):
        return Checked(401, error="bad signature or stale timestamp")
    return Checked(200)


#: Slack's window: a request signed longer ago than this (or ahead of us) is refused.
_TOLERANCE_SECONDS = 300


def _signed_raw(secret: str, stamp: str, body: bytes, given: str | None, now: float) -> bool:
    """Slack's ``v0`` signature over raw bytes, for the bodies slack_sdk's verifier cannot
    decode: HMAC-SHA256 of ``v0:<timestamp>:<body>``, compared in constant time."""
    if given is None or abs(now - int(stamp)) > _TOLERANCE_SECONDS:
        return False
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    expected = f"v0={digest.hexdigest()}".encode()
    return hmac.compare_digest(expected, given.encode("utf-8", "replace"))
