"""The relay: each stored decision reaches the-loop exactly once, and the room is told.

A decision is stored in the durable relay queue before it is acknowledged (👀), then a
worker hands it to its sink — a GitHub issue comment, the-loop's control plane, or the
local JSONL ledger — retrying with backoff until it lands (DESIGN §3.3). Landed: ✅ and a
threaded "recorded — moving on" under the gate or ask it answered (seed 003 R10.1).
Refused for good: ⚠️ with the reason, the item parked and listed by ``!theloop queue``,
and the question reopened so the member can answer again.

Exactly once, against sinks that are not idempotent themselves: a GitHub comment is
looked for before it is posted again after any attempt that may have landed; the ledger
is searched for the key. the-loop's ``sessions/reply`` ignores the ``Idempotency-Key`` we
send and offers nothing to look a reply up by, so a reply that may have landed (a timeout
or a dropped connection after sending, a 5xx) is parked as :class:`Unsure` for an admin to
check, never re-sent on its own; ``graph/skip`` is idempotent there (a declared skip is
kept as first declared) and is retried as usual.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime
from http.client import HTTPException
from pathlib import Path
from typing import Any, Protocol

from looproom.admin import defang
from looproom.decide import kinds
from looproom.decide.decision import Decision
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.durable.queue import DurableQueue, Item
from looproom.durable.worker import Worker
from looproom.relay import forms
from looproom.room.slack_text import escape, neutralise

log = logging.getLogger(__name__)

RELAY = "relay"
USER_AGENT = "theloop-relay"
#: After this many failed attempts the room hears once that the relay is still trying.
STILL_TRYING_AFTER = 3
_MAX_ERROR = 200
#: How many pages of 100 comments the duplicate check reads before it gives up looking.
FIND_PAGES = 10
#: How long to wait on a GitHub secondary rate limit that names no time (its docs: a minute).
SECONDARY_WAIT = 60.0


class Acks(Protocol):
    """How the relay speaks in the room; the adapter implements it over its transport."""

    def react(self, channel: str, ts: str, name: str) -> None: ...

    def reply(self, channel: str, thread_ts: str, text: str) -> None: ...

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None: ...


# -- HTTP ------------------------------------------------------------------------------


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


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds a ``Retry-After`` (or GitHub's ``x-ratelimit-reset``) asks us to wait."""
    lowered = {key.lower(): value for key, value in headers.items()}
    raw = lowered.get("retry-after", "").strip()
    if raw.isdigit():
        return float(raw)
    if raw:
        try:
            return max(0.0, parsedate_to_datetime(raw).timestamp() - now)
        except (TypeError, ValueError):
            return None
    reset = lowered.get("x-ratelimit-reset", "").strip()
    return max(0.0, float(reset) - now) if reset.isdigit() else None


def outcome_of(answer: HttpResult, what: str, now: float) -> Outcome | None:
    """The outcome an error answer means — ``None`` for success (2xx)."""
    if 200 <= answer.status < 300:
        return None
    if answer.status == 0:
        how = "no answer after sending" if answer.sent else "unreachable"
        return RetryLater(f"{what} {how} ({answer.error or 'no answer'})")
    said = _message(answer)
    if answer.status == 429 or (answer.status == 403 and _rate_limited(answer, said)):
        after = retry_after(answer.headers, now)
        if after is None and answer.status == 403:
            after = SECONDARY_WAIT  # GitHub: a secondary limit naming no time is "a minute"
        return RetryLater(f"{what} rate limit", after)
    if answer.status >= 500 or answer.status == 408:
        return RetryLater(f"{what} answered {answer.status}{said}")
    return Failed(f"{what} refused it ({answer.status}{said})")


def _rate_limited(answer: HttpResult, said: str) -> bool:
    """A 403 that is GitHub's primary or secondary rate limit, not a refusal."""
    return (
        _header(answer, "x-ratelimit-remaining") == "0"
        or bool(_header(answer, "retry-after"))
        or "rate limit" in said.lower()
    )


def _header(answer: HttpResult, name: str) -> str:
    return next((v for k, v in answer.headers.items() if k.lower() == name), "").strip()


def _message(answer: HttpResult) -> str:
    """The peer's own short error message, if it gave one (GitHub ``message``, FastAPI
    ``detail``) — capped, and only ever the peer's words, never ours or a header."""
    data = answer.json()
    if not isinstance(data, dict):
        return ""
    text = data.get("message") or data.get("detail") or data.get("error") or ""
    text = text if isinstance(text, str) else json.dumps(text)
    return f": {' '.join(text.split())[:_MAX_ERROR]}" if text else ""


# -- sinks -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Unsure(Failed):
    """It may have landed and cannot be looked up: parked for an admin, never re-sent alone."""


