"""What every peer service's client holds: its base URL, its token, how long a call may
take, how much of an answer is read, and the HTTP function it calls through.

:class:`~looproom.clients.github.GitHub` and :class:`~looproom.clients.the_loop.LoopApi`
build on it; each adds its own headers and endpoints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from looproom.http.client import MAX_ANSWER_BYTES, USER_AGENT, HttpResult, http

#: ``fetch(method, url, headers, body, timeout, **options)``: the shared client, or a test's.
Fetch = Callable[..., HttpResult]


class Service:
    """One peer service at ``api`` (its base URL), called with ``token`` when there is one."""

    def __init__(
        self,
        api: str,
        token: str = "",
        *,
        timeout: float = 15.0,
        user_agent: str = USER_AGENT,
        max_bytes: int = MAX_ANSWER_BYTES,
        fetch: Fetch = http,
    ) -> None:
        self.api = api.rstrip("/")
        self._token, self._timeout, self._agent = token, timeout, user_agent
        self._max_bytes, self._fetch = max_bytes, fetch

    def _send(self, method: str, url: str, headers: Mapping[str, str], data: Any) -> HttpResult:
        """One call to ``url``, within this client's timeout and answer cap."""
        return self._fetch(
            method, url, dict(headers), data, self._timeout, max_bytes=self._max_bytes
        )
