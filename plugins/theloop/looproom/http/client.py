"""One HTTP request to a peer (GitHub, the-loop, Jira), and what its answer means.

Built on ``requests`` (a pooled session per thread, urllib3 underneath). A request never
raises and never logs a header (tokens live there). It keeps three rules for every peer:

- **no credential to another origin, no method changed**: a redirect is followed only to
  the same scheme, host and port and only where the method stays (any 307/308; a
  301/302/303 for a GET), else the 3xx is the answer, naming where it pointed;
- **what is read is capped**: past ``max_bytes`` the answer is not kept but refused, with
  ``over_cap`` set (the peer answered, so it may have acted);
- **the caller's timeout** bounds the connect and each read.

Its answer is read into the queue's terms — delivered, retry later (a rate limit, with the
wait it names; a 5xx; no answer), or refused for good — quoting only the peer's own short
error message.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from http.cookiejar import DefaultCookiePolicy
from typing import Any

import requests
import urllib3.exceptions

from looproom.durable import fence
from looproom.durable.outcome import Failed, Outcome, RetryLater
from looproom.http import rules as http_rules
from looproom.http.origins import redact_url, same_origin

USER_AGENT = "theloop-relay"
_MAX_ERROR = 200
#: How long to wait on a GitHub secondary rate limit that names no time (its docs: a minute).
SECONDARY_WAIT = 60.0
#: At most this much of an answer is read. The largest answer asked for is a page of 100
#: GitHub comments or issues, each body up to 65,536 characters (up to 4 bytes each in
#: UTF-8) with its user and links: ~27 MB at the very worst.
MAX_ANSWER_BYTES = 32 * 1024 * 1024
#: Same-origin redirect hops followed before the last one is taken as the answer.
MOST_REDIRECTS = 5
REDIRECTS = frozenset({301, 302, 303, 307, 308})
#: Redirects that keep the method and body whatever it is (RFC 9110 §15.4).
_KEEP_METHOD = frozenset({307, 308})
_CHUNK = 64 * 1024
#: What failed before the request left: nothing reached the peer.
_NOT_SENT = (
    urllib3.exceptions.NewConnectionError,  # refused, and DNS (NameResolutionError)
    urllib3.exceptions.ConnectTimeoutError,
    requests.exceptions.ConnectTimeout,
    requests.exceptions.InvalidURL,
    requests.exceptions.MissingSchema,
    requests.exceptions.InvalidSchema,
    requests.exceptions.InvalidHeader,
    requests.exceptions.ProxyError,
)


@dataclass(frozen=True)
class HttpResult:
    """One HTTP answer; ``status`` 0 means no answer read (connection, timeout, cap).

    ``sent``: with status 0, the request went out before it failed (a read timeout, a
    dropped connection, an answer over the cap), so the peer may have acted on it; False
    when it never left (refused, DNS, a connect timeout). ``moved_to``: a 3xx not followed
    (another origin, or a method it would change), where it pointed.
    """

    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    error: str = ""
    sent: bool = False
    moved_to: str = ""
    over_cap: bool = False

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


_local = threading.local()


def bearer(token: str) -> dict[str, str]:
    """The header a token goes in; none without a token."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def _session() -> requests.Session:
    """This thread's session: connections to a peer are reused across its requests."""
    session: requests.Session | None = getattr(_local, "session", None)
    if session is None:
        session = requests.Session()
        # No ~/.netrc credentials added behind our back; proxies are read per request.
        session.trust_env = False
        # No cookie carried from one answer to the next request: each request is its own.
        session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
        _local.session = session
    return session


