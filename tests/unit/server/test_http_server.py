"""The bot's HTTP server over real sockets: waitress with theloop's routes and limits.

Each probe of a hostile network is made on the wire against the real server and the real
room (its real SQLite inbox): only the bot's own routes answer, always in JSON; ambiguous
framing, oversized and slow requests are refused or cut off without holding anyone else
up; a body that is not strict JSON is a final 4xx naming the field, with nothing stored;
storage that cannot be written is a 503 with ``Retry-After``; a taken port is reported,
not raised.
"""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from looproom.assembly import Activation
from looproom.server.app import App
from looproom.server.runner import HttpServer, Limits
from looproom.settings import Environment, Settings
from tests.support.signed import (
    COMMANDS_PATH,
    INTERACTIVE_PATH,
    WEBHOOK_PATH,
    slack_headers,
    webhook_headers,
)

SECRET = "http-server-test-secret-0123456789ab"
SLACK_SECRET = "http-server-test-slack-signing-secret"
#: Short enough that the trickling test sees its request cut off; idle stays the default.
#: The other tests keep the bot's own deadline: a request read whole needs no fast machine.
DEADLINE = 1.0
#: docs/security.md: a body is at most 262 144 bytes (256 KB); past it, 413.
BODY_CAP = 262_144
#: docs/security.md: the request line and headers are at most 16 KB; past them, 431.
HEAD_CAP = 16 * 1024


