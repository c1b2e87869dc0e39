#!/usr/bin/env python3
"""Send one the-loop event to the theloop bot's signed webhook (the contract: docs/webhook.md).

Standard library only, Python 3.10 or newer: an operator drops this file next to
the-loop and calls it from a shell, a cron job or a hook. It is also importable:
``send(event, url, secret, deadline)`` is what ``theloop_hook.py`` uses.

    python theloop_send.py --url http://bot:3141/theloop/events \\
        --secret-env THELOOP_WEBHOOK_SECRET --event-file event.json
    python theloop_send.py --url URL --secret-env NAME --event-type decision-pending \\
        --work-item github:acme/api#7 --text-file question.md --detail node=spec-quiz

    python theloop_send.py --url URL --secret-env NAME --spool DIR --event-file e.json
    python theloop_send.py --url URL --secret-env NAME --spool DIR --flush

A bot that serves several the-loop instances tells them apart by a key id
(``--key-id``, else ``$THELOOP_KEY_ID``): sent as ``X-TheLoop-Key-Id``, it names the
instance whose secret signed the event (docs/webhook.md).

Exit status: 0 delivered (or already delivered: a duplicate), 1 refused or gave up
(with the reason: 401 means the secret, 422 names the fields), 2 bad arguments or an
event the bot could never take (a lone surrogate, NaN, nesting too deep: the reason says
where; nothing is sent), 3 kept in the spool (``--spool``: the bot could not take it yet;
it is sent first next time, or by ``--flush``).

The event gets a stable ``id`` derived from its content when it has none, so a retry
(ours after a timeout, the operator running the command again, or a spooled event
sent once more after a crash) is answered "duplicate" by the bot instead of being
posted twice.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import hmac
import http.client
import json
import math
import os
import random
import ssl
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: Where the bot listens when the URL names only a host.
WEBHOOK_PATH = "/theloop/events"
#: How long the command line keeps retrying a bot that is down or restarting.
DEFAULT_DEADLINE = 60.0
#: One attempt's connect + read budget.
DEFAULT_TIMEOUT = 10.0
_FIRST_BACKOFF = 0.5
_MAX_BACKOFF = 15.0
#: The bot's error bodies are short; this only bounds what a misconfigured URL
#: (an HTML page, a proxy's error) can put into our message.
_MAX_REASON = 300
_USER_AGENT = "theloop-send/1"
#: Which of a bot's the-loop instances signs (``instances:`` in its settings file).
KEY_ID_HEADER = "X-TheLoop-Key-Id"
KEY_ID_ENV = "THELOOP_KEY_ID"

EXIT_DELIVERED, EXIT_REFUSED, EXIT_USAGE, EXIT_SPOOLED = 0, 1, 2, 3


@dataclass(frozen=True)
class Result:
    """How one send ended: delivered (maybe as a duplicate) or not, and why."""

    delivered: bool
    status: int = 0  # the last HTTP status; 0 when no answer came at all
    duplicate: bool = False
    reason: str = ""
    attempts: int = 0
    event_id: str = ""
    spooled: bool = False  # not delivered yet, but kept on disk to be sent first next time
    refused: bool = False  # refused before sending: the event is not JSON the bot takes

    @property
    def transient(self) -> bool:
        """Not delivered, and a later try could be: no answer, 429 or 5xx."""
        if self.delivered or self.refused:
            return False
        return self.status in (0, 429) or self.status >= 500


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-TheLoop-Signature`` value for ``body`` sent at ``timestamp``."""
    message = b"v1:" + timestamp.encode("ascii") + b":" + body
    return "v1=" + hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


#: What the bot accepts (it refuses the rest for good, so it is refused here, unsent).
MAX_DEPTH = 32
MAX_DIGITS = 100


def unsendable(event: Any) -> str:
    """Why the bot would refuse ``event``'s JSON for good, naming where; "" when none.

    A lone surrogate cannot be encoded as UTF-8, ``NaN`` and ``Infinity`` are not JSON, an
    integer past the bot's digit limit and nesting past its depth limit are refused: each
    is found here, before any byte is sent (and before it could crash the encoder).
    """
    return _unsendable(event, "event", 0)


