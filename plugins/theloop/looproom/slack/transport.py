"""The one way to Slack: typed responses, bounded inline retries, per-channel pacing.

Every Slack Web API call the bot makes for the-loop goes through :class:`SlackTransport`.
It never raises for a Slack or network failure: each call returns a :class:`Response` whose
``kind`` says what the caller can do about it (retry later, park, re-render). Retries are
layered, because slack_sdk's retry handlers share one attempt count (so a long outage
would spend every handler's tries at once): a short one inline (429 with a short
``Retry-After``; 5xx and connection errors, only for calls that cannot post twice) and
everything longer at the queue, by the caller returning ``RetryLater``. Posts are paced
per channel (≈1 message/s, bursts allowed; ``pacer``) and every other method keeps its
Slack tier's budget for the whole workspace (``limits``), each shared by all delivery
slots: a short wait for a turn is made inline, a longer one is answered as a 429 without
calling Slack (unless the caller said how long it may wait: the parent's redraw waits its
turn); a 429 holds only the method it answered (for a post, the channel), and after it
that method goes one call at a time until Slack takes one again. The response kinds are in
``responses``, the inline retries in ``retries``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from looproom.durable import fence
from looproom.slack.directory import ChannelDirectory
from looproom.slack.limits import HISTORY_PAGE, MethodLimits
from looproom.slack.pacer import Pacer
from looproom.slack.responses import RATE_LIMITED, Response, next_cursor
from looproom.slack.retries import DEFAULT_MAX_INLINE_WAIT, retry_handlers
from looproom.times import later, slack_seconds

log = logging.getLogger(__name__)

#: Limited per channel (the pacer), not per method across the workspace.
PER_CHANNEL = frozenset({"chat.postMessage"})
#: The calls that change what the room shows: made only while a delivery's claim holds.
WRITES = frozenset({"chat.postMessage", "chat.update", "chat.delete", "reactions.add"})
#: Slack's ceiling on a message's ``text``: past it Slack does not keep the text as sent.
TEXT_LIMIT = 40_000
#: The most pages of a room or a thread one read takes.
PAGES = 10


def api_base(url: str) -> str:
    """The Slack Web API's base URL as slack_sdk takes it (ending in ``/``); Slack's own
    for ``""``."""
    return url.rstrip("/") + "/" if url else WebClient.BASE_URL


class SlackTransport:
    """Slack Web API calls for the-loop's room, each answered with a :class:`Response`."""

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
        #: The room names recent listings gave, so rooms starting at once read one listing.
        self.directory = ChannelDirectory()
        self._max_inline_wait = max_inline_wait
        #: Messages asked per page of the history methods (fewer for an app Slack limits).
        self.history_page = HISTORY_PAGE
        #: Told of every 429 Slack answers, retried inline or not (the metrics).
        self.on_rate_limited: Callable[[], None] = lambda: None
        self._closing = threading.Event()

    def close(self) -> None:
        """The bot is stopping: a call waiting for its turn stops waiting and answers 429
        (its work is the queue's again), so the delivery slots finish at once."""
        self._closing.set()

    def file_info(self, file_id: str) -> Response:
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
        base_url: str = "",
        pacer: Pacer | None = None,
        limits: MethodLimits | None = None,
        timeout: int = 15,
        max_inline_wait: float = DEFAULT_MAX_INLINE_WAIT,
    ) -> SlackTransport:
        """A transport on a sibling of ``client`` (the backend's own ``slack_web``).

        Same token, proxy and TLS settings; the Slack API at ``base_url`` when given
        (``THELOOP_SLACK_API_URL``), else at the client's; our retry policy and timeout.
        The backend's client is left as the backend configured it, so its own calls keep
        their behaviour and never sleep on our account.
        """
        # A 429 retried inline never reaches the transport's answer: the handler tells the
        # transport, whose on_rate_limited is looked up at each 429 so a later assignment
        # counts, and whose limits hold the method for every slot meanwhile — the retry
        # itself taking the call Slack gives back when the hold ends.
        handlers = retry_handlers(
            max_inline_wait,
            lambda m, s: transport.rate_limited(m, s, retried=True),
            lambda m: transport.retries_alone(m),
        )
        sibling = WebClient(
            token=client.token,
            base_url=api_base(base_url) if base_url else client.base_url,
            timeout=timeout,
            ssl=client.ssl,
            proxy=client.proxy,
            retry_handlers=handlers,
        )
        transport = cls(sibling, pacer=pacer, limits=limits, max_inline_wait=max_inline_wait)
        return transport

    def rate_limited(self, method: str, retry_after: float, *, retried: bool = False) -> None:
        """Slack answered ``method`` 429: counted, and the method held for everyone (a
        post's channel is held by :meth:`post_message`, which knows it); ``retried``: the
        call is made again inline when the hold ends."""
        self.on_rate_limited()
        if method not in PER_CHANNEL:
            self.limits.hold(method, retry_after, retried=retried)

    def retries_alone(self, method: str) -> bool:
        """Whether this thread may retry a 429 of ``method`` inline: a post never here (see
        :meth:`post_message`); another method only as the one call finding out whether
        Slack takes more, claimed at once so slots answered 429 together do not retry."""
        return method not in PER_CHANNEL and self.limits.find_out(method)

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
    ) -> Response:
        """``chat.postMessage`` in ``channel``'s turn (:meth:`_post_turn`). A 429 holds the
        channel; a short hold is waited out once, the retry taking a turn as Slack counts it."""
        args: dict[str, Any] = {"channel": channel, "text": _within(text), "unfurl_links": False}
        args.update(_optional(blocks=blocks, thread_ts=thread_ts, metadata=metadata))
        for _ in range(2):
            if not self._post_turn(channel):  # Slack would answer 429: say so without asking
                return Response.held_back("chat.postMessage", self.pacer.wait(channel))
            response = self._call("chat.postMessage", args)
            if response.kind != RATE_LIMITED:
                break
            self.pacer.hold(channel, 1.0 if response.retry_after is None else response.retry_after)
        return response

    def _post_turn(self, channel: str) -> bool:
        """Whether this slot has ``channel``'s next post: its turn taken from the pacer, after
        a short wait in this slot only (not when stopping, nor once a 429 held the channel)."""
        wait = self.pacer.reserve(channel, self._max_inline_wait)
        if wait is None:
            return False
        return wait <= 0 or not (self._closing.wait(wait) or self.pacer.held(channel) > 0)

    def update_message(
        self,
        channel: str,
        ts: str,
        *,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        metadata: Mapping[str, Any] | None = None,
        patience: float = 0.0,
    ) -> Response:
        """``chat.update`` of the message at ``ts`` (a channel id is required).
        ``patience``: seconds it may wait for the method's budget rather than answer 429."""
        args = {"channel": channel, "ts": ts, "text": _within(text)}
        args.update(_optional(blocks=blocks, metadata=metadata))
        return self._call("chat.update", args, patience)

    def post_ephemeral(
        self, channel: str, user: str, *, text: str, thread_ts: str | None = None
    ) -> Response:
        """``chat.postEphemeral``: a message only ``user`` sees."""
        args = {"channel": channel, "user": user, "text": _within(text)}
        args.update(_optional(thread_ts=thread_ts))
        return self._call("chat.postEphemeral", args)

    def open_view(self, trigger_id: str, view: Mapping[str, Any]) -> Response:
        """``views.open``: a form, within the few seconds a trigger is good for."""
        return self._call("views.open", {"trigger_id": trigger_id, "view": dict(view)})

    def add_reaction(self, channel: str, ts: str, name: str) -> Response:
        """``reactions.add``; a reaction already there counts as done."""
        response = self._call("reactions.add", {"channel": channel, "timestamp": ts, "name": name})
        if response.error == "already_reacted":
            return Response(response.method, True, response.data)
        return response

    # -- reading -------------------------------------------------------------------

    def history(
        self, channel: str, *, limit: int = 0, cursor: str = "", oldest: str = ""
    ) -> Response:
        """One page of ``conversations.history`` (newest first), metadata included;
        ``oldest``: only messages after it."""
        args = {"channel": channel, "limit": limit or self.history_page}
        args.update(_optional(cursor=cursor or None, oldest=oldest or None))
        return self._call("conversations.history", {**args, "include_all_metadata": True})

    def top_level(
        self, channel: str, oldest: str, turn: Callable[[], bool] = lambda: True
    ) -> list[Mapping[str, Any]] | None:
        """The room's top-level messages after ``oldest``, oldest first (at most ten pages);
        ``None`` when Slack did not answer, or when ``turn()`` — waiting for the method's
        budget before each page after the first (newest first: none can be kept alone) —
        says to stop."""
        found: list[Mapping[str, Any]] = []
        cursor = ""
        for page in range(PAGES):
            if page and not turn():
                return None
            response = self.history(channel, cursor=cursor, oldest=oldest)
            if not response.ok:
                return None
            messages = [m for m in response.data.get("messages") or [] if isinstance(m, Mapping)]
            found += [m for m in messages if later(str(m.get("ts") or ""), oldest) and _top(m)]
            cursor = next_cursor(response)
            if not cursor:
                break
        return sorted(found, key=lambda m: slack_seconds(str(m.get("ts") or "")))

    def replies(
        self, channel: str, ts: str, *, limit: int = 0, cursor: str = "", oldest: str = ""
    ) -> Response:
        """One page of ``conversations.replies`` (parent first), metadata included;
        ``oldest``: only messages after it (Slack keeps the parent in the first page)."""
        args = {"channel": channel, "ts": ts, "limit": limit or self.history_page}
        args.update(_optional(cursor=cursor or None, oldest=oldest or None))
        return self._call("conversations.replies", {**args, "include_all_metadata": True})

    def thread(
        self, channel: str, thread: str, oldest: str = "", *, so_far: bool = False
    ) -> list[Mapping[str, Any]] | None:
        """Every reply in ``thread`` (after ``oldest``), oldest first, the parent left out,
        at most ten pages; ``None`` when Slack did not answer. ``so_far``: when a later
        page cannot be had now (the budget spent, Slack failing), the pages read — replies
        come oldest first, so a reader resumes after them next time."""
        found: list[Mapping[str, Any]] = []
        cursor = ""
        for _ in range(PAGES):
            response = self.replies(channel, thread, cursor=cursor, oldest=oldest)
            if not response.ok:
                return found if so_far and cursor else None
            messages = [m for m in response.data.get("messages") or [] if isinstance(m, Mapping)]
            found.extend(m for m in messages if later(str(m.get("ts") or ""), oldest or thread))
            cursor = next_cursor(response)
            if not cursor:
                break
        return found

    def users_page(self, cursor: str = "") -> tuple[bool, str, list[Mapping[str, Any]], str]:
        """One page of ``users.list``: ``(ok, error, members, next cursor)`` — what
        ``looproom.decide.members`` resolves handles with."""
        args = {"limit": 200, **_optional(cursor=cursor or None)}
        # Past the burst each page waits its tier-2 turn (3 s): a large workspace is listed whole.
        response = self._call("users.list", args, patience=10.0)
        if not response.ok:
            return False, response.error or f"status {response.status}", [], ""
        members = response.data.get("members")
        return True, "", list(members) if isinstance(members, list) else [], next_cursor(response)

    def rooms_page(self, method: str, cursor: str = "") -> Response:
        """One page of 1000 rooms, private ones included, archived ones left out: of
        ``users.conversations`` (the bot's own) or ``conversations.list`` (the workspace's)."""
        args: dict[str, Any] = {"types": "public_channel,private_channel", "limit": 1000}
        args.update(_optional(exclude_archived=True, cursor=cursor or None))
        return self._call(method, args)

    def members(self, channel: str, *, max_pages: int = 10) -> frozenset[str] | None:
        """Who is in ``channel`` (``conversations.members``, pages of 1000); ``None`` when
        Slack did not say, or said more than ``max_pages`` pages (not all of them known)."""
        found: set[str] = set()
        cursor = ""
        for _ in range(max_pages):
            args = {"channel": channel, "limit": 1000, **_optional(cursor=cursor or None)}
            response = self._call("conversations.members", args)
            if not response.ok:
                return None
            found.update(str(m) for m in response.data.get("members") or [])
            cursor = next_cursor(response)
            if not cursor:
                return frozenset(found)
        return None

    def auth_test(self) -> Response:
        """``auth.test``: whether the token is good, whose it is; its scopes in ``headers``."""
        return self._call("auth.test", {})

    def delete_message(self, channel: str, ts: str) -> Response:
        """``chat.delete`` of one of the bot's own messages."""
        return self._call("chat.delete", {"channel": channel, "ts": ts})

    # -- the call --------------------------------------------------------------------

    def _call(self, method: str, args: dict[str, Any], patience: float = 0.0) -> Response:
        """One call of ``method`` in its turn; ``patience``: seconds it may wait for the
        method's budget (and through Slack's 429s) before answering 429 itself."""
        deadline = time.monotonic() + patience
        while True:
            left = deadline - time.monotonic()
            response = self._call_in_turn(method, args, max(self._max_inline_wait, left))
            if response.kind != RATE_LIMITED:
                return response
            pause = max(0.05, response.retry_after or 1.0)
            if pause > deadline - time.monotonic() or self._closing.wait(pause):
                return response  # (a wait for its turn, in this slot only, unless stopping)

    def _call_in_turn(self, method: str, args: dict[str, Any], most: float) -> Response:
        wait = self.limits.reserve(method, most)
        if wait is None:  # Slack would answer 429: say so without asking it
            return self._held_back(method)
        try:
            time.sleep(wait)  # a short turn, in this slot only (none: it goes at once)
            time.sleep(late := self.limits.leave(method))  # spaced after a 429, even if late
            # A 429 meanwhile names this method: wait for it, or for the call finding out.
            if (wait or late) and self.limits.halted(method):
                return self._held_back(method)
            if method in WRITES and not fence.still_held():
                return self._not_held(method)
            response = self._ask(method, args)
        except BaseException:
            self.limits.answered(method, limited=True)
            raise
        if response.kind == RATE_LIMITED:
            self.rate_limited(method, response.retry_after or 1.0)
        self.limits.answered(method, limited=response.kind == RATE_LIMITED or response.status == 0)
        if not response.ok:
            log.warning("slack %s failed: %s (status %s)", method, response.error, response.status)
        return response

    def _not_held(self, method: str) -> Response:
        """The delivery's claim lapsed while it waited (its process frozen): another
        replica has the item now, so this write is not made; said as a call that failed
        (the delivery is retried, flagged, and its retry is not this replica's to record)."""
        self.limits.answered(method, limited=True)  # not called: nothing found out
        log.warning("slack %s not made: this delivery's claim lapsed meanwhile", method)
        return Response(method, False, error="claim_lapsed", status=0)

    def _held_back(self, method: str) -> Response:
        after = self.limits.wait(method)
        self.limits.answered(method, limited=True)  # not called: nothing found out
        log.debug("slack %s held back %.1f s: the workspace's budget is spent", method, after)
        return Response.held_back(method, after)

    def _ask(self, method: str, args: dict[str, Any]) -> Response:
        try:
            # slack_sdk's own method encodes each call as Slack expects (verb, JSON/form).
            response = getattr(self._client, method.replace(".", "_"))(**args)
        except SlackApiError as error:
            return Response.from_error(method, error)
        except Exception as error:
            return Response(method, False, error=f"connection: {type(error).__name__}", status=0)
        return Response(
            method,
            True,
            dict(response.data or {}),
            status=response.status_code,
            headers=dict(response.headers or {}),
        )


def _within(text: str) -> str:
    """``text`` as Slack keeps it: past its ceiling, cut by us — with a mark that it was —
    rather than refused or cut silently by Slack."""
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _optional(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def _top(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is the room's own, not a reply in a thread."""
    return str(message.get("thread_ts") or message.get("ts")) == str(message.get("ts"))
