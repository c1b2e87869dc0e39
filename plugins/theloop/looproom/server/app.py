"""The WSGI application: theloop's own routes and nothing else, every answer JSON.

``POST /theloop/events`` (the-loop's signed events), ``POST /theloop/slack/interactive``
(Slack's signed presses), ``POST /theloop/slack/commands`` (the signed ``/the-loop``
slash command), ``GET /theloop/health``, ``GET /theloop/metrics`` and ``GET /theloop/files``
(a file attached to a reply, for a signed link the relay handed the session), and
``POST /theloop/room-records`` (the room's records, read signed by loopside). Any other
path is a JSON 404, any other method a JSON 405 naming the allowed one. A bug in a handler
is a JSON 500 without a traceback; bad input never reaches one (the handlers answer 4xx).

Another WSGI application can be served at one exact path as a :class:`Mount` — Errbot's
Flask app for Slack's Events API, in HTTP mode. It gets only what its ``admit`` lets through,
read within the same body limit, and whatever it answers reaches the client as JSON.
"""

from __future__ import annotations

import io
import json
import logging
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from looproom.attach.serving import Served
from looproom.http.rules import MAX_BODY_BYTES
from looproom.inbound.webhook import Answer, Request

log = logging.getLogger(__name__)

EVENTS = "/theloop/events"
INTERACTIVE = "/theloop/slack/interactive"
COMMANDS = "/theloop/slack/commands"
HEALTH = "/theloop/health"
METRICS = "/theloop/metrics"
FILES = "/theloop/files"
ROOM_RECORDS = "/theloop/room-records"


class Service(Protocol):
    """What the routes hand their requests to (the activation's :class:`Activation`)."""

    def receive(self, request: Request) -> Answer: ...

    def press(self, headers: Mapping[str, str], body: bytes) -> Answer: ...

    def command(self, headers: Mapping[str, str], body: bytes) -> Answer: ...

    def health(self) -> Answer: ...

    def metrics_text(self) -> tuple[bytes, str]: ...

    def file(self, query: str) -> Served | Answer: ...

    def room_records(self, request: Request) -> Answer: ...


StartResponse = Callable[..., Any]
#: A WSGI application (PEP 3333).
WsgiApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]
#: ``admit(headers, body)``: ``None`` to pass a request on, else the refusal to answer.
Admit = Callable[[Mapping[str, str], bytes], Answer | None]


@dataclass(frozen=True)
class Mount:
    """Another WSGI application served at one exact path, behind this server's rules."""

    app: WsgiApp
    admit: Admit
    methods: tuple[str, ...] = ("POST",)


