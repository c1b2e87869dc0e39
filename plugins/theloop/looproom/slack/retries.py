"""The inline retries slack_sdk makes for the transport: short, and never a second post.

slack_sdk's retry handlers share one attempt count, so each gets one quick try here; a
longer outage is the queue's to wait out (the caller returns ``RetryLater``). A call that
would post twice is retried inline only where Slack certainly did not act.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.error import URLError

from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from looproom.http import rules as http_rules

#: Calls that would post a second message if repeated after an uncertain failure. They are
#: retried inline only where Slack certainly did not act (429, connection refused); any
#: other retry goes through the queue, which first looks for the message (metadata).
NON_REPEATABLE = frozenset({"chat.postMessage", "chat.postEphemeral"})
#: Inline waits longer than this are handed to the queue instead of sleeping a worker.
DEFAULT_MAX_INLINE_WAIT = 2.0


def _method_of(request: HttpRequest) -> str:
    return request.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


class _ShortRateLimitRetry(RateLimitErrorRetryHandler):
    """Honour a short ``Retry-After`` inline; a long one goes back to the queue. Each 429
    waited out here is told to ``on_retry`` (the method, the wait), since the caller only
    sees the final answer."""

    def __init__(
        self,
        max_retry_count: int,
        max_wait: float,
        on_retry: Callable[[str, float], None],
        alone: Callable[[str], bool],
    ) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self._max_wait = max_wait
        self._on_retry = on_retry
        self._alone = alone

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is None or response.status_code != 429:
            return False
        # Not beside another slot's call that is finding out whether Slack takes more.
        return retry_wait(response.headers) <= self._max_wait and self._alone(_method_of(request))

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        after = retry_wait(response.headers) if response is not None else 1.0
        self._on_retry(_method_of(request), after)
        super().prepare_for_next_attempt(
            state=state, request=request, response=response, error=error
        )


class _RepeatableServerErrorRetry(ServerErrorRetryHandler):
    """Retry a 5xx inline only where repeating the call cannot post twice."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        repeatable = _method_of(request) not in NON_REPEATABLE
        return repeatable and super()._can_retry(
            state=state, request=request, response=response, error=error
        )


class _RepeatableConnectionErrorRetry(ConnectionErrorRetryHandler):
    """Retry a network error inline when the call is repeatable or never reached Slack."""

    def _can_retry(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        refused = isinstance(error, URLError) and isinstance(error.reason, ConnectionRefusedError)
        repeatable = refused or _method_of(request) not in NON_REPEATABLE
        return repeatable and super()._can_retry(
            state=state, request=request, response=response, error=error
        )


def retry_wait(headers: Mapping[str, Any]) -> float:
    """Seconds a 429 asks us to wait; a second when it names none we can read."""
    after = http_rules.retry_after(headers, time.time())
    return 1.0 if after is None else after


def retry_handlers(
    max_inline_wait: float = DEFAULT_MAX_INLINE_WAIT,
    on_rate_limited: Callable[[str, float], None] = lambda _method, _after: None,
    alone: Callable[[str], bool] = lambda _method: True,
) -> list[Any]:
    """The inline retry policy: one short retry each, sharing slack_sdk's attempt count.
    ``on_rate_limited`` hears of each 429 that is retried inline (its method, its wait);
    ``alone(method)``: whether a 429 of it may be retried inline (no other call is
    finding out whether Slack takes more)."""
    # One quick second try (~0.25-0.5 s); a longer outage is the queue's to wait out.
    quick = BackoffRetryIntervalCalculator(backoff_factor=0.25)
    return [
        _ShortRateLimitRetry(1, max_inline_wait, on_rate_limited, alone),
        _RepeatableServerErrorRetry(max_retry_count=1, interval_calculator=quick),
        _RepeatableConnectionErrorRetry(max_retry_count=1, interval_calculator=quick),
    ]
