"""Slack's Events API in HTTP mode, served by the bot's own server over real sockets.

The mounted app is what the SlackV3 backend mounts in HTTP mode: a Flask app with the
slackeventsapi view on ``/slack/events``. Shown here: Slack's signed challenge and events
reach it with their body intact and its answers come back as JSON; a forged, stale, oversized
or not-strictly-JSON request is refused in JSON before it reaches the view; a view that fails
is a JSON 500, never a page.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st
from slackeventsapi import SlackEventAdapter

from looproom import strict_json
from looproom.assembly import Activation
from looproom.inbound import slack_events
from looproom.server.app import App, Mount
from looproom.server.runner import HttpServer
from looproom.settings import Environment, Settings
from tests.support.signed import slack_headers

SLACK_SECRET = "events-api-test-slack-signing-secret"
PATH = slack_events.PATH
#: docs/security.md: a body is at most 262 144 bytes (256 KB) on every route; past it, 413.
BODY_CAP = 262_144


class Served:
    """A room's server with Slack's Events API view mounted; what the view was handed."""

    def __init__(self, room: Activation, server: HttpServer, seen: list[dict[str, Any]]) -> None:
        self.room, self.server, self.seen = room, server, seen

    def post(
        self, body: bytes, headers: dict[str, str] | None = None, path: str = PATH
    ) -> tuple[int, str, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        try:
            connection.request("POST", path, body=body, headers=headers or {})
            response = connection.getresponse()
            raw = response.read()
            return response.status, response.getheader("Content-Type", ""), json.loads(raw)
        finally:
            connection.close()

    def signed(self, body: bytes, **options: Any) -> tuple[int, str, Any]:
        headers = slack_headers(SLACK_SECRET, body, **options)
        headers["Content-Type"] = "application/json"
        return self.post(body, headers)


def _events_app(seen: list[dict[str, Any]]) -> Flask:
    """What SlackV3 builds in HTTP mode: slackeventsapi's view on a Flask app."""
    flask_app = Flask("events-api-test")
    adapter = SlackEventAdapter(SLACK_SECRET, PATH, flask_app)
    adapter.on("message", seen.append)

    def broken(_event: dict[str, Any]) -> None:
        raise RuntimeError("a handler's bug")

    adapter.on("reaction_added", broken)
    adapter.on("app_home_opened", seen.append)
    return flask_app


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    made: list[Served] = []

    def make(signing_secret: str = SLACK_SECRET) -> Served:
        env = Environment.from_env({"THELOOP_SLACK_SIGNING_SECRET": signing_secret})
        room = Activation(
            env,
            Settings(),
            store={},
            data_dir=tmp_path / f"room{len(made)}",
            slack=None,
            say=lambda _to, _text: None,
            admins=("@admin",),
            bot_member=lambda: "@theloop",
        )
        seen: list[dict[str, Any]] = []
        server = HttpServer(App(room.routes, {PATH: room.routes.events_api(_events_app(seen))}))
        assert server.start("127.0.0.1", 0).address
        made.append(Served(room, server, seen))
        return made[-1]

    yield make
    for served in made:
        served.server.stop()
        served.room.stop()


def _callback(text: str = "!theloop", **event: Any) -> bytes:
    message = {"type": "message", "channel": "C0LOOP0001", "user": "U0ALICE01", "text": text}
    return json.dumps(
        {"type": "event_callback", "event_id": "Ev01", "event": message | event}
    ).encode()


def test_slacks_url_verification_challenge_is_answered_in_json(serve) -> None:
    served = serve()
    body = json.dumps({"type": "url_verification", "challenge": "3eZbrw1aBm", "token": "t"})
    status, content_type, answer = served.signed(body.encode())
    assert (status, answer) == (200, {"challenge": "3eZbrw1aBm"})
    assert content_type == "application/json"


def test_a_signed_event_reaches_the_view_whole_and_is_acknowledged_in_json(serve) -> None:
    served = serve()
    body = _callback("héllo · !theloop")
    assert served.signed(body) == (200, "application/json", {})
    assert [event["event"]["text"] for event in served.seen] == ["héllo · !theloop"]
    # A trailing slash reaches the same view, which Slack's path has none of.
    assert served.post(body, {**slack_headers(SLACK_SECRET, body)}, PATH + "/")[0] == 200
    assert len(served.seen) == 2


def test_the_home_tab_opened_is_taken_by_the_room_not_the_backend(serve) -> None:
    served = serve()
    heard: list[Any] = []
    served.room.routes._heard = heard.append  # what the attention side is handed
    opened = {"type": "app_home_opened", "user": "U0ALICE01", "tab": "home", "event_ts": "1.2"}
    body = json.dumps({"type": "event_callback", "event_id": "Ev02", "event": opened}).encode()
    assert served.signed(body) == (200, "application/json", {"ok": True})
    assert heard == [opened] and served.seen == []
    assert served.post(body, {"Content-Type": "application/json"})[0] == 401  # unsigned
    assert len(heard) == 1


