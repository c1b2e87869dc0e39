"""The HTTP rules both paths keep: how much of a body is read, and how long a peer asks us to wait.

The bot serves two signed endpoints — the-loop's events and Slack's presses — and reads
no more of either body than :data:`MAX_BODY_BYTES`. It calls two kinds of peer — Slack,
and GitHub or the-loop for the relay — and any of them may answer "not now" with a
``Retry-After``; :func:`retry_after` reads it the same way for all.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

#: A the-loop event with a 4,000-character excerpt is ~6 KB and Slack's interactive
#: payloads are far smaller: a body past this is refused before it is parsed.
MAX_BODY_BYTES = 256 * 1024


def header(headers: Mapping[str, Any], name: str) -> str:
    """One header's value, whatever its case; the first of a list (slack_sdk keeps lists)."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            first = value[0] if isinstance(value, list | tuple) and value else value
            return str(first).strip()
    return ""


def retry_after(headers: Mapping[str, Any], now: float) -> float | None:
    """Seconds a peer asks us to wait: ``Retry-After`` in seconds or as an HTTP date, else
    GitHub's ``x-ratelimit-reset`` (when the limit resets, in unix seconds); ``None`` when
    the answer names no wait, or one that cannot be read."""
    raw = header(headers, "retry-after")
    if raw:
        try:
            return max(0.0, float(raw))
        except ValueError:
            pass
        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - now)
        except (TypeError, ValueError):
            return None
    reset = header(headers, "x-ratelimit-reset")
    return max(0.0, float(reset) - now) if reset.isdigit() else None
