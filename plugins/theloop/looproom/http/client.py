"""One HTTP request to a relay peer (GitHub, the-loop), and what its answer means.

Standard library only. A request never raises and never logs a header (tokens live
there); its answer is read into the queue's terms — delivered, retry later (a rate limit,
with the wait it names; a 5xx; no answer), or refused for good — quoting only the peer's
own short error message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from http.client import HTTPException
from typing import Any

from looproom.durable.outcome import Failed, Outcome, RetryLater
from looproom.http import rules as http_rules

USER_AGENT = "theloop-relay"
_MAX_ERROR = 200
#: How long to wait on a GitHub secondary rate limit that names no time (its docs: a minute).
SECONDARY_WAIT = 60.0


@dataclass(frozen=True)
class HttpResult:
    """One HTTP answer; ``status`` 0 means no answer at all (connection, timeout).

    ``sent``: with status 0, the request went out before it failed (a read timeout, a
    dropped connection), so the peer may have acted on it; False when it never left
    (refused, DNS, a connect timeout).
    """

    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    error: str = ""
    sent: bool = False

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    def header(self, name: str) -> str:
        """One header's value, whatever its case in the answer; ``""`` when absent."""
        return http_rules.header(self.headers, name)

    def next_page(self, api: str) -> str | None:
        """The ``Link: rel="next"`` page, when it lies under ``api`` (never another host)."""
        for part in self.header("link").split(","):
            target, _, params = part.partition(";")
            target = target.strip().removeprefix("<").removesuffix(">")
            if 'rel="next"' in params and target.startswith(api + "/"):
                return target
        return None


def http(
    method: str, url: str, headers: Mapping[str, str], data: Any, timeout: float
) -> HttpResult:
    """One request with the stdlib; never raises, never logs a header (tokens live there)."""
    body = None if data is None else json.dumps(data).encode()
    request = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return HttpResult(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as error:
        return HttpResult(error.code, dict(error.headers or {}), error.read() or b"")
    except urllib.error.URLError as error:  # urllib wraps what fails before the request is out
        return HttpResult(0, {}, error=type(error.reason).__name__)
    except ValueError as error:  # not a URL urllib can open: nothing was sent
        return HttpResult(0, {}, error=type(error).__name__)
    except (OSError, HTTPException) as error:  # waiting for or reading the answer
        return HttpResult(0, {}, error=type(error).__name__, sent=True)


def outcome_of(answer: HttpResult, what: str, now: float) -> Outcome | None:
    """The outcome an error answer means — ``None`` for success (2xx)."""
    if 200 <= answer.status < 300:
        return None
    if answer.status == 0:
        how = "no answer after sending" if answer.sent else "unreachable"
        return RetryLater(f"{what} {how} ({answer.error or 'no answer'})")
    said = _message(answer)
    if answer.status == 429 or (answer.status == 403 and _rate_limited(answer, said)):
        after = http_rules.retry_after(answer.headers, now)
        if after is None and answer.status == 403:
            after = SECONDARY_WAIT  # GitHub: a secondary limit naming no time is "a minute"
        return RetryLater(f"{what} rate limit", after)
    if answer.status >= 500 or answer.status == 408:
        return RetryLater(f"{what} answered {answer.status}{said}")
    return Failed(f"{what} refused it ({answer.status}{said})")


def _rate_limited(answer: HttpResult, said: str) -> bool:
    """A 403 that is GitHub's primary or secondary rate limit, not a refusal."""
    return (
        answer.header("x-ratelimit-remaining") == "0"
        or bool(answer.header("retry-after"))
        or "rate limit" in said.lower()
    )


def _message(answer: HttpResult) -> str:
    """The peer's own short error message, if it gave one (GitHub ``message``, FastAPI
    ``detail``) — capped, and only ever the peer's words, never ours or a header."""
    data = answer.json()
    if not isinstance(data, dict):
        return ""
    text = data.get("message") or data.get("detail") or data.get("error") or ""
    text = text if isinstance(text, str) else json.dumps(text)
    return f": {' '.join(text.split())[:_MAX_ERROR]}" if text else ""