@dataclass
class Served:
    room: Activation
    server: HttpServer

    @property
    def port(self) -> int:
        return self.server.port

    def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def event(self, body: bytes) -> tuple[int, dict[str, Any]]:
        status, _headers, raw = self.request(
            "POST", WEBHOOK_PATH, body, webhook_headers(SECRET, body)
        )
        return status, json.loads(raw)

    def raw(self, data: bytes) -> bytes:
        """Send ``data`` as it is; everything the server says until it closes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=30) as sock:
            sock.sendall(data)
            return _read_to_close(sock)

    def stored(self) -> int:
        return self.room.inbox.depth()


def _status(answer: bytes) -> int:
    """The status of the (first) response in ``answer``."""
    return int(answer.split(b" ", 2)[1])


def _read_to_close(sock: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _room(data_dir: Path) -> Activation:
    env = Environment.from_env(
        {"THELOOP_WEBHOOK_SECRET": SECRET, "THELOOP_SLACK_SIGNING_SECRET": SLACK_SECRET}
    )
    return Activation(
        env,
        Settings(),
        store={},
        data_dir=data_dir,
        slack=None,
        say=lambda _to, _text: None,
        admins=("@admin",),
        bot_member=lambda: "@theloop",
    )


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """A room (its workers held unless ``start``) behind a real server on a free port."""
    made: list[Served] = []

    def make(*, start: bool = False, limits: Limits | None = None) -> Served:
        room = _room(tmp_path / f"room{len(made)}")
        if start:
            room.start()
        server = HttpServer(App(room.routes), limits or Limits())
        assert server.start("127.0.0.1", 0).address
        made.append(Served(room, server))
        return made[-1]

    yield make
    for served in made:
        served.server.stop()
        served.room.stop()


def _event(n: int = 1, **fields: Any) -> bytes:
    return json.dumps(
        {"id": f"http-{n}", "eventType": "decision-pending", "workItem": "github:acme/api#1"}
        | fields
    ).encode()


# -- only our routes, always JSON ------------------------------------------------------------


def test_only_the_bots_routes_answer_and_every_answer_is_json(serve) -> None:
    served = serve()
    for method, path, status in [
        ("GET", "/echo", 404),
        ("POST", "/echo", 404),
        ("GET", "/", 404),
        ("GET", WEBHOOK_PATH, 405),
        ("DELETE", INTERACTIVE_PATH, 405),
        ("POST", "/theloop/health", 405),
    ]:
        answered, headers, body = served.request(method, path)
        assert answered == status, (method, path)
        assert headers["Content-Type"] == "application/json"
        assert "error" in json.loads(body)
    assert served.request("GET", WEBHOOK_PATH)[1]["Allow"] == "POST"


def test_a_signed_event_is_accepted_and_counted_in_the_metrics(serve) -> None:
    served = serve()
    assert served.event(_event(1)) == (202, {"status": "accepted", "id": "http-1"})
    assert served.event(_event(1))[0] == 200
    assert served.event(b"{")[0] == 400
    status, headers, text = served.request("GET", "/theloop/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    lines = text.decode().splitlines()
    assert "theloop_events_accepted_total 1.0" in lines
    assert "theloop_events_duplicate_total 1.0" in lines
    assert 'theloop_events_refused_total{reason="malformed"} 1.0' in lines
    assert 'theloop_queue_depth{queue="inbox"} 1.0' in lines


def test_health_says_ok_while_storage_and_both_workers_are_well(serve) -> None:
    served = serve(start=True)
    status, _headers, body = served.request("GET", "/theloop/health")
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    served.room.worker.stop()
    status, _headers, body = served.request("GET", "/theloop/health")
    assert (status, json.loads(body)) == (503, {"status": "degraded"})
    said = served.room.admin.status(0.0)
    assert "health: DEGRADED — the delivery worker is not running" in said


# -- framing: what waitress reads before the application --------------------------------------


def test_content_length_with_transfer_encoding_is_refused_in_json(serve) -> None:
    served = serve()
    body = _event(1)
    headers = webhook_headers(SECRET, body)
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    answer = served.raw(
        f"POST {WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\n{head}Content-Length: {len(body)}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n".encode()
        + chunked
    )
    assert _status(answer) == 400
    assert b"Content-Type: application/json" in answer
    assert b"Content-Length and Transfer-Encoding" in answer
    assert served.stored() == 0


def _event_of(size: int) -> bytes:
    """A valid event exactly ``size`` bytes long (its text pads it)."""
    body = _event(1, text="x" * (size - len(_event(1, text=""))))
    assert len(body) == size
    return body


def test_a_body_of_exactly_the_cap_is_accepted_and_one_byte_more_is_a_413(serve) -> None:
    served = serve()
    assert served.event(_event_of(BODY_CAP)) == (202, {"status": "accepted", "id": "http-1"})
    over = _event_of(BODY_CAP + 1).replace(b"http-1", b"http-2")
    assert served.event(over) == (413, {"error": "body over 262144 bytes"})
    assert served.stored() == 1


def test_a_declared_body_over_the_limit_is_refused_before_any_100_continue(serve) -> None:
    served = serve()
    answer = served.raw(
        f"POST {WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Expect: 100-continue\r\nContent-Length: {BODY_CAP + 1}\r\n\r\n".encode()
    )
    assert _status(answer) == 413  # and the connection closed: we read to EOF
    assert b"100 Continue" not in answer
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"Content-Type: application/json" in head
    assert json.loads(body) == {"error": "body over 262144 bytes"}


def test_a_declared_body_of_exactly_the_cap_is_invited_with_100_continue(serve) -> None:
    served = serve()
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        sock.sendall(
            f"POST {WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Expect: 100-continue\r\nContent-Length: {BODY_CAP}\r\n\r\n".encode()
        )
        assert sock.recv(64).startswith(b"HTTP/1.1 100 Continue")


def _chunked(body: bytes) -> bytes:
    return (
        b"".join(
            f"{len(body[at : at + 65536]):x}\r\n".encode() + body[at : at + 65536] + b"\r\n"
            for at in range(0, len(body), 65536)
        )
        + b"0\r\n\r\n"
    )


def test_a_chunked_body_of_exactly_the_cap_is_read_and_one_byte_more_is_cut_off(serve) -> None:
    served = serve()
    answers = []
    for n, size in ((1, BODY_CAP), (2, BODY_CAP + 1)):
        body = _event_of(size).replace(b"http-1", f"http-{n}".encode())
        head = "".join(f"{k}: {v}\r\n" for k, v in webhook_headers(SECRET, body).items())
        answers.append(
            served.raw(
                f"POST {WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\n{head}"
                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n".encode()
                + _chunked(body)
            )
        )
    assert [_status(answer) for answer in answers] == [202, 413]
    assert served.stored() == 1


def test_a_chunked_body_over_the_limit_is_refused_and_the_connection_closed(serve) -> None:
    served = serve()
    chunk = b"x" * 65536
    stream = b"".join(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n" for _ in range(5))
    answer = served.raw(
        f"POST {WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        + stream
    )
    assert _status(answer) == 413
    assert b"body over" in answer


def test_a_trickling_request_is_cut_off_at_the_deadline_while_others_are_answered(serve) -> None:
    served = serve(limits=Limits(request_deadline=DEADLINE))
    slow = socket.create_connection(("127.0.0.1", served.port), timeout=30)
    stop = threading.Event()

    def trickle() -> None:  # a byte every 0.1 s: never idle, never done
        try:
            slow.sendall(f"POST {WEBHOOK_PATH} HTTP/1.1\r\n".encode())
            while not stop.wait(0.1):
                slow.sendall(b"X")
        except OSError:
            return

    thread = threading.Thread(target=trickle, daemon=True)
    thread.start()
    try:
        assert served.event(_event(1))[0] == 202
        # Cut off by the deadline, not the idle timeout (30 s): the client never paused.
        answer = _read_to_close(slow)
        assert b"HTTP/1.1 2" not in answer
    finally:
        stop.set()
        thread.join(10)
        slow.close()


def test_idle_connections_do_not_keep_a_signed_event_from_being_answered(serve) -> None:
    served = serve()
    idle = [socket.create_connection(("127.0.0.1", served.port)) for _ in range(150)]
    try:
        assert served.event(_event(1))[0] == 202
    finally:
        for sock in idle:
            sock.close()


# -- the body: strict JSON, or a final 4xx naming the field -------------------------------


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "x"}
    for _ in range(depth):
        value = {"in": value}
    return value


REFUSED = {
    "escaped lone surrogate": (_event(text="fine \\ud800 not").replace(b"\\\\", b"\\"), "text"),
    "raw surrogate bytes": (_event(text="@").replace(b"@", b"\xed\xa0\x80"), "not UTF-8"),
    "latin-1 body": (_event(text="@").replace(b"@", b"\xe9t\xe9"), "not UTF-8"),
    "actor nested 500 deep": (_event(actor=_deep(500)), "actor"),
    "nested 100 000 deep": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than"),
    "integer over the digit limit": (
        _event(actor={"n": "@"}).replace(b'"@"', b"9" * 5000),
        "actor.n: an integer of 5000 digits",
    ),
    "NaN": (_event(actor={"n": "@"}).replace(b'"@"', b"NaN"), "actor.n: NaN is not JSON"),
    "Infinity": (_event(actor={"n": "@"}).replace(b'"@"', b"-Infinity"), "actor.n"),
    "1e999": (_event(actor={"n": "@"}).replace(b'"@"', b"1e999"), "actor.n"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_body_that_is_not_strict_json_is_a_final_400_naming_it_with_nothing_stored(
    serve, case: str
) -> None:
    served = serve()
    body, named = REFUSED[case]
    status, answer = served.event(body)
    assert status == 400, answer
    assert any(named in error for error in answer["errors"]), answer
    assert served.stored() == 0
    assert served.event(_event(2))[0] == 202  # and the next one is taken


def test_interactive_refuses_a_body_that_is_not_utf8_and_a_deep_payload(serve) -> None:
    served = serve()
    not_utf8 = b"payload=%7B%7D\xff\xfe"
    status, _h, raw = served.request(
        "POST", INTERACTIVE_PATH, not_utf8, slack_headers(SLACK_SECRET, not_utf8)
    )
    assert status == 400 and "not UTF-8" in json.loads(raw)["error"]
    deep = ("payload=" + urllib.parse.quote("[" * 5000 + "]" * 5000)).encode()
    status, _h, raw = served.request(
        "POST", INTERACTIVE_PATH, deep, slack_headers(SLACK_SECRET, deep)
    )
    assert status == 400 and "payload: nested deeper than" in json.loads(raw)["error"]
    unsigned = b"payload=%7B%7D"
    assert served.request("POST", INTERACTIVE_PATH, unsigned)[0] == 401


#: Bodies no parser would take: not UTF-8, not a form, not JSON.
UNREADABLE = {
    "latin-1": b"payload=%7B%22caf\xe9%22%7D",
    "binary": bytes(range(256)),
    "lone continuation bytes": b"\x80\x80{\xff}",
}
#: Each signed route, and the headers a forger would send (a wrong secret's signature).
FORGED = {
    WEBHOOK_PATH: lambda body: webhook_headers("not-the-bots-secret-0123456789ab", body),
    INTERACTIVE_PATH: lambda body: slack_headers("not-the-apps-signing-secret", body),
    COMMANDS_PATH: lambda body: slack_headers("not-the-apps-signing-secret", body),
}


@pytest.mark.parametrize("path", sorted(FORGED))
@pytest.mark.parametrize("kind", sorted(UNREADABLE))
def test_a_bad_signature_is_401_whatever_the_body_is(serve, path: str, kind: str) -> None:
    served = serve()
    body = UNREADABLE[kind]
    status, headers, raw = served.request("POST", path, body, FORGED[path](body))
    assert status == 401 and headers["Content-Type"] == "application/json"
    assert "signature" in json.loads(raw)["error"]
    assert served.stored() == 0


def test_a_signed_body_that_is_not_utf8_is_400_on_slacks_routes(serve) -> None:
    served = serve()
    body = UNREADABLE["latin-1"]
    for path in (INTERACTIVE_PATH, COMMANDS_PATH):
        status, _h, raw = served.request("POST", path, body, slack_headers(SLACK_SECRET, body))
        assert status == 400 and "not UTF-8 (byte 17)" in json.loads(raw)["error"]


# -- storage that cannot be written -----------------------------------------------------------


class FullDisk:
    """A SQLite connection on a full disk: every write refused as SQLite refuses it."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, *args: Any) -> Any:
        if sql.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "BEGIN")):
            raise sqlite3.OperationalError("database or disk is full")
        return self._db.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_a_full_disk_is_a_503_with_retry_after_and_only_the_admin_told_the_file(serve) -> None:
    served = serve(start=True)
    inbox = served.room.inbox
    real, inbox._db = inbox._db, FullDisk(inbox._db)
    try:
        body = _event(1)
        status, headers, raw = served.request(
            "POST", WEBHOOK_PATH, body, webhook_headers(SECRET, body)
        )
        assert (status, headers["Retry-After"]) == (503, "30")
        assert json.loads(raw) == {"error": "storage unavailable; retry later"}
        status, _headers, raw = served.request("GET", "/theloop/health")
        # Anyone reaching the port learns only that it is degraded; the admin, what and where.
        assert (status, json.loads(raw)) == (503, {"status": "degraded"})
        said = served.room.admin.status(0.0)
        assert "health: DEGRADED" in said and str(inbox.path) in said and "full" in said
    finally:
        inbox._db = real
    assert served.event(_event(1))[0] == 202  # the sender's retry is taken once there is room


