"""the-loop's client against the loopback fake of its control plane: one method per
``/api/v1`` path, and the shared HTTP rules (no token to another host, no POST turned GET,
a capped answer) as the relay, `/the-loop`, the doctor and the stream meet them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from looproom.clients.the_loop import EventStream, LoopApi, stream_url
from looproom.control.loop_control import LoopControl
from looproom.decide.authorization import AccessPolicy
from looproom.durable.outcome import Delivered, Failed, RetryLater
from looproom.inbound.stream import StreamFollower
from looproom.relay import forms
from looproom.relay.sinks import LoopSink
from looproom.settings.grants import INSTANCE
from tests.fakes.loop_api import REPLY, RESTART, FakeLoop
from tests.support.wait import wait_for

TOKEN = "loop-proxy-token-abcdef"
BEARER = f"Bearer {TOKEN}"
REF = "github:acme/api#7"
ANSWER = {"ref": REF, "text": "use the blue one", "actor": "U0ALICE01"}
TARGET = {"sink": forms.LOOP, "path": REPLY, "json": ANSWER}


@pytest.fixture
def loop() -> Iterator[FakeLoop]:
    with FakeLoop() as fake:
        yield fake


@pytest.fixture
def elsewhere() -> Iterator[FakeLoop]:
    """A host an attacker holds: another loopback address."""
    fake = FakeLoop()
    fake.host = "127.0.0.2"
    with fake:
        yield fake


def api(loop: FakeLoop, **options: object) -> LoopApi:
    return LoopApi(loop.url, TOKEN, timeout=5, **options)  # type: ignore[arg-type]


# -- one method per path -------------------------------------------------------------------


def test_each_path_is_asked_as_the_loop_routes_it_with_the_bearer(loop) -> None:
    loop.standing["nightly"] = False
    loop.work_items[REF] = {"ref": REF, "lastControl": "pause"}
    client = api(loop)
    assert client.health().value == {"status": "ok"}
    assert client.instance().value["name"] == "loop-one"
    assert client.restart(upgrade=True).value["withUpgrade"] is True
    assert [row["name"] for row in client.standing_sessions().value] == ["nightly"]
    assert client.standing_control("nightly", "start").value["ok"] is True
    assert client.say({"name": "nightly", "text": "hi", "actor": "U1"}).status == 200
    assert client.reply(ANSWER, key="k1").status == 200
    assert client.events({"type": "session.reply_sent", "workItem": REF}).value[0]["actor"] == (
        "U0ALICE01"
    )
    assert client.work_items().value == [loop.work_items[REF]]
    assert {r.headers.get("Authorization") for r in loop.requests} == {BEARER}
    (reply,) = [r for r in loop.requests if r.path == REPLY]
    assert reply.headers["Idempotency-Key"] == "k1"


def test_without_a_token_no_authorization_is_sent(loop) -> None:
    LoopApi(loop.url, timeout=5).health()
    assert "Authorization" not in loop.requests[0].headers


def test_a_bare_base_streams_from_its_stream_path_and_a_full_url_is_kept() -> None:
    assert stream_url("http://h:8765") == "http://h:8765/api/v1/stream"
    assert stream_url("http://h/api/v1/stream?workItem=x") == "http://h/api/v1/stream?workItem=x"
    headers = EventStream("http://h", TOKEN).headers("42")
    assert (headers["Authorization"], headers["Last-Event-ID"]) == (BEARER, "42")


# -- the shared rules, as the-loop's paths meet them -------------------------------------------


def test_a_reply_post_answered_301_is_not_delivered_and_says_why(loop) -> None:
    moved = f"{loop.url}/v2/sessions/reply"
    loop.fail(REPLY, 301, headers={"Location": moved})
    outcome = LoopSink(loop.url, token=TOKEN, timeout=5).send(TARGET, key="k1")
    assert isinstance(outcome, Failed)
    assert "not delivered" in outcome.reason and "301" in outcome.reason
    assert moved in outcome.reason
    assert loop.replies == [] and [r.method for r in loop.requests] == ["POST"]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_carries_no_token_there(loop, elsewhere, status) -> None:
    loop.fail("/api/v1/", status, headers={"Location": f"{elsewhere.url}{REPLY}"}, times=10)
    outcome = LoopSink(loop.url, token=TOKEN, timeout=5).send(TARGET, key="k1")
    assert isinstance(outcome, Failed) and elsewhere.url in outcome.reason
    assert api(loop).work_items().value is None
    assert elsewhere.requests == []


def test_a_restart_answered_with_a_redirect_is_not_confirmed_and_says_where(
    loop, elsewhere
) -> None:
    loop.fail(RESTART, 308, headers={"Location": f"{elsewhere.url}{RESTART}"})
    policy = AccessPolicy("UBOT", frozenset({"U0ADMIN01"}), granted=frozenset({INSTANCE}))
    control = LoopControl(loop.url, lambda: policy, {}, lambda _ref: "")
    said = control.restart("U0ADMIN01", "trigger-1", upgrade=False)
    assert "was not confirmed: the-loop answered 308" in said and elsewhere.url in said
    assert elsewhere.requests == [] and loop.restarts == []


def test_the_stream_follows_no_redirect_to_another_host(loop, elsewhere) -> None:
    where = {"Location": f"{elsewhere.url}/api/v1/stream"}
    loop.fail("/api/v1/stream", 307, headers=where, times=2)
    assert EventStream(loop.url, TOKEN).opens(5).status == 307
    follower = StreamFollower(loop.url, lambda _event: True, {}, token=TOKEN, min_backoff=30)
    follower.start()
    try:
        wait_for(lambda: "307" in follower.status().last_error, 20, "the 307 seen")
    finally:
        follower.stop()
    assert elsewhere.requests == []


def test_an_event_log_over_the_cap_is_unread_and_a_reply_over_it_may_have_landed(loop) -> None:
    loop.fail("/api/v1/events", 200, body=["x" * 3000], times=2)
    size = len(json.dumps(["x" * 3000]).encode())
    assert api(loop, max_bytes=size).events({}).value == ["x" * 3000]
    cut = api(loop, max_bytes=size - 1).events({})
    assert cut.value is None and isinstance(cut.outcome(), RetryLater)
    loop.fail(REPLY, 200, body={"delivered": True, "padding": "x" * 4000})
    sink = LoopSink(loop.url, token=TOKEN, timeout=5)
    sink._loop = api(loop, max_bytes=1000)  # the cap, made small enough to reach
    outcome = sink.send(TARGET, key="k2")
    assert isinstance(outcome, RetryLater) and "may have delivered" in outcome.reason


def test_a_relay_call_with_no_method_here_is_refused_before_any_request(loop) -> None:
    outcome = LoopSink(loop.url, timeout=5).send({**TARGET, "path": "/api/v1/shutdown"}, key="k")
    assert isinstance(outcome, Failed) and loop.requests == []
    delivered = LoopSink(loop.url, timeout=5).send(TARGET, key="k3")
    assert isinstance(delivered, Delivered) and loop.replies == [ANSWER]