def _unsendable(value: Any, path: str, depth: int) -> str:
    if isinstance(value, str):
        lone = next((c for c in value if "\ud800" <= c <= "\udfff"), "")
        return f"{path}: a lone surrogate \\u{ord(lone):04x} is not Unicode text" if lone else ""
    if isinstance(value, bool) or value is None:
        return ""
    if isinstance(value, int):
        digits = len(str(abs(value))) if value.bit_length() < 14_000 else 4301
        return f"{path}: an integer of {digits} digits or more" if digits > MAX_DIGITS else ""
    if isinstance(value, float):
        return "" if math.isfinite(value) else f"{path}: {value} is not JSON"
    if isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            return f"{path}: nested deeper than {MAX_DEPTH} levels"
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            where = f"{path}[{key}]" if isinstance(key, int) else f"{path}.{_safe(key)}"
            problem = _unsendable(key, f"{path} (a key)", depth) or _unsendable(
                item, where, depth + 1
            )
            if problem:
                return problem
        return ""
    return f"{path}: a {type(value).__name__} is not JSON"


def _safe(key: Any) -> str:
    return str(key).encode("utf-8", "backslashreplace").decode("ascii", "replace")[:40]


def stable_id(event: Mapping[str, Any]) -> str:
    """A content-derived id: the same event always gets the same one, so a resend is a duplicate."""
    content = {key: value for key, value in event.items() if key != "id"}
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "send:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:40]


def _id_of(event: Any) -> str:
    given = event.get("id") if isinstance(event, Mapping) else ""
    return given if isinstance(given, str) and not unsendable(given) else ""


def with_id(event: Mapping[str, Any]) -> dict[str, Any]:
    """``event`` with an ``id``: its own when it has one, else :func:`stable_id`."""
    result = dict(event)
    if not result.get("id"):
        result["id"] = stable_id(event)
    return result


def webhook_url(url: str) -> str:
    """The full webhook URL; a bare ``http://host:port`` gets the bot's path."""
    parts = urlsplit(url)
    if parts.path in ("", "/"):
        return parts._replace(path=WEBHOOK_PATH).geturl()
    return url


def send(
    event: Mapping[str, Any],
    url: str,
    secret: str,
    deadline: float = DEFAULT_DEADLINE,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    key_id: str = "",
) -> Result:
    """POST ``event`` signed with ``secret``; retry 5xx, 429 and network errors.
    ``key_id``: the instance the secret is the key of, for a bot that serves several.

    ``deadline`` is how many seconds from now to keep trying. Every attempt is
    signed afresh (the bot refuses timestamps older than 300 s) over the same bytes
    and the same id, so a retry can only ever be a duplicate, never a second post.
    A refusal (4xx other than 429) is final: retrying cannot change the answer.
    """
    problem = unsendable(event)
    if problem:  # final, like the bot's 400: sending it again cannot change the answer
        return Result(False, 0, False, f"not sent: {problem}", 0, _id_of(event), refused=True)
    payload = with_id(event)
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    target = check_url(url)
    give_up_at = clock() + max(0.0, deadline)
    backoff, attempts = _FIRST_BACKOFF, 0
    while True:
        attempts += 1
        attempt_timeout = max(0.1, min(timeout, give_up_at - clock()))
        status, headers, answer = _post(target, secret, body, attempt_timeout, key_id)
        outcome = _judge(status, answer)
        if outcome is not None:
            return _result(outcome, status, attempts, payload["id"])
        wait = _next_wait(backoff, _retry_after(headers), give_up_at - clock())
        if wait is None:
            reason = f"gave up after {attempts} attempt(s) in {deadline:g} s: {answer}"
            return Result(False, status, False, reason, attempts, payload["id"])
        sleep(wait)
        backoff = min(backoff * 2, _MAX_BACKOFF)


def send_or_spool(
    event: Mapping[str, Any],
    url: str,
    secret: str,
    spool: Spool,
    deadline: float = DEFAULT_DEADLINE,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    key_id: str = "",
) -> Result:
    """:func:`send`, nothing lost: what waits in ``spool`` goes first (the bot sees
    events in the order they happened), and an event the bot cannot take now —
    no answer, 429, 5xx — waits there (``Result.spooled``) for the next send or
    ``--flush``. A refusal is final and is not kept. A spool that cannot be
    written costs the keeping, never the sending."""
    if not spool.usable():
        timing = {"timeout": timeout, "sleep": sleep, "clock": clock, "key_id": key_id}
        result = send(event, url, secret, deadline, **timing)
        if result.transient:
            reason = f"{result.reason}; not kept: the spool {spool.directory} cannot be written"
            return replace(result, reason=reason)
        return result
    give_up_at = clock() + max(0.0, deadline)
    with spool.locked():
        timing = {"timeout": timeout, "sleep": sleep, "clock": clock, "key_id": key_id}
        result = spool.flush(url, secret, deadline, **timing)
        if result is None:
            remaining = max(0.0, give_up_at - clock())
            result = send(event, url, secret, remaining, **timing)
            if not result.transient:
                return result
        spool.put(event)
        waiting = len(spool.waiting())
    reason = f"{result.reason}; kept in the spool with {waiting - 1} older, sent first next time"
    return replace(result, spooled=True, reason=reason, event_id=with_id(event)["id"])