# -- listening ----------------------------------------------------------------------------------


def test_a_taken_port_is_reported_not_raised(serve) -> None:
    served = serve()
    other = HttpServer(App(served.room.routes))
    listening = other.start("127.0.0.1", served.port)
    assert listening.address == ""
    assert f"cannot listen on 127.0.0.1:{served.port}" in listening.error
    assert "in use" in listening.error
    assert listening.describe().startswith("NOT LISTENING")
    other.stop()
    assert served.event(_event(1))[0] == 202  # the one listening is untouched


def test_an_address_not_on_this_machine_is_reported_not_raised(serve) -> None:
    served = serve()
    listening = HttpServer(App(served.room.routes)).start("192.0.2.1", 0)  # TEST-NET-1
    assert "cannot listen on 192.0.2.1:0" in listening.error


def test_stopping_closes_the_port(serve) -> None:
    served = serve()
    port = served.port
    served.server.stop()
    assert served.server.listening.describe() == "NOT LISTENING: stopped"
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def _head_of(size: int) -> bytes:
    """A health check whose request line and headers (their blank line included) are
    exactly ``size`` bytes."""
    start = b"GET /theloop/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
    end = b"\r\n\r\n"
    head = start + b"p" * (size - len(start) - len(end)) + end
    assert len(head) == size
    return head


def test_a_request_head_of_exactly_16_kb_is_read_and_one_byte_more_is_a_431(serve) -> None:
    served = serve(start=True)
    assert _status(served.raw(_head_of(HEAD_CAP))) == 200
    refused = served.raw(_head_of(HEAD_CAP + 1))
    assert _status(refused) == 431 and b"application/json" in refused
