"""The webhook's signature: HMAC-SHA256 over version, timestamp and raw body (docs/webhook.md).

``X-TheLoop-Signature: v1=<hex HMAC-SHA256(secret, "v1:" + timestamp + ":" + body)>`` and
``X-TheLoop-Timestamp: <unix seconds>``. The timestamp is inside the signed bytes, so a
captured request cannot be replayed outside the ±300 s window with a fresh timestamp.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

SIGNATURE_HEADER = "X-TheLoop-Signature"
TIMESTAMP_HEADER = "X-TheLoop-Timestamp"
VERSION = "v1"
#: How far a request's timestamp may be from our clock, either way.
TOLERANCE_SECONDS = 300
#: A timestamp is unix seconds; more digits than this is not a time, it is noise.
_MAX_TIMESTAMP_DIGITS = 12


class SignatureError(ValueError):
    """The request is not provably from the holder of the secret; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def sign(secret: str, timestamp: int | str, body: bytes) -> str:
    """The signature header value for ``body`` sent at ``timestamp``."""
    message = f"{VERSION}:{timestamp}:".encode() + body
    digest = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return f"{VERSION}={digest}"


def verify(secret: str, headers: Mapping[str, str], body: bytes, now: float) -> None:
    """Raise :class:`SignatureError` unless ``headers`` sign ``body`` within the window.

    ``headers`` is looked up case-insensitively. The comparison is constant-time
    (``hmac.compare_digest``) so the answer's timing does not leak the signature.
    """
    lowered = {name.lower(): value for name, value in headers.items()}
    raw_ts = lowered.get(TIMESTAMP_HEADER.lower(), "").strip()
    given = lowered.get(SIGNATURE_HEADER.lower(), "").strip()
    if not raw_ts:
        raise SignatureError(f"missing header {TIMESTAMP_HEADER}")
    if not given:
        raise SignatureError(f"missing header {SIGNATURE_HEADER}")
    if not (raw_ts.isascii() and raw_ts.isdigit()) or len(raw_ts) > _MAX_TIMESTAMP_DIGITS:
        raise SignatureError(f"{TIMESTAMP_HEADER} is not unix seconds")
    if abs(now - int(raw_ts)) > TOLERANCE_SECONDS:
        raise SignatureError(
            f"stale timestamp: {TIMESTAMP_HEADER} is more than {TOLERANCE_SECONDS} s from now"
        )
    expected = sign(secret, raw_ts, body)
    if not hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace")):
        raise SignatureError("bad signature")
