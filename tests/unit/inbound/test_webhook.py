"""The webhook as a function: each answer (docs/webhook.md), in order; storage before the 202."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from looproom.durable.queue import DurableQueue
from looproom.events import Event
from looproom.inbound.signing import sign
from looproom.inbound.webhook import Request, handle
from tests.support.corpus import MESSAGES

SECRET = "webhook-secret-for-tests"
NOW = 1_790_000_000
#: docs/webhook.md: the body is at most 256 KB; over it, "body over 262144 bytes".
BODY_CAP = 262_144


@pytest.fixture
def inbox(tmp_path: Path) -> DurableQueue:
    queue = DurableQueue(tmp_path / "q.sqlite3", "inbox")
    yield queue
    queue.close()


def _signed(body: bytes, *, secret: str = SECRET, ts: int = NOW) -> Request:
    headers = {"X-TheLoop-Timestamp": str(ts), "X-TheLoop-Signature": sign(secret, ts, body)}
    return Request("POST", headers, body, len(body))


def _body(**fields: object) -> bytes:
    wire = {"id": "evt-1", "eventType": "decision-pending", "workItem": "github:o/r#7", **fields}
    return json.dumps(wire).encode()


def _post(request: Request, inbox: DurableQueue, secret: str = SECRET):
    return handle(request, secret=secret, inbox=inbox, now=NOW)


def test_an_accepted_event_is_stored_before_the_202(inbox: DurableQueue) -> None:
    answer = _post(_signed(_body(text="Which option?")), inbox)
    assert (answer.status, answer.body["status"], answer.body["id"]) == (202, "accepted", "evt-1")
    stored = Event.from_wire(json.loads(inbox.get("evt-1").payload))
    assert (stored.event_type, stored.text) == ("decision-pending", "Which option?")


def test_accepted_events_of_one_work_item_are_delivered_in_the_order_accepted(
    inbox: DurableQueue,
) -> None:
    for key, item in (("e1", "github:o/r#7"), ("e2", "github:o/r#7"), ("e3", "github:o/r#8")):
        assert _post(_signed(_body(id=key, workItem=item)), inbox).status == 202
    first = inbox.claim()
    assert (first.key, inbox.claim().key, inbox.claim()) == ("e1", "e3", None)
    inbox.done(first.key)
    assert inbox.claim().key == "e2"


def test_a_retried_delivery_answers_200_and_stores_nothing_new(inbox: DurableQueue) -> None:
    _post(_signed(_body()), inbox)
    again = _post(_signed(_body(text="changed on the retry")), inbox)
    assert (again.status, again.body) == (200, {"status": "duplicate", "id": "evt-1"})
    assert inbox.depth() == 1
    assert json.loads(inbox.get("evt-1").payload)["text"] == ""


def test_an_event_without_an_id_is_deduplicated_by_its_content(inbox: DurableQueue) -> None:
    body = json.dumps({"eventType": "phase.started", "workItem": "github:o/r#7"}).encode()
    first, second = _post(_signed(body), inbox), _post(_signed(body, ts=NOW + 5), inbox)
    assert (first.status, second.status) == (202, 200)
    assert first.body["id"].startswith("sha256:")


def test_no_secret_fails_closed_and_the_log_names_the_variable(
    inbox: DurableQueue, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    oversized = Request("POST", {}, b"", BODY_CAP * 10)
    for request in (_signed(_body()), oversized):
        assert _post(request, inbox, secret="").status == 503
    assert "THELOOP_WEBHOOK_SECRET" in caplog.text
    assert inbox.depth() == 0


def test_a_declared_oversized_body_is_refused_before_it_is_read(inbox: DurableQueue) -> None:
    # Unsigned on purpose: size is checked before the signature, so nothing is hashed.
    answer = _post(Request("POST", {}, b"", BODY_CAP + 1), inbox)
    assert (answer.status, answer.body) == (413, {"error": "body over 262144 bytes"})
    # Declared at exactly the cap, it is read: unsigned, it is refused for that instead.
    assert _post(Request("POST", {}, b"", BODY_CAP), inbox).status == 401


def test_an_undeclared_body_over_the_limit_is_refused(inbox: DurableQueue) -> None:
    body = _body(text="x" * BODY_CAP)
    request = Request("POST", _signed(body).headers, body[: BODY_CAP + 1], None)
    assert _post(request, inbox).status == 413


def test_a_body_at_the_limit_is_accepted(inbox: DurableQueue) -> None:
    body = _body(text="")
    body = _body(text="x" * (BODY_CAP - len(body)))
    assert len(body) == BODY_CAP
    assert _post(_signed(body), inbox).status == 202


@pytest.mark.parametrize(
    "request_",
    [
        _signed(_body(), secret="not the secret"),
        _signed(_body(), ts=NOW - 301),
        Request("POST", {}, _body(), None),
    ],
    ids=["wrong secret", "stale", "unsigned"],
)
def test_an_unproven_request_is_401_and_stores_nothing(
    request_: Request, inbox: DurableQueue
) -> None:
    answer = _post(request_, inbox)
    assert answer.status == 401
    assert answer.body["error"]
    assert inbox.depth() == 0


@pytest.mark.parametrize("body", [b"not json", b"\xff\xfe\x00", b"[" * 100_000], ids=str)
def test_a_signed_body_that_is_not_json_is_400(body: bytes, inbox: DurableQueue) -> None:
    assert _post(_signed(body), inbox).status == 400


def test_schema_errors_are_422_naming_each_field(inbox: DurableQueue) -> None:
    body = json.dumps({"eventType": 7, "detail": {"node": 1}, "colour": "red"}).encode()
    answer = _post(_signed(body), inbox)
    assert answer.status == 422
    fields = sorted(error.split(":")[0] for error in answer.body["errors"])
    assert fields == ["colour", "detail.node", "eventType", "workItem"]
    assert inbox.depth() == 0


def test_an_unknown_event_type_is_accepted_with_a_warning(
    inbox: DurableQueue, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    answer = _post(_signed(_body(eventType="custom.graph-event")), inbox)
    assert answer.status == 202
    assert "custom.graph-event" in answer.body["warnings"][0]
    assert "custom.graph-event" in caplog.text


def test_only_post_is_answered(inbox: DurableQueue) -> None:
    assert _post(Request("GET", {}, b"", None), inbox).status == 405


def test_every_real_the_loop_message_is_accepted(inbox: DurableQueue) -> None:
    files = sorted(MESSAGES.glob("*.json"))
    assert len(files) >= 20
    for file in files:
        wire = json.loads(file.read_text(encoding="utf-8"))
        wire.pop("origin", None)
        answer = _post(_signed(json.dumps(wire).encode()), inbox)
        assert answer.status == 202, (file.name, answer.body)
    assert inbox.depth() == len(files)
