"""The WSGI application: theloop's own routes and nothing else, every answer JSON.

``POST /theloop/events`` (the-loop's signed events), ``POST /theloop/slack/interactive``
(Slack's signed presses), ``GET /theloop/health`` and ``GET /theloop/metrics``. Any other
path is a JSON 404, any other method a JSON 405 naming the allowed one. A bug in a handler
is a JSON 500 without a traceback; bad input never reaches one (the handlers answer 4xx).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from looproom.http_rules import MAX_BODY_BYTES
from looproom.inbound.webhook import Answer, Request

log = logging.getLogger(__name__)

EVENTS = "/theloop/events"
INTERACTIVE = "/theloop/slack/interactive"
HEALTH = "/theloop/health"
METRICS = "/theloop/metrics"


class Service(Protocol):
    """What the routes hand their requests to (the activation's :class:`LoopRoom`)."""

    def receive(self, request: Request) -> Answer: ...

    def press(self, headers: Mapping[str, str], body: bytes) -> Answer: ...

    def health(self) -> Answer: ...

    def metrics_text(self) -> tuple[bytes, str]: ...


StartResponse = Callable[..., Any]


class App:
    """The WSGI callable over one :class:`Service`."""

    def __init__(self, service: Service) -> None:
        self._service = service
        self._routes: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], Reply]]] = {
            EVENTS: (("POST",), self._events),
            INTERACTIVE: (("POST",), self._interactive),
            HEALTH: (("GET", "HEAD"), self._health),
            METRICS: (("GET", "HEAD"), self._metrics),
        }

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        route = self._routes.get(path.rstrip("/") or "/")
        if route is None:
            reply = _json(Answer(404, {"error": f"no such route: {_shown(path)}"}))
        elif environ.get("REQUEST_METHOD", "GET") not in route[0]:
            allowed = ", ".join(route[0])
            reply = _json(Answer(405, {"error": f"method not allowed: {allowed} only"}))
            reply.headers.append(("Allow", allowed))
        else:
            reply = self._answer(route[1], environ)
        start_response(reply.status, reply.headers)
        return [b"" if environ.get("REQUEST_METHOD") == "HEAD" else reply.body]

    def _answer(self, handler: Callable[[dict[str, Any]], Reply], environ: dict[str, Any]) -> Reply:
        try:
            return handler(environ)
        except Exception:  # a bug: answered plainly, never with a traceback
            log.exception(
                "theloop: %s %s failed", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
            )
            return _json(Answer(500, {"error": "internal error; see the bot's log"}))

    def _events(self, environ: dict[str, Any]) -> Reply:
        length = _length(environ)
        answer = self._service.receive(
            Request(environ["REQUEST_METHOD"], _headers(environ), _body(environ, length), length)
        )
        return _json(answer)

    def _interactive(self, environ: dict[str, Any]) -> Reply:
        body = _body(environ, _length(environ))
        return _json(self._service.press(_headers(environ), body))

    def _health(self, _environ: dict[str, Any]) -> Reply:
        return _json(self._service.health())

    def _metrics(self, _environ: dict[str, Any]) -> Reply:
        body, content_type = self._service.metrics_text()
        return Reply("200 OK", [("Content-Type", content_type)], body)


class Reply:
    """A status line, headers and a body, as WSGI sends them."""

    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def _json(answer: Answer) -> Reply:
    headers = [("Content-Type", "application/json"), *answer.headers.items()]
    status = f"{answer.status} {_REASONS.get(answer.status, 'Status')}"
    return Reply(status, headers, answer.json().encode())


def _length(environ: Mapping[str, Any]) -> int | None:
    raw = str(environ.get("CONTENT_LENGTH") or "")
    return int(raw) if raw.isascii() and raw.isdigit() else None


def _body(environ: Mapping[str, Any], length: int | None) -> bytes:
    """At most one byte past the limit: enough to know a body is too large."""
    wanted = MAX_BODY_BYTES + 1 if length is None else min(length, MAX_BODY_BYTES + 1)
    return environ["wsgi.input"].read(wanted) if wanted else b""


def _headers(environ: Mapping[str, Any]) -> dict[str, str]:
    headers = {
        key[5:].replace("_", "-").title(): str(value)
        for key, value in environ.items()
        if key.startswith("HTTP_")
    }
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            headers[key.replace("_", "-").title()] = str(environ[key])
    return headers


def _shown(path: str) -> str:
    """A path for an error message: short, and quoted as JSON would."""
    return json.dumps(path[:80] + ("…" if len(path) > 80 else ""))