class GitHubSink:
    """Issue comments as the bot's login (DESIGN §3.3); the API base is configurable for
    GitHub Enterprise and for tests."""

    def __init__(self, api: str, token: str, *, timeout: float = 15.0) -> None:
        self._api, self._token, self._timeout = api.rstrip("/"), token, timeout

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "User-Agent": USER_AGENT,
        }

    def send(self, target: Mapping[str, Any], *, unsure: bool, since: str) -> Outcome:
        """Post the comment — after looking for it first when an earlier try may have landed."""
        url = f"{self._api}/repos/{target['repo']}/issues/{int(target['number'])}/comments"
        if unsure:
            found = self._find(url, str(target["body"]), since)
            if found is not None:
                return found
        answer = http("POST", url, self._headers(), {"body": target["body"]}, self._timeout)
        failed = outcome_of(answer, "GitHub", time.time())
        if failed is not None:
            return failed
        data = answer.json()
        return Delivered(str(data.get("html_url", "")) if isinstance(data, dict) else "")

    def _find(self, url: str, body: str, since: str) -> Outcome | None:
        """``Delivered`` when the comment is already there; a retry when we cannot tell.

        Follows GitHub's ``Link: rel="next"`` pages (a busy issue has more than 100
        comments), up to :data:`FIND_PAGES`, and only on our own API host: the token goes
        with each request.
        """
        query = urllib.parse.urlencode({"since": _earlier(since), "per_page": 100})
        page: str | None = f"{url}?{query}"
        for _ in range(FIND_PAGES):
            if page is None:
                return None
            answer = http("GET", page, self._headers(), None, self._timeout)
            failed = outcome_of(answer, "GitHub", time.time())
            if failed is not None:
                return failed if isinstance(failed, RetryLater) else RetryLater(failed.reason)
            found = _matching(answer.json(), body)
            if found is not None:
                return found
            page = self._next_page(answer)
        log.warning("relay: more than %d pages of comments on %s; posting", FIND_PAGES, url)
        return None

    def _next_page(self, answer: HttpResult) -> str | None:
        for part in _header(answer, "link").split(","):
            target, _, params = part.partition(";")
            target = target.strip().removeprefix("<").removesuffix(">")
            if 'rel="next"' in params and target.startswith(self._api + "/"):
                return target
        return None


def _matching(comments: Any, body: str) -> Delivered | None:
    for comment in comments if isinstance(comments, list) else []:
        if isinstance(comment, dict) and str(comment.get("body", "")).strip() == body.strip():
            return Delivered(str(comment.get("html_url", "")))
    return None