def http(
    method: str,
    url: str,
    headers: Mapping[str, str],
    data: Any,
    timeout: float,
    *,
    max_bytes: int = MAX_ANSWER_BYTES,
    read_body: bool = True,
) -> HttpResult:
    """One request (``data``: JSON, or None); never raises, never logs a header.

    ``read_body`` False: only the status and headers are read (an event stream's opening).
    """
    body = None if data is None else json.dumps(data).encode()
    sent = dict(headers)
    if body is not None:
        sent["Content-Type"] = "application/json"
    current = url
    for _hop in range(MOST_REDIRECTS + 1):
        answer = _one(method, current, sent, body, timeout, max_bytes, read_body)
        if answer.status not in REDIRECTS:
            return answer
        target = urllib.parse.urljoin(current, answer.header("location"))
        same_method = answer.status in _KEEP_METHOD or method in ("GET", "HEAD")
        if not answer.header("location") or not same_method or not same_origin(current, target):
            return _moved(answer, target)
        current = target
    return _moved(answer, target)


def _moved(answer: HttpResult, target: str) -> HttpResult:
    where = redact_url(target) or "nowhere"
    return HttpResult(
        answer.status, answer.headers, answer.body, f"moved to {where}", moved_to=target
    )


def _one(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes | None,
    timeout: float,
    max_bytes: int,
    read_body: bool,
) -> HttpResult:
    if method not in ("GET", "HEAD") and not fence.still_held():
        # The delivery's claim lapsed while it was frozen: another replica has the item.
        return HttpResult(0, {}, error="not sent: this delivery's claim lapsed meanwhile")
    try:
        proxies = requests.utils.get_environ_proxies(url)
        response = _session().request(
            method,
            url,
            headers=dict(headers),
            data=body,
            timeout=timeout,
            allow_redirects=False,
            stream=True,
            proxies=proxies,
        )
    except (requests.RequestException, ValueError) as error:
        return HttpResult(0, {}, error=_cause(error), sent=not _never_sent(error))
    with response:
        status, answered = response.status_code, dict(response.headers)
        if not read_body:
            return HttpResult(status, answered)
        try:
            read = _capped(response, max_bytes)
        except (requests.RequestException, OSError) as error:
            return HttpResult(0, answered, error=_cause(error), sent=True)
    if read is None:
        error = f"answer {status} was over the {_size(max_bytes)} the bot reads"
        return HttpResult(0, answered, error=error, sent=True, over_cap=True)
    return HttpResult(status, answered, read)


def _size(count: int) -> str:
    mib = 1024 * 1024
    return f"{count // mib} MiB" if count % mib == 0 else f"{count:,} bytes"


def _capped(response: requests.Response, max_bytes: int) -> bytes | None:
    """The body, decoded; ``None`` when it runs past ``max_bytes`` (read no further)."""
    chunks, size = [], 0
    for chunk in response.iter_content(_CHUNK):
        size += len(chunk)
        if size > max_bytes:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _chain(error: BaseException) -> list[BaseException]:
    """The error and what caused it, outermost first (requests wraps urllib3 wraps OS)."""
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in found:
        found.append(current)
        inner = current.args[0] if current.args else None
        reason = getattr(current, "reason", None)
        if isinstance(inner, BaseException):
            current = inner
        elif isinstance(reason, BaseException):
            current = reason
        else:
            current = current.__cause__ or current.__context__
    return found


def _never_sent(error: BaseException) -> bool:
    return any(isinstance(link, _NOT_SENT) for link in _chain(error))


def _cause(error: BaseException) -> str:
    """The innermost cause's kind (``ConnectionRefusedError``, ``ReadTimeoutError``):
    never its message, which may quote the URL."""
    return type(_chain(error)[-1]).__name__


def outcome_of(answer: HttpResult, what: str, now: float) -> Outcome | None:
    """The outcome an error answer means — ``None`` for success (2xx)."""
    if 200 <= answer.status < 300:
        return None
    if answer.over_cap:
        return RetryLater(f"{what}'s {answer.error}: it may have acted")
    if answer.status == 0:
        how = "no answer after sending" if answer.sent else "unreachable"
        return RetryLater(f"{what} {how} ({answer.error or 'no answer'})")
    if answer.status in REDIRECTS:
        return Failed(
            f"not delivered: {what} answered {answer.status}, {answer.error or 'a redirect'}, "
            "and the bot sends nothing on to another address or as another method"
        )
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
