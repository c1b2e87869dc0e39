"""``POST /theloop/room-records``: the room's records, read only by the holder of the secret.

Each request here is signed as loopside signs it (the webhook's scheme, an independent
copy in ``tests/support/signed.py``) and answered through the bot's own WSGI app, so the
route, its checks and the page are what a reader over HTTP gets.
"""

from __future__ import annotations

import io
import json
import time
from pathlib import Path
from typing import Any

import pytest

from looproom.durable.sqlite import StorageError
from looproom.inbound.webhook import Request
from looproom.instances.fleet import Fleet
from looproom.loop_log.book import PAGE_MAX, Page, Record, RoomRecords, sqlite_records
from looproom.loop_log.channel import ChannelLog
from looproom.server import room_records
from looproom.settings.instances import Claims, Instance
from tests.support.signed import webhook_headers

SECRET = "room-records-secret-0123456789abcdef"
ITEM_A, ITEM_B = "github:acme/api#7", "github:beta/web#3"


class Untouchable(RoomRecords):
    """Records no refused request may read: reading them fails the test."""

    def __init__(self) -> None:
        pass

    def since(self, *args: Any, **kwargs: Any) -> Page:
        raise AssertionError("the records were read before the request was verified")


@pytest.fixture
def records(tmp_path: Path) -> RoomRecords:
    kept = sqlite_records(tmp_path / "queues.sqlite3")
    for n, item in enumerate((ITEM_A, ITEM_B, ITEM_A), start=1):
        kept.add(Record(f"r{n}", "channel.posted", "2026-12-07T10:00:00.000Z"), item)
    return kept


def _request(body: dict[str, Any] | bytes, secret: str = SECRET, **extra: str) -> Request:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {**webhook_headers(secret, raw), **extra}
    return Request("POST", headers, raw, len(raw))


def test_a_signed_read_gets_the_records_past_its_cursor(records: RoomRecords) -> None:
    answer = room_records.answer(_request({"after": 1}), secret=SECRET, records=records)
    assert answer.status == 200
    assert [r["id"] for r in answer.body["records"]] == ["r2", "r3"]
    assert (answer.body["next"], answer.body["missed"], answer.body["more"]) == (3, 0, False)


@pytest.mark.parametrize(
    "request_",
    [
        _request({"after": 0}, secret="not-the-secret"),
        Request("POST", {"Content-Type": "application/json"}, b"{}", 2),
        Request(
            "POST",
            webhook_headers(SECRET, b'{"after": 0}', stamp=int(time.time()) - 301),
            b'{"after": 0}',
            12,
        ),
        Request("POST", webhook_headers(SECRET, b'{"after": 0}'), b'{"after": 9}', 12),
    ],
    ids=["wrong secret", "unsigned", "stale by 301 s", "body changed after signing"],
)
def test_a_read_not_signed_by_the_secret_is_refused_before_anything_is_read(
    request_: Request,
) -> None:
    answer = room_records.answer(request_, secret=SECRET, records=Untouchable())
    assert answer.status == 401


def test_a_store_that_cannot_be_read_now_is_a_503_to_retry() -> None:
    class Down(Untouchable):
        def since(self, *args: Any, **kwargs: Any) -> Page:
            raise StorageError("queues.sqlite3", OSError(5, "Input/output error"))

    answer = room_records.answer(_request({"after": 0}), secret=SECRET, records=Down())
    assert (answer.status, answer.headers.get("Retry-After")) == (503, "30")
    assert "queues.sqlite3" not in json.dumps(answer.body)  # the file is the admin's to see


def test_without_a_secret_nobody_reads_them() -> None:
    answer = room_records.answer(_request({"after": 0}), secret="", records=Untouchable())
    assert answer.status == 503


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"after": -1}, "after"),
        ({"after": "3"}, "after"),
        ({"after": True}, "after"),
        ({"after": 0, "limit": 0}, "limit"),
        ({"after": 0, "limit": PAGE_MAX + 1}, "limit"),
        (b"[1, 2]", "JSON object"),
        (b"{nope", "not JSON"),
    ],
)
def test_a_cursor_that_is_not_one_is_refused_naming_what_is_wrong(
    records: RoomRecords, body: Any, named: str
) -> None:
    answer = room_records.answer(_request(body), secret=SECRET, records=records)
    assert answer.status == 400 and named in answer.body["error"]


def test_a_page_of_the_most_a_read_may_ask_is_taken(records: RoomRecords) -> None:
    body = {"after": 0, "limit": PAGE_MAX}
    assert room_records.answer(_request(body), secret=SECRET, records=records).status == 200


def test_an_instance_reads_only_the_records_of_its_own_work_items(records: RoomRecords) -> None:
    def instance(name: str, repo: str) -> Instance:
        return Instance(name, name, (f"{name}-secret-0123456789",), "", claims=Claims((repo,)))

    fleet = Fleet([instance("team-a", "acme/*"), instance("team-b", "beta/*")], {}, inbox=None)
    signed = _request({"after": 0}, secret="team-b-secret-0123456789")
    answer = room_records.answer(signed, secret="", records=records, fleet=fleet)
    assert [r["id"] for r in answer.body["records"]] == ["r2"]
    assert answer.body["next"] == 3  # past the others' records too
    refused = _request({"after": 0}, secret=SECRET)
    assert room_records.answer(refused, secret="", records=Untouchable(), fleet=fleet).status == 401


def test_the_rooms_own_records_reach_every_instance_and_a_command_only_the_one_it_named(
    tmp_path: Path,
) -> None:
    kept = sqlite_records(tmp_path / "queues.sqlite3")
    log = ChannelLog(kept)
    log.caught_up("run-1", 0, 0)  # the room's own: every instance
    log.command_received(
        "restart:t1@team-a", "U0ALICE01", "instance", "restart", {"instance": "team-a"}
    )
    log.dropped("restart:t2", "unauthorized", "U0MALLORY", "", "", "")  # refused before naming one
    log.posted("e1", ITEM_A, "decision-pending", "C1", "1.1")  # team-a's work item
    fleet = Fleet([_instance("team-a", "acme/*"), _instance("team-b", "beta/*")], {}, inbox=None)

    def seen(name: str) -> list[str]:
        signed = _request({"after": 0}, secret=f"{name}-secret-0123456789")
        answer = room_records.answer(signed, secret="", records=kept, fleet=fleet)
        return [r["event"] for r in answer.body["records"]]

    assert seen("team-b") == ["channel.caught_up", "channel.dropped"]
    assert seen("team-a") == [
        "channel.caught_up",
        "channel.command_received",
        "channel.dropped",
        "channel.posted",
    ]


def _instance(name: str, repo: str) -> Instance:
    return Instance(name, name, (f"{name}-secret-0123456789",), "", claims=Claims((repo,)))


def test_the_route_answers_over_the_bots_own_app(records: RoomRecords) -> None:
    from looproom.server.app import ROOM_RECORDS, App

    class Service:
        def room_records(self, request: Request) -> Any:
            return room_records.answer(request, secret=SECRET, records=records)

    body = json.dumps({"after": 2}).encode()
    environ = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": ROOM_RECORDS,
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        **{
            "HTTP_" + k.upper().replace("-", "_"): v
            for k, v in webhook_headers(SECRET, body).items()
        },
    }
    seen: list[str] = []
    reply = App(Service())(environ, lambda status, _headers: seen.append(status))  # type: ignore[arg-type]
    assert seen == ["200 OK"]
    assert [r["id"] for r in json.loads(b"".join(reply))["records"]] == ["r3"]