class App:
    """The WSGI callable over one :class:`Service`, and any :class:`Mount` by its path."""

    def __init__(self, service: Service, mounts: Mapping[str, Mount] | None = None) -> None:
        self._service = service
        self._routes: dict[str, tuple[tuple[str, ...], Callable[[dict[str, Any]], WsgiReply]]] = {
            EVENTS: (("POST",), self._events),
            INTERACTIVE: (("POST",), self._interactive),
            COMMANDS: (("POST",), self._commands),
            HEALTH: (("GET", "HEAD"), self._health),
            METRICS: (("GET", "HEAD"), self._metrics),
            FILES: (("GET",), self._file),
            ROOM_RECORDS: (("POST",), self._room_records),
        }
        for path, mount in (mounts or {}).items():
            if path in self._routes or path != path.rstrip("/") or not path.startswith("/"):
                raise ValueError(f"cannot mount an app at {path!r}")
            self._routes[path] = (mount.methods, partial(self._mounted, path, mount))

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

    def _answer(
        self, handler: Callable[[dict[str, Any]], WsgiReply], environ: dict[str, Any]
    ) -> WsgiReply:
        try:
            return handler(environ)
        except Exception:  # a bug: answered plainly, never with a traceback
            log.exception(
                "theloop: %s %s failed", environ.get("REQUEST_METHOD"), environ.get("PATH_INFO")
            )
            return _json(Answer(500, {"error": "internal error; see the bot's log"}))

    def _events(self, environ: dict[str, Any]) -> WsgiReply:
        length = _length(environ)
        answer = self._service.receive(
            Request(environ["REQUEST_METHOD"], _headers(environ), _body(environ, length), length)
        )
        return _json(answer)

    def _room_records(self, environ: dict[str, Any]) -> WsgiReply:
        length = _length(environ)
        request = Request("POST", _headers(environ), _body(environ, length), length)
        return _json(self._service.room_records(request))

    def _interactive(self, environ: dict[str, Any]) -> WsgiReply:
        body = _body(environ, _length(environ))
        return _json(self._service.press(_headers(environ), body))

    def _commands(self, environ: dict[str, Any]) -> WsgiReply:
        body = _body(environ, _length(environ))
        return _json(self._service.command(_headers(environ), body))

    def _health(self, _environ: dict[str, Any]) -> WsgiReply:
        return _json(self._service.health())

    def _metrics(self, _environ: dict[str, Any]) -> WsgiReply:
        body, content_type = self._service.metrics_text()
        return WsgiReply("200 OK", [("Content-Type", content_type)], body)

    def _file(self, environ: dict[str, Any]) -> WsgiReply:
        found = self._service.file(str(environ.get("QUERY_STRING") or ""))
        if isinstance(found, Answer):
            return _json(found)
        name = urllib.parse.quote(found.name)
        headers = [
            ("Content-Type", found.mimetype),
            ("Content-Disposition", f"attachment; filename*=UTF-8''{name}"),
            ("X-Content-Type-Options", "nosniff"),
            ("Cache-Control", "private, no-store"),
        ]
        return WsgiReply("200 OK", headers, found.body)

    def _mounted(self, path: str, mount: Mount, environ: dict[str, Any]) -> WsgiReply:
        body = _body(environ, _length(environ))
        if len(body) > MAX_BODY_BYTES:
            return _json(Answer(413, {"error": f"body too large (at most {MAX_BODY_BYTES} bytes)"}))
        refused = mount.admit(_headers(environ), body)
        if refused is not None:
            log.warning("%s refused: %s", path, refused.body.get("error", refused.status))
            return _json(refused)
        # The mounted app reads the body we already read, whole, at the path it registered.
        inner = {
            **environ,
            "PATH_INFO": path,
            "wsgi.input": io.BytesIO(body),
            "CONTENT_LENGTH": str(len(body)),
        }
        return _as_json(*_called(mount.app, inner))


class WsgiReply:
    """A status line, headers and a body, as WSGI sends them."""

    def __init__(self, status: str, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body


_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    410: "Gone",
    413: "Content Too Large",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def _json(answer: Answer) -> WsgiReply:
    headers = [("Content-Type", "application/json"), *answer.headers.items()]
    status = f"{answer.status} {_REASONS.get(answer.status, 'Status')}"
    return WsgiReply(status, headers, answer.json().encode())


def _called(app: WsgiApp, environ: dict[str, Any]) -> tuple[int, str, bytes]:
    """Run a WSGI app to its end: its status code, its Content-Type and its whole body."""
    started: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], _exc: Any = None) -> Any:
        started[:] = [status, headers]
        return lambda _data: None  # the legacy write(): not used by the apps mounted here

    result = app(environ, start_response)
    try:
        body = b"".join(result)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    status, headers = started or ["500", []]
    code = int(str(status).split(" ", 1)[0])
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    return code, content_type, body


def _as_json(status: int, content_type: str, body: bytes) -> WsgiReply:
    """A mounted app's answer as JSON: its own JSON as it is; otherwise its status, with an
    empty object for a success and the reason for a failure (never an HTML page)."""
    if content_type.split(";")[0].strip() == "application/json":
        try:
            answer = json.loads(body)
        except ValueError:
            answer = None
        if isinstance(answer, dict):
            return _json(Answer(status, answer))
    if status < 400:
        return _json(Answer(status, {}))
    return _json(Answer(status, {"error": _REASONS.get(status, "refused").lower()}))


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