def _earlier(at: str) -> str:
    """Ten minutes before ``at`` (the decision's time, before any attempt): room for our
    clock and GitHub's to disagree; the body match is exact, so a wider window costs
    pages, never a false match."""
    try:
        moment = datetime.strptime(at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    except ValueError:
        return at
    return (moment - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%SZ")


class LoopSink:
    """the-loop's control plane: ``/api/v1/sessions/reply`` and ``/api/v1/graph/skip``."""

    def __init__(self, api: str, *, timeout: float = 15.0) -> None:
        self._api, self._timeout = api.rstrip("/"), timeout

    def send(self, target: Mapping[str, Any], *, key: str) -> Outcome:
        headers = {"User-Agent": USER_AGENT, "Idempotency-Key": key}
        url = f"{self._api}{target['path']}"
        answer = http("POST", url, headers, target["json"], self._timeout)
        if target["path"] == forms.REPLY_PATH and _maybe_applied(answer):
            return Unsure(_unsure_reason(answer, key))
        failed = outcome_of(answer, "the-loop", time.time())
        if failed is not None:
            return failed
        if target["path"] == forms.SKIP_PATH:
            return _skip_outcome(answer.json())
        return _reply_outcome(answer.json())


def _reply_outcome(data: Any) -> Outcome:
    """``"delivered": false`` is the-loop's busy session: nothing was typed, nothing
    commented, and it says the caller may retry — so we do, rather than lose the answer."""
    if isinstance(data, dict) and data.get("delivered") is False:
        return RetryLater("the-loop could not type the answer into its session yet (busy)")
    return Delivered()


def _maybe_applied(answer: HttpResult) -> bool:
    """the-loop may have delivered the reply: no answer after sending, or a 5xx (its
    handler can fail after typing into the pane, and a 502 is a member that timed out)."""
    return (answer.status == 0 and answer.sent) or answer.status >= 500


def _unsure_reason(answer: HttpResult, key: str) -> str:
    what = f"answered {answer.status}" if answer.status else f"no answer ({answer.error})"
    return (
        f"the-loop may have delivered it ({what}) and does not deduplicate replies, so it is "
        "not sent again on its own — look in the agent's session or on the work item for "
        f"the answer, then `!theloop queue retry {key}` to send it, or "
        f"`!theloop queue drop {key}` if it arrived"
    )


def _skip_outcome(data: Any) -> Outcome:
    """A skip lands when the-loop declared at least one node; what it rejected is said."""
    data = data if isinstance(data, dict) else {}
    declared = [str(n) for n in data.get("declared") or []]
    rejected = [_rejected(entry) for entry in data.get("rejected") or []]
    if rejected and not declared:
        return Failed("the-loop rejected the skip of " + ", ".join(rejected))
    return Delivered("rejected: " + ", ".join(rejected) if rejected else "")


def _rejected(entry: Any) -> str:
    """One rejected node as the-loop reports it (``{"token", "why"}``), in words."""
    if isinstance(entry, dict):
        token, why = str(entry.get("token", "?")), str(entry.get("why", ""))
        return f"{token} ({why})" if why else token
    return str(entry)


class LedgerSink:
    """The embedded default: one JSON line per decision in a local file (DESIGN §3.3)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def send(self, item: Mapping[str, Any]) -> Outcome:
        line = forms.ledger_line(item)
        with self._lock:
            if self._has(str(item["key"])):
                return Delivered("already in the ledger")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as ledger:
                ledger.write(line + "\n")
                ledger.flush()
                os.fsync(ledger.fileno())
        return Delivered(str(self.path.name))

    def _has(self, key: str) -> bool:
        if not self.path.exists():
            return False
        needle = json.dumps(key)
        with self.path.open(encoding="utf-8") as ledger:
            return any(needle in line and json.loads(line).get("key") == key for line in ledger)

    def lines(self) -> list[dict[str, Any]]:
        """Every recorded decision (for tests and the admin)."""
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text("utf-8").splitlines() if line]


@dataclass
class Sinks:
    """The configured sinks; ``github`` and ``loop`` are None when not configured."""

    ledger: LedgerSink
    github: GitHubSink | None = None
    loop: LoopSink | None = None

    def available(self, repos: Mapping[str, str]) -> forms.Destinations:
        """The destinations these sinks reach (``repos``: the-loop's checkouts for skips)."""
        return forms.Destinations(
            github=self.github is not None, loop=self.loop is not None, repos=repos
        )

    def send(self, item: Mapping[str, Any], unsure: bool) -> Outcome:
        """Hand one stored item to the sink its target names."""
        target = item["target"]
        sink = target["sink"]
        if sink == forms.GITHUB and self.github is not None:
            return self.github.send(target, unsure=unsure, since=item["decision"]["at"])
        if sink == forms.LOOP and self.loop is not None:
            return self.loop.send(target, key=str(item["key"]))
        if sink == forms.LEDGER:
            return self.ledger.send(item)
        # Stored while that sink was configured; it is not now. Kept, not lost.
        return RetryLater(f"the {sink} sink is not configured now")


# -- what the room is told -------------------------------------------------------------


def _peer(text: str) -> str:
    """A peer's words (an error ``detail``, rejected node names) as inert mrkdwn (A2): a
    FastAPI 422 echoes our input back, so it may carry ``<!channel>`` or a link."""
    return escape(neutralise(text))


def landed_text(decision: Decision, detail: str) -> str:
    """The threaded reply once a decision landed (R10.1)."""
    note = f" ({_peer(detail)})" if detail.startswith("rejected") else ""
    return (
        f"✅ recorded — moving on: the {kinds.label(decision.kind)} of <@{decision.member}>{note}."
    )


def failed_text(decision: Decision, reason: str, key: str) -> str:
    return (
        f"⚠️ The {kinds.label(decision.kind)} of <@{decision.member}> could not be relayed: "
        f"{_peer(reason)}. It is kept as `{key}` — an admin can `!theloop queue retry {key}`."
    )


def unsure_text(decision: Decision, key: str) -> str:
    return (
        f"⚠️ The {kinds.label(decision.kind)} of <@{decision.member}> may have reached the-loop, "
        f"but it did not confirm; it is not sent again on its own, so it cannot arrive twice. "
        f"It is kept as `{key}` — an admin checks, then `!theloop queue retry {key}` or "
        f"`drop {key}`."
    )


def still_trying_text(decision: Decision, reason: str) -> str:
    return (
        f"⚠️ The {kinds.label(decision.kind)} of <@{decision.member}> has not reached the-loop "
        f"yet ({_peer(reason)}); it is kept and retried — see `!theloop queue`."
    )


# -- record, then relay ----------------------------------------------------------------


class Relay:
    """Stores decisions (before any acknowledgement) and relays them with a worker."""

    def __init__(
        self,
        queue: DurableQueue,
        sinks: Sinks,
        acks: Acks,
        *,
        on_given_up: Callable[[Decision], None] = lambda _d: None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.queue, self.sinks, self.acks = queue, sinks, acks
        self._on_given_up = on_given_up
        self._worker = _RelayWorker(self, clock=clock)

    def record(self, decision: Decision, repos: Mapping[str, str]) -> bool:
        """Store ``decision`` durably, then 👀; False when it was stored before (a duplicate)."""
        target = kinds.target(decision, self.sinks.available(repos))
        stored = self.queue.put(decision.key, forms.payload(decision, target))
        if stored:
            _quietly(self.acks.react, decision.channel, decision.ts, "eyes")
            log.info(
                "relay: recorded %s %s by %s", decision.kind, decision.work_item, decision.member
            )
        return stored

    def start(self) -> None:
        self._worker.start()

    def stop(self, timeout: float = 10.0) -> bool:
        return self._worker.stop(timeout)

    def step(self) -> bool:
        """Relay one due decision now (tests, and a synchronous drain)."""
        return self._worker.step()

    def delivered(self, item: Item, outcome: Delivered) -> None:
        decision = _decision(item)
        log.info("relay: %s landed (%s)", item.key, outcome.detail or "ok")
        if decision is None:
            return
        _quietly(self.acks.react, decision.channel, decision.ts, "white_check_mark")
        thread = decision.thread or decision.ts
        _quietly(self.acks.reply, decision.channel, thread, landed_text(decision, outcome.detail))

    def retrying(self, item: Item, outcome: RetryLater) -> None:
        decision = _decision(item)
        if decision is not None and item.attempts == STILL_TRYING_AFTER:
            text = still_trying_text(decision, outcome.reason)
            _quietly(self.acks.reply, decision.channel, decision.thread or decision.ts, text)

    def given_up(self, item: Item, outcome: Failed) -> None:
        decision = _decision(item)
        if decision is None:
            return
        _quietly(self.acks.react, decision.channel, decision.ts, "warning")
        unsure = isinstance(outcome, Unsure)
        text = (
            unsure_text(decision, item.key)
            if unsure
            else failed_text(decision, outcome.reason, item.key)
        )
        _quietly(self.acks.reply, decision.channel, decision.thread or decision.ts, text)
        if not unsure:  # reopening would invite a second answer while the first may stand
            self._on_given_up(decision)


class _RelayWorker(Worker):
    """The spine's delivery loop (backoff, Retry-After, park), over the relay queue."""

    def __init__(self, relay: Relay, *, clock: Callable[[], float]) -> None:
        super().__init__(relay.queue, _NoOutlet(), clock=clock, name="theloop-relay")
        self._relay = relay

    def _deliver(self, item: Item) -> Outcome:
        try:
            stored = json.loads(item.payload)
        except ValueError as exc:
            return Failed(f"stored relay item is not JSON: {exc}")
        # Any attempt after the first may have landed (a timeout after GitHub wrote it).
        unsure = item.maybe_delivered or item.attempts > 1
        try:
            return self._relay.sinks.send(stored, unsure)
        except Exception as exc:  # a sink bug must not lose the decision
            log.exception("relay sink raised on %s", item.key)
            return RetryLater(f"{type(exc).__name__}")

    def _apply(self, item: Item, outcome: Outcome) -> None:
        super()._apply(item, outcome)
        if isinstance(outcome, Delivered):
            self._relay.delivered(item, outcome)
        elif isinstance(outcome, RetryLater):
            self._relay.retrying(item, outcome)
        else:
            self._relay.given_up(item, outcome)


class _NoOutlet:
    def deliver(self, *_args: Any, **_kwargs: Any) -> Outcome:  # pragma: no cover - unused
        return Failed("the relay worker delivers through its sinks")


def _decision(item: Item) -> Decision | None:
    try:
        return Decision.from_dict(json.loads(item.payload)["decision"])
    except (ValueError, KeyError, TypeError):
        return None


def _quietly(call: Callable[..., None], *args: str) -> None:
    """An acknowledgement that fails is logged, never raised: the decision stands."""
    try:
        call(*args)
    except Exception as exc:  # any transport failure: the decision stands
        log.warning("relay acknowledgement %s failed: %s", getattr(call, "__name__", ""), exc)


def queue_lines(items: list[Item], now: float) -> list[str]:
    """``!theloop queue``'s lines for decisions not relayed yet."""
    lines = []
    for item in items:
        decision = _decision(item)
        what = f"{decision.kind} · {decision.work_item} by {decision.member}" if decision else "?"
        state = "PARKED" if item.state == "parked" else item.state
        if item.state == "pending" and item.due > now:
            state += f", next try in {int(item.due - now)} s"
        error = f" — {defang(item.last_error)}" if item.last_error else ""
        lines.append(f"- `{item.key}` {what}: {state}, {item.attempts} attempt(s){error}")
    return lines
