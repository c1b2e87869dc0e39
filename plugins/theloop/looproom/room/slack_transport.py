"""The one way to Slack: typed replies, bounded inline retries, per-channel pacing.

Every Slack Web API call the bot makes for the-loop goes through :class:`SlackTransport`.
It never raises for a Slack or network failure: each call returns a :class:`Reply` whose
``kind`` says what the caller can do about it (retry later, park, re-render). Retries are
layered, because slack_sdk's retry handlers share one attempt count (so a long outage
would spend every handler's tries at once):
a short one inline (429 with a short ``Retry-After``; 5xx and connection errors, only for
calls that cannot post twice) and everything longer at the queue, by the caller returning
``RetryLater``. Posting is paced per channel (≈1 message/s, bursts allowed) by telling the
caller how long to wait — nothing here sleeps for pacing. Every other method keeps its
Slack tier's budget for the whole workspace (``looproom.room.slack_limits``), shared by all
delivery slots: a short wait for its turn is made inline, a longer one is answered as a
429 without calling Slack; a 429 holds only the method it answered (for a post, the channel).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.error import URLError

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
    ServerErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from looproom import http_rules
from looproom.room.slack_limits import MethodLimits
from looproom.times import later, slack_seconds

log = logging.getLogger(__name__)

# What a Reply is, for the caller (see Reply.kind).
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
#: Calls that would post a second message if repeated after an uncertain failure. They are
#: retried inline only where Slack certainly did not act (429, connection refused); any
#: other retry goes through the queue, which first looks for the message (metadata).
NON_REPEATABLE = frozenset({"chat.postMessage", "chat.postEphemeral"})
#: Limited per channel (the pacer), not per method across the workspace.
PER_CHANNEL = frozenset({"chat.postMessage"})

#: Inline waits longer than this are handed to the queue instead of sleeping a worker.
DEFAULT_MAX_INLINE_WAIT = 2.0
_CHANNEL_ID = re.compile(r"^[CGD][A-Z0-9]{6,}$")


@dataclass(frozen=True)
class Reply:
    """What one Slack call came back with; ``kind`` is the caller's next move."""

    method: str
    ok: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""
    status: int = 200
    retry_after: float | None = None
    #: The answer's HTTP headers (``auth.test`` names the token's scopes in one).
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)

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


@dataclass(frozen=True)
class ChannelLookup:
    """Where a room name led: its id (``""``: not found), whether the bot is in it, and
    whether a listing was cut short before it was found (then use the room's id)."""

    id: str = ""
    member: bool = False
    truncated: bool = False
    reply: Reply = field(default_factory=lambda: Reply("", True))


def is_channel_id(room: str) -> bool:
    """Whether ``room`` is already a conversation id (C…/G…/D…) rather than a name."""
    return bool(_CHANNEL_ID.match(room))


class Pacer:
    """A token bucket per channel: ``rate`` posts/s on average, ``burst`` at once.

    Slack allows about one ``chat.postMessage`` per second per channel with short bursts
    (its documented rate limit). The caller asks :meth:`wait` and, when it is not zero, returns
    ``RetryLater(after=wait)`` to the queue rather than sleeping.
    """

    _MAX_KEYS = 1000  # forget idle channels past this many (a full bucket is the default)

    def __init__(
        self, rate: float = 1.0, burst: float = 3.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._rate, self._burst, self._clock = rate, burst, clock
        self.clock = clock  # the transport's method limits keep the same time
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._held: dict[str, float] = {}  # key -> no post before this time (a 429)
        self._lock = threading.Lock()

    def _tokens(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (self._burst, now))
        return min(self._burst, tokens + (now - at) * self._rate)

    def wait(self, key: str) -> float:
        """Seconds until ``key`` may post (0.0: now)."""
        with self._lock:
            now = self._clock()
            tokens = self._tokens(key, now)
            held = max(0.0, self._held.get(key, now) - now)
        return max(held, 0.0 if tokens >= 1.0 else (1.0 - tokens) / self._rate)

    def hold(self, key: str, seconds: float) -> None:
        """No post for ``key`` during ``seconds`` (Slack said 429 with this Retry-After)."""
        with self._lock:
            now = self._clock()
            self._held = {k: t for k, t in self._held.items() if t > now}
            self._held[key] = max(self._held.get(key, now), now + seconds)

    def take(self, key: str) -> None:
        """Spend one post for ``key`` (the caller posts whether or not it waited)."""
        with self._lock:
            now = self._clock()
            self._buckets[key] = (self._tokens(key, now) - 1.0, now)
            if len(self._buckets) > self._MAX_KEYS:
                self._forget_full(now)

    def _forget_full(self, now: float) -> None:
        full = [key for key in self._buckets if self._tokens(key, now) >= self._burst]
        for key in full:
            del self._buckets[key]


def _method_of(request: HttpRequest) -> str:
    return request.url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]