class Spool:
    """Events the bot could not take yet, one file each in ``directory``, oldest
    first by name. Each holds its event's ``id``, so one sent again after a crash
    between its delivery and its removal is a duplicate, never a second post."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def usable(self) -> bool:
        """Whether events can be kept here (the directory is made if need be)."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return False
        return os.access(self.directory, os.W_OK | os.X_OK)

    def waiting(self) -> list[Path]:
        """The events waiting, oldest first."""
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob("*.json"))

    def put(self, event: Mapping[str, Any]) -> Path:
        """Keep ``event`` (written whole, then renamed: never half a file)."""
        payload = with_id(event)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        digest = hashlib.sha256(payload["id"].encode("utf-8")).hexdigest()[:16]
        path = self.directory / f"{time.time_ns():020d}-{digest}.json"
        partial = path.with_suffix(".tmp")
        with open(partial, "w", encoding="utf-8", opener=_owner_only) as handle:
            json.dump(payload, handle, ensure_ascii=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
        return path

    def flush(
        self,
        url: str,
        secret: str,
        deadline: float = DEFAULT_DEADLINE,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        key_id: str = "",
    ) -> Result | None:
        """Send what waits, oldest first, until one cannot go yet: that result,
        or ``None`` once nothing waits. One refused for good is set aside as
        ``….refused`` beside the others, with the reason, for the operator."""
        give_up_at = clock() + max(0.0, deadline)
        for path in self.waiting():
            try:
                event = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue  # another sender took it
            except (ValueError, RecursionError) as exc:
                event = f"not JSON: {type(exc).__name__}"
            if not isinstance(event, dict):
                self._set_aside(path, f"not an event: {str(event)[:_MAX_REASON]}")
                continue
            remaining = max(0.0, give_up_at - clock())
            result = send(
                event,
                url,
                secret,
                remaining,
                timeout=timeout,
                sleep=sleep,
                clock=clock,
                key_id=key_id,
            )
            if result.transient:
                return result
            if not result.delivered:
                self._set_aside(path, result.reason)
            path.unlink(missing_ok=True)
        return None

    def locked(self) -> contextlib.AbstractContextManager[None]:
        """One sender at a time sends what waits, so the order holds (where the
        platform has ``fcntl``; elsewhere a second sender may only repeat one)."""
        return one_at_a_time(self.directory)

    def _set_aside(self, path: Path, reason: str) -> None:
        aside = path.with_suffix(".refused")
        with contextlib.suppress(OSError):
            os.replace(path, aside)
            aside.with_suffix(".reason").write_text(reason + "\n", encoding="utf-8")


@contextlib.contextmanager
def one_at_a_time(directory: Path) -> Iterator[None]:
    """Held while one process works in ``directory`` (its ``.lock``, the owner's alone);
    where the platform has no ``fcntl``, nothing is held."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(directory / ".lock", "a", opener=_owner_only) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _owner_only(path: str, flags: int) -> int:
    """Open for the owner only: a spooled event may carry an agent's words."""
    return os.open(path, flags, 0o600)


def _next_wait(backoff: float, asked: float, remaining: float) -> float | None:
    """How long to sleep before the next attempt, or ``None`` to give up.

    A server's ``Retry-After`` is honoured in full (retrying sooner is refused anyway);
    our own backoff is jittered (many senders, one bot) and cut short so that one last
    attempt still happens inside the deadline.
    """
    if asked > remaining or remaining <= 0.05:
        return None
    return max(asked, min(backoff * random.uniform(0.8, 1.0), remaining))


def check_url(url: str) -> Any:
    """The parsed webhook URL; :class:`ValueError` unless it is ``http(s)://host…``."""
    target = urlsplit(webhook_url(url))
    if target.scheme not in ("http", "https") or not target.hostname:
        raise ValueError(f"--url {url!r} is not an http:// or https:// URL with a host")
    return target


def _result(outcome: tuple[bool, bool, str], status: int, attempts: int, key: str) -> Result:
    delivered, duplicate, reason = outcome
    return Result(delivered, status, duplicate, reason, attempts, key)


def _post(
    target: Any, secret: str, body: bytes, timeout: float, key_id: str = ""
) -> tuple[int, Mapping[str, str], str]:
    """One POST; ``(status, headers, reason text)``, status 0 when nothing answered."""
    timestamp = str(int(time.time()))
    headers = {
        "Content-Type": "application/json",
        "User-Agent": _USER_AGENT,
        "X-TheLoop-Timestamp": timestamp,
        "X-TheLoop-Signature": sign(secret, timestamp, body),
        **({KEY_ID_HEADER: key_id} if key_id else {}),
    }
    path = target.path + (f"?{target.query}" if target.query else "")
    connection = _connection(target, timeout)
    try:
        connection.request("POST", path, body=body, headers=headers)
        response = connection.getresponse()
        text = response.read(64 * 1024).decode("utf-8", errors="replace")
        return response.status, dict(response.getheaders()), _reason(response.status, text)
    except (OSError, http.client.HTTPException) as exc:
        return 0, {}, f"could not reach {target.netloc}: {_describe(exc)}"
    finally:
        connection.close()


def _connection(target: Any, timeout: float) -> http.client.HTTPConnection:
    host, port = target.hostname or "", target.port
    if target.scheme == "https":
        context = ssl.create_default_context()
        return http.client.HTTPSConnection(host, port, timeout=timeout, context=context)
    return http.client.HTTPConnection(host, port, timeout=timeout)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    return str(exc) or type(exc).__name__


def _judge(status: int, reason: str) -> tuple[bool, bool, str] | None:
    """``(delivered, duplicate, reason)`` when the answer is final, else ``None`` (retry)."""
    if status == 202:
        return True, False, "delivered"
    if status == 200:
        return True, True, "duplicate: the bot already has this event; not posted again"
    if status == 0 or status == 429 or status >= 500:
        return None
    if status == 401:
        return False, False, f"401 the bot refused the signature: {reason}"
    return False, False, f"{status} the bot refused the event: {reason}"


def _reason(status: int, text: str) -> str:
    """The bot's explanation from a JSON or plain-text body, bounded."""
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        errors = answer.get("errors")
        if isinstance(errors, list) and errors:
            text = "; ".join(str(error) for error in errors)
        else:
            text = str(answer.get("error") or answer.get("detail") or answer.get("reason") or "")
    text = " ".join(text.split())
    return (text or f"HTTP {status}")[:_MAX_REASON]


def _retry_after(headers: Mapping[str, str]) -> float:
    """Seconds a 429/503 asks us to wait (0 when absent or not a number)."""
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return 0.0


# -- the command line ---------------------------------------------------------------


class UsageError(Exception):
    """A bad argument, file or environment: exit status 2."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 / 1 / 2 / 3)."""
    parser = _parser()
    args = parser.parse_args(argv)  # exits 2 on a malformed command line
    try:
        check_url(args.url)
        secret = _secret(args.secret_env)
        if args.flush and not args.spool:
            raise UsageError("--flush sends what waits in a spool: give --spool DIR")
        key_id = _key_id(args.key_id)
        event = {} if args.flush else _event(args)
        problem = unsendable(event)
        if problem:
            raise UsageError(f"the event cannot be sent: {problem}")
    except (UsageError, ValueError) as exc:
        parser.print_usage(sys.stderr)
        print(f"theloop_send: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.flush:
        return _flush(Spool(args.spool), args.url, secret, args.deadline, args.timeout, key_id)
    if args.spool:
        spool = Spool(args.spool)
        result = send_or_spool(
            event, args.url, secret, spool, args.deadline, timeout=args.timeout, key_id=key_id
        )
    else:
        result = send(event, args.url, secret, args.deadline, timeout=args.timeout, key_id=key_id)
    return _report(result, args.secret_env)


def _flush(
    spool: Spool, url: str, secret: str, deadline: float, timeout: float, key_id: str = ""
) -> int:
    """``--flush``: send what waits; 0 once nothing does, 3 while some still wait."""
    if not spool.usable():
        print(f"theloop_send: error: --spool {spool.directory} cannot be written", file=sys.stderr)
        return EXIT_USAGE
    with spool.locked():
        blocked = spool.flush(url, secret, deadline, timeout=timeout, key_id=key_id)
        waiting = len(spool.waiting())
    if blocked is None:
        print("theloop_send: nothing waits in the spool")
        return EXIT_DELIVERED
    print(f"theloop_send: {waiting} still waiting in the spool: {blocked.reason}", file=sys.stderr)
    return EXIT_SPOOLED


def _report(result: Result, secret_env: str) -> int:
    """Say what happened in one line (never the secret) and pick the exit status."""
    if result.spooled:
        print(
            f"theloop_send: not delivered yet: {result.reason} (id {result.event_id})",
            file=sys.stderr,
        )
        return EXIT_SPOOLED
    if result.delivered:
        tries = f", {result.attempts} attempts" if result.attempts > 1 else ""
        print(f"theloop_send: {result.reason} (HTTP {result.status}, id {result.event_id}{tries})")
        return EXIT_DELIVERED
    reason = result.reason
    if result.status == 401:
        reason += (
            f" — check that ${secret_env} holds the same secret as the bot's "
            "THELOOP_WEBHOOK_SECRET, and that both clocks are right (±300 s)"
        )
    print(f"theloop_send: not delivered: {reason} (id {result.event_id})", file=sys.stderr)
    return EXIT_REFUSED


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="theloop_send.py",
        description="Send one the-loop event to the theloop bot's signed webhook.",
    )
    parser.add_argument("--url", required=True, help="the bot's webhook URL")
    parser.add_argument(
        "--secret-env", required=True, metavar="NAME", help="env var holding the secret"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--event-file", metavar="F", help="a JSON event (- for stdin)")
    source.add_argument("--event-type", metavar="T", help="the event type, e.g. phase.started")
    source.add_argument("--flush", action="store_true", help="send only what waits in --spool")
    parser.add_argument(
        "--spool", metavar="DIR", help="keep what the bot cannot take yet here; send it first"
    )
    parser.add_argument(
        "--key-id",
        metavar="ID",
        default="",
        help=f"the instance whose secret signs (default ${KEY_ID_ENV}; a bot with instances:)",
    )
    parser.add_argument("--work-item", metavar="REF", help="e.g. github:owner/repo#7")
    parser.add_argument("--text-file", metavar="F", help="the message markdown (- for stdin)")
    parser.add_argument("--url-link", metavar="U", default="", help="the event's link")
    parser.add_argument("--detail", metavar="k=v", action="append", default=[], help="repeatable")
    parser.add_argument("--summary", metavar="S", default="")
    parser.add_argument("--id", default="", help="the event id (default: from the content)")
    parser.add_argument(
        "--deadline", type=float, default=DEFAULT_DEADLINE, help="seconds to keep retrying"
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per attempt"
    )
    return parser


def _key_id(given: str) -> str:
    """``--key-id``, else ``$THELOOP_KEY_ID``; a header value, so one plain word."""
    key_id = (given or os.environ.get(KEY_ID_ENV, "")).strip()
    if key_id and not all(c.isascii() and (c.isalnum() or c in "._-") for c in key_id):
        raise UsageError(f"--key-id {key_id!r}: letters, digits, '.', '_' or '-' only")
    return key_id


def _secret(name: str) -> str:
    value = os.environ.get(name, "")
    if not value.strip():
        raise UsageError(f"environment variable {name} (--secret-env) is not set")
    return value


def _event(args: argparse.Namespace) -> dict[str, Any]:
    """The event the arguments describe; a :class:`UsageError` names what is wrong."""
    if args.event_file:
        if any((args.work_item, args.text_file, args.detail, args.url_link, args.summary)):
            raise UsageError("--event-file carries the whole event; drop the other fields")
        event = _json_object(_read(args.event_file, "--event-file"))
    else:
        event = _built(args)
    if args.id:
        event["id"] = args.id
    return event


def _built(args: argparse.Namespace) -> dict[str, Any]:
    if not args.work_item:
        raise UsageError("--event-type needs --work-item")
    event: dict[str, Any] = {"eventType": args.event_type, "workItem": args.work_item}
    if args.text_file:
        event["text"] = _read(args.text_file, "--text-file")
    if args.url_link:
        event["url"] = args.url_link
    if args.detail:
        event["detail"] = _details(args.detail)
    if args.summary:
        event["summary"] = args.summary
    return event


def _details(pairs: Sequence[str]) -> dict[str, str]:
    detail: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--detail {pair!r} is not key=value")
        detail[key.strip()] = value
    return detail


def _read(path: str, flag: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{flag} {path}: {exc.__class__.__name__}: {exc}") from None


def _json_object(text: str) -> dict[str, Any]:
    try:
        event = json.loads(text)
    except RecursionError:
        raise UsageError(f"--event-file is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise UsageError(f"--event-file is not JSON: {exc}") from None
    if not isinstance(event, dict):
        raise UsageError("--event-file must hold one JSON object (an event)")
    return event


if __name__ == "__main__":
    sys.exit(main())
