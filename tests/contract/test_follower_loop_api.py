"""The stream follower against the-loop's real control plane.

the-loop's own FastAPI app (``the_loop.api.app.create_app``) is served by uvicorn on
loopback over a state root in a temp dir; the test appends to its event log with
the-loop's own ``EventLog`` writer, exactly as ``the-loop ask`` does
(``tests.fakes.loop_stream``). Between the follower and the app sits a TCP proxy the test
can cut, which is how a dropped connection looks from the bot: the follower must resume
from its stored id, losing nothing and posting nothing twice.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from looproom.durable.queue import DurableQueue
from looproom.events import ASK, Event
from looproom.inbound.stream import CURSOR_KEY, StreamFollower
from tests.fakes.loop_stream import WAIT, WORK_ITEM, LoopAPI, Proxy
from tests.support.wait import wait_for


@pytest.fixture
def loop_api(tmp_path: Path) -> Iterator[tuple[LoopAPI, int]]:
    api = LoopAPI(tmp_path)
    port = api.start()
    yield api, port
    api.stop()


@pytest.fixture
def proxy(loop_api: tuple[LoopAPI, int]) -> Iterator[Proxy]:
    proxy = Proxy(loop_api[1])
    yield proxy
    proxy.close()


@pytest.fixture
def inbox(tmp_path: Path) -> Iterator[DurableQueue]:
    queue = DurableQueue(tmp_path / "bot" / "queues.sqlite", "inbox")
    yield queue
    queue.close()


class Follow:
    """A follower feeding ``inbox``; stopped at the end of the test whatever happens."""

    def __init__(self, inbox: DurableQueue) -> None:
        self.inbox = inbox
        self.followers: list[StreamFollower] = []

    def __call__(self, port: int, cursor: dict[str, str]) -> StreamFollower:
        follower = StreamFollower(
            f"http://127.0.0.1:{port}",
            accept=lambda event: self.inbox.put(event.delivery_key, event.to_json()),
            cursor=cursor,
            min_backoff=0.05,
            max_backoff=0.2,
        )
        self.followers.append(follower)
        follower.start()
        wait_for(lambda: follower.status().state == "connected", WAIT, "the follower to connect")
        return follower

    def questions(self) -> list[str]:
        return [Event.from_wire(json.loads(item.payload)).text for item in self.inbox.list()]


@pytest.fixture
def follow(inbox: DurableQueue) -> Iterator[Follow]:
    follow = Follow(inbox)
    yield follow
    for follower in follow.followers:
        follower.stop()


def test_an_ask_in_the_loop_log_reaches_the_inbox_as_the_ask_event(
    loop_api: tuple[LoopAPI, int], follow: Follow, inbox: DurableQueue
) -> None:
    api, port = loop_api
    cursor: dict[str, str] = {}
    follower = follow(port, cursor)
    api.noise()
    api.ask("Which option, 1 or 2?")
    wait_for(lambda: inbox.depth() == 1, WAIT, "the ask in the inbox")
    [item] = inbox.list()
    event = Event.from_wire(json.loads(item.payload))
    assert (event.event_type, event.work_item, event.text) == (
        ASK,
        WORK_ITEM,
        "Which option, 1 or 2?",
    )
    assert event.url.startswith("https://github.com/acme/api/issues/7#issuecomment-")
    assert dict(event.detail) == {"actor": "dev"}
    wait_for(lambda: cursor.get(CURSOR_KEY), WAIT, "the stream id to be stored")
    assert follower.status().accepted == 1
    assert "connected" in follower.status().describe()


def test_a_dropped_connection_resumes_from_the_stored_id_without_loss_or_duplicate(
    loop_api: tuple[LoopAPI, int], proxy: Proxy, follow: Follow, inbox: DurableQueue
) -> None:
    api, _ = loop_api
    follower = follow(proxy.port, {})
    api.ask("first?")
    wait_for(lambda: inbox.depth() == 1, WAIT, "the first ask")

    proxy.accepting.clear()
    proxy.cut()
    wait_for(lambda: follower.status().state != "connected", WAIT, "the drop to be noticed")
    api.ask("second, while the bot was cut off?")
    api.noise()
    api.ask("third?")
    proxy.accepting.set()

    wait_for(lambda: inbox.depth() == 3, WAIT, "the asks written during the outage")
    assert follow.questions() == ["first?", "second, while the bot was cut off?", "third?"]
    status = follower.status()
    assert (status.accepted, status.duplicates, status.desyncs) == (3, 0, 0)
    assert status.connects >= 2


def test_records_replayed_after_a_crash_are_duplicates_and_post_once(
    loop_api: tuple[LoopAPI, int], follow: Follow, inbox: DurableQueue
) -> None:
    api, port = loop_api
    first = follow(port, {})
    api.noise()
    wait_for(lambda: first.status().last_id, WAIT, "the first stream id")
    before = first.status().last_id
    api.ask("one?")
    api.ask("two?")
    wait_for(lambda: inbox.depth() == 2, WAIT, "both asks")
    first.stop()

    # As if the bot died after storing the asks but before storing the stream id.
    again = follow(port, {CURSOR_KEY: before})
    api.ask("three?")
    wait_for(lambda: inbox.depth() == 3, WAIT, "the next ask after the replay")
    assert follow.questions() == ["one?", "two?", "three?"]
    assert (again.status().accepted, again.status().duplicates) == (1, 2)


def test_a_stored_id_the_loop_no_longer_has_is_reported_and_following_goes_on(
    loop_api: tuple[LoopAPI, int], follow: Follow, inbox: DurableQueue
) -> None:
    api, port = loop_api
    api.noise()
    # An offset past the end of the log: the-loop's log was rotated since we stored it.
    follower = follow(port, {CURSOR_KEY: "99999999"})
    wait_for(lambda: follower.status().desyncs == 1, WAIT, "the-loop's desync frame")
    api.ask("after the gap?")
    wait_for(lambda: inbox.depth() == 1, WAIT, "the ask after the gap")
    assert "gap" in follower.status().describe()


def test_a_stopped_follower_ends_its_thread_and_says_so(
    loop_api: tuple[LoopAPI, int], follow: Follow
) -> None:
    follower = follow(loop_api[1], {})
    follower.stop()
    assert follower.status().state == "stopped"
    assert not any(t.name == "theloop-stream" and t.is_alive() for t in threading.enumerate())