class _ShortRateLimitRetry(RateLimitErrorRetryHandler):
    """Honour a short ``Retry-After`` inline; a long one goes back to the queue. Each 429
    waited out here is told to ``on_retry`` (the method, the wait), since the caller only
    sees the final answer."""

    def __init__(
        self, max_retry_count: int, max_wait: float, on_retry: Callable[[str, float], None]
    ) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self._max_wait = max_wait
        self._on_retry = on_retry

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
        return _retry_after(response.headers) <= self._max_wait

    def prepare_for_next_attempt(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        after = _retry_after(response.headers) if response is not None else 1.0
        self._on_retry(_method_of(request), after)
        super().prepare_for_next_attempt(
            state=state, request=request, response=response, error=error
        )


class _RepeatableServerErrorRetry(ServerErrorRetryHandler):
    """Retry a 5xx inline only where repeating the call cannot post twice."""

    def _can_retry(self, *, state, request, response=None, error=None) -> bool:  # type: ignore[no-untyped-def]
        repeatable = _method_of(request) not in NON_REPEATABLE
        return repeatable and super()._can_retry(
            state=state, request=request, response=response, error=error
        )


class _RepeatableConnectionErrorRetry(ConnectionErrorRetryHandler):
    """Retry a network error inline when the call is repeatable or never reached Slack."""

    def _can_retry(self, *, state, request, response=None, error=None) -> bool:  # type: ignore[no-untyped-def]
        refused = isinstance(error, URLError) and isinstance(error.reason, ConnectionRefusedError)
        repeatable = refused or _method_of(request) not in NON_REPEATABLE
        return repeatable and super()._can_retry(
            state=state, request=request, response=response, error=error
        )


def _retry_after(headers: Mapping[str, Any]) -> float:
    """Seconds a 429 asks us to wait; a second when it names none we can read."""
    after = http_rules.retry_after(headers, time.time())
    return 1.0 if after is None else after


def retry_handlers(
    max_inline_wait: float = DEFAULT_MAX_INLINE_WAIT,
    on_rate_limited: Callable[[str, float], None] = lambda _method, _after: None,
) -> list[Any]:
    """The inline retry policy: one short retry each, sharing slack_sdk's attempt count.
    ``on_rate_limited`` hears of each 429 that is retried inline (its method, its wait)."""
    # One quick second try (~0.25-0.5 s); a longer outage is the queue's to wait out.
    quick = BackoffRetryIntervalCalculator(backoff_factor=0.25)
    return [
        _ShortRateLimitRetry(1, max_inline_wait, on_rate_limited),
        _RepeatableServerErrorRetry(max_retry_count=1, interval_calculator=quick),
        _RepeatableConnectionErrorRetry(max_retry_count=1, interval_calculator=quick),
    ]


class SlackTransport:
    """Slack Web API calls for the-loop's room, each answered with a :class:`Reply`."""

    def __init__(
        self,
        client: WebClient,
        *,
        pacer: Pacer | None = None,
        limits: MethodLimits | None = None,
        max_inline_wait: float = DEFAULT_MAX_INLINE_WAIT,
    ) -> None:
        self._client = client
        self.pacer = pacer or Pacer()
        self.limits = limits or MethodLimits(clock=self.pacer.clock)
        self._max_inline_wait = max_inline_wait
        #: Told of every 429 Slack answers, retried inline or not (the metrics).
        self.on_rate_limited: Callable[[], None] = lambda: None

    def file_info(self, file_id: str) -> Reply:
        """``files.info``: a file as Slack knows it now (a voice clip's transcript done?)."""
        return self._call("files.info", {"file": file_id})

    def token(self) -> str:
        """The bot token the client calls with: a file's private URL opens with it too."""
        return str(getattr(self._client, "token", "") or "")

    @classmethod
    def beside(
        cls,
        client: WebClient,
        *,
        pacer: Pacer | None = None,
        timeout: int = 15,
        max_inline_wait: float = DEFAULT_MAX_INLINE_WAIT,
    ) -> SlackTransport:
        """A transport on a sibling of ``client`` (the backend's own ``slack_web``).

        Same token, base URL, proxy and TLS settings; our retry policy and timeout. The
        backend's client is left as the backend configured it, so its own calls keep
        their behaviour and never sleep on our account.
        """
        # A 429 retried inline never reaches the transport's answer: the handler tells the
        # transport, whose on_rate_limited is looked up at each 429 so a later assignment
        # counts, and whose limits hold the method for every slot meanwhile.
        handlers = retry_handlers(max_inline_wait, lambda m, s: transport.rate_limited(m, s))
        sibling = WebClient(
            token=client.token,
            base_url=client.base_url,
            timeout=timeout,
            ssl=client.ssl,
            proxy=client.proxy,
            retry_handlers=handlers,
        )
        transport = cls(sibling, pacer=pacer, max_inline_wait=max_inline_wait)
        return transport

    def rate_limited(self, method: str, retry_after: float) -> None:
        """Slack answered ``method`` 429: counted, and the method held for everyone (a
        post's channel is held by :meth:`post_message`, which knows it)."""
        self.on_rate_limited()
        if method not in PER_CHANNEL:
            self.limits.hold(method, retry_after)

    # -- posting -------------------------------------------------------------------

    def post_wait(self, channel: str) -> float:
        """Seconds before ``channel`` may take another message (0.0: now)."""
        return self.pacer.wait(channel)

    def post_message(
        self,
        channel: str,
        *,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Reply:
        """``chat.postMessage``; spends one of ``channel``'s posts from the pacer."""
        self.pacer.take(channel)
        args: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False}
        args.update(_optional(blocks=blocks, thread_ts=thread_ts, metadata=metadata))
        reply = self._call("chat.postMessage", args)
        if reply.kind == RATE_LIMITED:
            self.pacer.hold(channel, reply.retry_after or 1.0)
        return reply

    def update_message(
        self,
        channel: str,
        ts: str,
        *,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Reply:
        """``chat.update`` of the message at ``ts`` (a channel id is required)."""
        args = {"channel": channel, "ts": ts, "text": text}
        args.update(_optional(blocks=blocks, metadata=metadata))
        return self._call("chat.update", args)

    def post_ephemeral(
        self, channel: str, user: str, *, text: str, thread_ts: str | None = None
    ) -> Reply:
        """``chat.postEphemeral``: a message only ``user`` sees."""
        args = {"channel": channel, "user": user, "text": text}
        args.update(_optional(thread_ts=thread_ts))
        return self._call("chat.postEphemeral", args)

    def open_view(self, trigger_id: str, view: Mapping[str, Any]) -> Reply:
        """``views.open``: a form, within the few seconds a trigger is good for."""
        return self._call("views.open", {"trigger_id": trigger_id, "view": dict(view)})

    def add_reaction(self, channel: str, ts: str, name: str) -> Reply:
        """``reactions.add``; a reaction already there counts as done."""
        reply = self._call("reactions.add", {"channel": channel, "timestamp": ts, "name": name})
        if reply.error == "already_reacted":
            return Reply(reply.method, True, reply.data)
        return reply

    # -- reading -------------------------------------------------------------------

    def history(
        self, channel: str, *, limit: int = 200, cursor: str = "", oldest: str = ""
    ) -> Reply:
        """One page of ``conversations.history`` (newest first), metadata included;
        ``oldest``: only messages after it."""
        args = {"channel": channel, "limit": limit, "include_all_metadata": True}
        args.update(_optional(cursor=cursor or None, oldest=oldest or None))
        return self._call("conversations.history", args)

    def top_level(
        self, channel: str, oldest: str, *, max_pages: int = 10
    ) -> list[Mapping[str, Any]] | None:
        """The room's top-level messages after ``oldest``, oldest first (at most
        ``max_pages`` pages of 200); ``None`` when Slack did not answer."""
        found: list[Mapping[str, Any]] = []
        cursor = ""
        for _ in range(max_pages):
            reply = self.history(channel, cursor=cursor, oldest=oldest)
            if not reply.ok:
                return None
            messages = [m for m in reply.data.get("messages") or [] if isinstance(m, Mapping)]
            found.extend(
                m
                for m in messages
                if later(str(m.get("ts") or ""), oldest)
                and str(m.get("thread_ts") or m.get("ts")) == str(m.get("ts"))
            )
            cursor = next_cursor(reply)
            if not cursor:
                break
        return sorted(found, key=lambda m: slack_seconds(str(m.get("ts") or "")))

    def replies(
        self, channel: str, ts: str, *, limit: int = 200, cursor: str = "", oldest: str = ""
    ) -> Reply:
        """One page of ``conversations.replies`` (parent first), metadata included;
        ``oldest``: only messages after it (Slack keeps the parent in the first page)."""
        args = {"channel": channel, "ts": ts, "limit": limit, "include_all_metadata": True}
        args.update(_optional(cursor=cursor or None, oldest=oldest or None))
        return self._call("conversations.replies", args)

    def thread(
        self, channel: str, thread: str, oldest: str = "", *, max_pages: int = 10
    ) -> list[Mapping[str, Any]] | None:
        """Every reply in ``thread`` (after ``oldest``), oldest first, the parent left out,
        at most ``max_pages`` pages of 200; ``None`` when Slack did not answer."""
        found: list[Mapping[str, Any]] = []
        cursor = ""
        for _ in range(max_pages):
            reply = self.replies(channel, thread, cursor=cursor, oldest=oldest)
            if not reply.ok:
                return None
            messages = [m for m in reply.data.get("messages") or [] if isinstance(m, Mapping)]
            found.extend(m for m in messages if later(str(m.get("ts") or ""), oldest or thread))
            cursor = next_cursor(reply)
            if not cursor:
                break
        return found

    def users_page(self, cursor: str = "") -> tuple[bool, str, list[Mapping[str, Any]], str]:
        """One page of ``users.list``: ``(ok, error, members, next cursor)`` — what
        ``looproom.decide.members`` resolves handles with."""
        args: dict[str, Any] = {"limit": 200}
        args.update(_optional(cursor=cursor or None))
        reply = self._call("users.list", args)
        if not reply.ok:
            return False, reply.error or f"status {reply.status}", [], ""
        members = reply.data.get("members")
        return True, "", list(members) if isinstance(members, list) else [], next_cursor(reply)

    def find_channel(self, name: str, *, max_pages: int = 10) -> tuple[str, Reply]:
        """The id of the room called ``name`` (``#`` optional), or ``""``; and the last reply.

        As :meth:`lookup_channel` finds it; a listing cut short answers ``listing_truncated``.
        """
        found = self.lookup_channel(name, max_pages=max_pages)
        if found.id or not found.truncated:
            return found.id, found.reply
        return "", Reply(found.reply.method, False, error="listing_truncated")

    def lookup_channel(self, room: str, *, max_pages: int = 10) -> ChannelLookup:
        """Find ``room`` (a name, ``#`` optional, or an id): the bot's own rooms first.

        ``users.conversations`` lists the rooms the bot is in, private ones included, which
        a workspace listing may not show; only then ``conversations.list`` (up to
        ``max_pages`` pages of 1000), which also finds a room the bot is not in yet.
        """
        mine = self._scan("users.conversations", room, max_pages)
        if mine.id:
            return mine
        listed = self._scan("conversations.list", room, max_pages)
        truncated = mine.truncated or listed.truncated
        return ChannelLookup(listed.id, listed.member, truncated, listed.reply)

    def _scan(self, method: str, room: str, max_pages: int) -> ChannelLookup:
        by_id, cursor = is_channel_id(room), ""
        wanted = room if by_id else room.lstrip("#").lower()
        reply = Reply(method, True)
        for _ in range(max_pages):
            args = {"types": "public_channel,private_channel", "limit": 1000}
            args.update(_optional(exclude_archived=True, cursor=cursor or None))
            reply = self._call(method, args)
            if not reply.ok:
                return ChannelLookup(reply=reply)
            for channel in reply.data.get("channels") or []:
                key = str(channel.get("id", "")) if by_id else str(channel.get("name", "")).lower()
                if key == wanted:
                    member = method == "users.conversations" or bool(channel.get("is_member"))
                    return ChannelLookup(str(channel.get("id", "")), member, reply=reply)
            cursor = next_cursor(reply)
            if not cursor:
                return ChannelLookup(reply=reply)
        return ChannelLookup(truncated=True, reply=reply)

    def auth_test(self) -> Reply:
        """``auth.test``: whether the token is good, whose it is; its scopes in ``headers``."""
        return self._call("auth.test", {})

    def delete_message(self, channel: str, ts: str) -> Reply:
        """``chat.delete`` of one of the bot's own messages."""
        return self._call("chat.delete", {"channel": channel, "ts": ts})

    # -- the call --------------------------------------------------------------------

    def _call(self, method: str, args: dict[str, Any]) -> Reply:
        wait = self.limits.reserve(method, self._max_inline_wait)
        if wait is None:  # Slack would answer 429: say so without asking it
            after = self.limits.wait(method)
            log.debug(
                "slack %s held back %.1f s: the workspace's budget for it is spent", method, after
            )
            return Reply(method, False, error="ratelimited", status=429, retry_after=after)
        if wait > 0:
            time.sleep(wait)  # a short turn, in this slot only
        try:
            # slack_sdk's own method encodes each call as Slack expects (verb, JSON/form).
            response = getattr(self._client, method.replace(".", "_"))(**args)
        except SlackApiError as error:
            reply = _from_error(method, error)
        except Exception as error:
            reply = Reply(method, False, error=f"connection: {type(error).__name__}", status=0)
        else:
            return Reply(
                method,
                True,
                dict(response.data or {}),
                status=response.status_code,
                headers=dict(response.headers or {}),
            )
        if reply.kind == RATE_LIMITED:
            self.rate_limited(method, reply.retry_after or 1.0)
        log.warning("slack %s failed: %s (status %s)", method, reply.error, reply.status)
        return reply


def next_cursor(reply: Reply) -> str:
    """The cursor for the next page of a listing, or ``""``."""
    return str((reply.data.get("response_metadata") or {}).get("next_cursor") or "")


def _optional(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _from_error(method: str, error: SlackApiError) -> Reply:
    response = error.response
    data = response.data if isinstance(response.data, dict) else {}
    status = int(getattr(response, "status_code", 0) or 0)
    retry_after = _retry_after(response.headers or {}) if status == 429 else None
    code = str(data.get("error") or f"http_{status}")
    return Reply(method, False, data, error=code, status=status, retry_after=retry_after)
