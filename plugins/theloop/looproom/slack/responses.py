"""What one Slack call came back with, and what the caller can do about it.

Every call the transport makes answers a :class:`Response`; its ``kind`` sorts Slack's many
errors into the few moves a caller has: retry later, park, tell the operator, re-render.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError

from looproom.slack.retries import retry_wait

# What a Response is, for the caller (see Response.kind).
OK = "ok"
RATE_LIMITED = "rate_limited"  # 429: wait Retry-After, then the same call
UNAVAILABLE = "unavailable"  # 5xx, network: back off; a post may or may not have landed
AUTH = "auth"  # token or scope: the operator must act; keep the work queued
ROOM = "room"  # the channel refuses us: no rendering can fix it
GONE = "gone"  # the message or thread we referred to no longer exists
REJECTED = "rejected"  # Slack refused this payload (invalid_blocks, msg_too_long…)

_UNAVAILABLE_ERRORS = frozenset(
    {"internal_error", "fatal_error", "service_unavailable", "request_timeout"}
)
_AUTH_ERRORS = frozenset(
    {
        "not_authed",
        "invalid_auth",
        "account_inactive",
        "token_revoked",
        "token_expired",
        "no_permission",
        "missing_scope",
        "not_allowed_token_type",
        "ekm_access_denied",
        "team_access_not_granted",
        "access_denied",
    }
)
_ROOM_ERRORS = frozenset(
    {"channel_not_found", "not_in_channel", "is_archived", "restricted_action", "user_not_found"}
)
_GONE_ERRORS = frozenset(
    {"message_not_found", "thread_not_found", "cant_update_message", "edit_window_closed"}
)
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")


@dataclass(frozen=True)
class Response:
    """What one Slack call came back with; ``kind`` is the caller's next move."""

    method: str
    ok: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""
    status: int = 200
    retry_after: float | None = None
    #: The answer's HTTP headers (``auth.test`` names the token's scopes in one).
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def held_back(cls, method: str, after: float) -> Response:
        """The 429 Slack would answer a call over its budget, said without asking it: the
        budget is spent for ``after`` seconds more."""
        return cls(method, False, error="ratelimited", status=429, retry_after=after)

    @classmethod
    def from_error(cls, method: str, error: SlackApiError) -> Response:
        """What Slack answered with an error (its HTTP status, its ``error``, a 429's wait)."""
        response = error.response
        data = response.data if isinstance(response.data, dict) else {}
        status = int(getattr(response, "status_code", 0) or 0)
        retry_after = retry_wait(response.headers or {}) if status == 429 else None
        code = str(data.get("error") or f"http_{status}")
        return cls(method, False, data, error=code, status=status, retry_after=retry_after)

    @property
    def kind(self) -> str:
        """OK, RATE_LIMITED, UNAVAILABLE, AUTH, ROOM, GONE or REJECTED."""
        if self.ok:
            return OK
        if self.status == 429 or self.error in ("ratelimited", "rate_limited"):
            return RATE_LIMITED
        if self.status == 0 or self.status >= 500 or self.error in _UNAVAILABLE_ERRORS:
            return UNAVAILABLE
        for kind, errors in ((AUTH, _AUTH_ERRORS), (ROOM, _ROOM_ERRORS), (GONE, _GONE_ERRORS)):
            if self.error in errors:
                return kind
        return REJECTED

    @property
    def ts(self) -> str:
        """The ``ts`` Slack gave the message (postMessage/update), or ``""``."""
        return str(self.data.get("ts") or "")

    @property
    def channel(self) -> str:
        """The channel id Slack answered with (a posted name comes back as an id)."""
        return str(self.data.get("channel") or "")


def is_channel_id(room: str) -> bool:
    """Whether ``room`` is already a conversation id (C…/G…/D…) rather than a name."""
    return bool(_CHANNEL_ID.match(room))


def next_cursor(response: Response) -> str:
    """The cursor for the next page of a listing, or ``""``."""
    return str((response.data.get("response_metadata") or {}).get("next_cursor") or "")