def test_slacks_resend_after_a_timeout_is_acknowledged_and_not_handled_again(serve) -> None:
    served = serve()
    body = _callback("approve")
    assert served.signed(body)[0] == 200
    resent = {**slack_headers(SLACK_SECRET, body), "Content-Type": "application/json"}
    resent |= {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    assert served.post(body, resent)[0] == 200
    assert len(served.seen) == 1
    # A resend after a failure is the only delivery that reached the bot: it is handled.
    failed = {**resent, "X-Slack-Retry-Reason": "http_error"}
    assert served.post(body, failed)[0] == 200
    assert len(served.seen) == 2
    forged = {**slack_headers("not-the-apps-secret", body), "X-Slack-Retry-Reason": "http_timeout"}
    assert served.post(body, forged)[0] == 401


def test_forged_and_stale_requests_never_reach_the_view(serve) -> None:
    served = serve()
    body = _callback()
    forged = slack_headers("not-the-apps-secret", body)
    stale = slack_headers(SLACK_SECRET, body, stamp=1_600_000_000)
    for headers in (forged, stale, {"Content-Type": "application/json"}):
        status, content_type, answer = served.post(body, headers)
        assert status == 401 and content_type == "application/json", answer
        assert answer["error"]
    assert served.seen == []


@pytest.mark.parametrize(
    "body", [b'{"event": {"text": "\xff"}}', bytes(range(256)), b"\x80 not json"], ids=repr
)
def test_a_bad_signature_is_401_whatever_the_body_is(serve, body: bytes) -> None:
    served = serve()
    forged = {**slack_headers("not-the-apps-secret", body), "Content-Type": "application/json"}
    status, content_type, answer = served.post(body, forged)
    assert status == 401 and content_type == "application/json"
    assert "signature" in answer["error"]
    assert served.seen == []


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b'{"event": {"text": "\xff"}}', "not UTF-8"),
        (b'{"event": {"text": "\\ud800"}}', "lone surrogate"),
        (b'{"event": {"ts": NaN}}', "NaN"),
        (b'{"event": ' * 200 + b"1" + b"}" * 200, "nested deeper"),
        (b'{"n": ' + b"9" * 5000 + b"}", "digits"),
        (b'["event_callback"]', "expected a JSON object"),
    ],
)
def test_a_signed_body_that_is_not_strict_json_is_a_final_400_naming_why(
    serve, body: bytes, named: str
) -> None:
    served = serve()
    status, content_type, answer = served.post(body, slack_headers(SLACK_SECRET, body))
    assert status == 400 and content_type == "application/json"
    assert named in answer["error"]
    assert served.seen == []


def _callback_of(size: int) -> bytes:
    """A signed-able event callback exactly ``size`` bytes long (its text pads it)."""
    body = _callback("x" * (size - len(_callback(""))))
    assert len(body) == size
    return body


def test_a_body_of_exactly_the_cap_reaches_the_view_and_one_byte_more_is_a_json_413(
    serve,
) -> None:
    served = serve()
    status, _content_type, _answer = served.signed(_callback_of(BODY_CAP))
    assert status == 200 and len(served.seen) == 1
    status, content_type, answer = served.signed(_callback_of(BODY_CAP + 1))
    assert status == 413 and content_type == "application/json" and answer["error"]
    assert len(served.seen) == 1


def test_without_a_signing_secret_every_event_is_refused(serve) -> None:
    served = serve(signing_secret="")
    status, _content_type, answer = served.signed(_callback())
    assert status == 503 and "THELOOP_SLACK_SIGNING_SECRET" in answer["error"]
    assert served.seen == []


def test_a_view_that_fails_answers_a_json_500_without_its_traceback(serve) -> None:
    served = serve()
    status, content_type, answer = served.signed(_callback(type="reaction_added"))
    assert (status, content_type) == (500, "application/json")
    assert "RuntimeError" not in json.dumps(answer) and answer["error"]


def test_only_post_reaches_the_mounted_path(serve) -> None:
    served = serve()
    connection = http.client.HTTPConnection("127.0.0.1", served.server.port, timeout=30)
    try:
        connection.request("GET", PATH)
        response = connection.getresponse()
        assert response.status == 405 and response.getheader("Allow") == "POST"
        assert "error" in json.loads(response.read())
    finally:
        connection.close()


def test_a_mount_cannot_take_a_route_of_the_bots_own(tmp_path: Path) -> None:
    mount = Mount(app=lambda _environ, _start: [b""], admit=lambda _headers, _body: None)
    for path in ("/theloop/events", "/slack/events/", "slack/events"):
        with pytest.raises(ValueError, match="cannot mount"):
            App(service=None, mounts={path: mount})  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300) | st.from_type(dict).map(lambda d: json.dumps(d).encode()))
def test_admit_passes_a_signed_body_on_only_when_it_is_a_strict_json_object(body: bytes) -> None:
    headers = slack_headers(SLACK_SECRET, body)
    refused = slack_events.admit(headers, body, SLACK_SECRET, float(headers_stamp(headers)))
    try:
        accepted = isinstance(strict_json.loads(body), dict)
    except strict_json.StrictJSONError:
        accepted = False
    assert (refused is None) == accepted
    if refused is not None:
        assert refused.status == 400 and refused.body["error"]


def headers_stamp(headers: dict[str, str]) -> str:
    return headers["X-Slack-Request-Timestamp"]
