"""The stream follower's parts: the SSE parser (HTML standard) and the record mapping."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.clients.the_loop import stream_url
from looproom.events import ASK
from looproom.inbound.loop_records import record_id, to_event
from looproom.inbound.sse import SSEEvent, SSEParser
from looproom.inbound.stream import FollowerStatus


def _parse(*chunks: str) -> list[SSEEvent]:
    parser = SSEParser()
    return [event for chunk in chunks for event in parser.feed(chunk)]


# -- the wire format -----------------------------------------------------------------


def test_the_loop_frames_parse_into_id_type_and_data() -> None:
    frame = 'id: 1234\nevent: log\ndata: {"event":"x"}\n\n'
    assert _parse(frame) == [SSEEvent(type="log", data='{"event":"x"}', id="1234")]


def test_multi_line_data_is_joined_with_newlines_and_the_type_defaults_to_message() -> None:
    assert _parse("data: one\ndata:two\ndata:  three\n\n") == [
        SSEEvent(type="message", data="one\ntwo\n three", id="")
    ]


def test_comments_and_unknown_fields_are_ignored() -> None:
    assert _parse(": keep-alive\n\nfoo: bar\ndata: x\n\n") == [SSEEvent("message", "x", "")]


def test_a_blank_line_without_data_dispatches_nothing_but_keeps_the_id() -> None:
    parser = SSEParser()
    assert parser.feed("id: 7\n\n") == []
    assert parser.last_event_id == "7"
    assert parser.feed("data: after\n\n") == [SSEEvent("message", "after", "7")]


def test_retry_is_taken_only_when_it_is_all_digits() -> None:
    parser = SSEParser()
    parser.feed("retry: 3000\n\n")
    assert parser.retry == 3000
    parser.feed("retry: soon\n\nretry: 12x\n\n")
    assert parser.retry == 3000


def test_an_id_containing_nul_is_ignored() -> None:
    parser = SSEParser()
    parser.feed("id: 5\n\nid: 6\0\ndata: x\n\n")
    assert parser.last_event_id == "5"


def test_a_field_without_a_colon_is_a_field_with_an_empty_value() -> None:
    assert _parse("data\ndata\n\n") == [SSEEvent("message", "\n", "")]


def test_cr_lf_and_crlf_all_end_lines_and_a_leading_bom_is_dropped() -> None:
    expected = [SSEEvent("log", "a", "1"), SSEEvent("log", "b", "2")]
    for newline in ("\n", "\r", "\r\n"):
        text = newline.join(["id: 1", "event: log", "data: a", "", "id: 2", "event: log"])
        text += newline + newline.join(["data: b", "", ""])
        assert _parse("\ufeff" + text) == expected, repr(newline)


def test_an_unfinished_event_at_the_end_is_not_dispatched() -> None:
    assert _parse("data: complete\n\ndata: cut off\n") == [SSEEvent("message", "complete", "")]


_FRAMES = (
    'retry: 3000\n\nid: 10\nevent: log\ndata: {"event":"a"}\n\n'
    ": keep-alive\r\n\r\nid: 22\revent: desync\rdata: {}\r\r"
    "data: é\r\ndata: ü\r\n\r\n"
)


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(st.lists(st.integers(min_value=0, max_value=len(_FRAMES)), max_size=8))
def test_any_chunking_of_the_stream_yields_the_same_events(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(_FRAMES)]
    chunks = [_FRAMES[a:b] for a, b in itertools.pairwise(bounds)]
    assert (
        _parse(*chunks)
        == _parse(_FRAMES)
        == [
            SSEEvent("log", '{"event":"a"}', "10"),
            SSEEvent("desync", "{}", "22"),
            SSEEvent("message", "é\nü", "22"),
        ]
    )


# -- the-loop's records -> our events ------------------------------------------------------

_ASK_RECORD = {
    "ts": "2026-11-30T10:00:00.123Z",
    "source": "ask",
    "event": "session.awaiting_input",
    "level": "info",
    "pid": 4242,
    "work_item": "github:acme/api#7",
    "question": "Which option?\n\n1. this\n2. that",
    "actor": "dev",
    "comment_url": "https://github.com/acme/api/issues/7#issuecomment-1",
    "comment_posted": True,
    "channels_posted": 0,
}


def test_an_ask_record_becomes_the_ask_event_with_its_question_and_link() -> None:
    event = to_event(_ASK_RECORD)
    assert event is not None
    assert (event.event_type, event.work_item, event.text, event.url) == (
        ASK,
        "github:acme/api#7",
        "Which option?\n\n1. this\n2. that",
        "https://github.com/acme/api/issues/7#issuecomment-1",
    )
    assert dict(event.detail) == {"actor": "dev"}
    assert event.ts == "2026-11-30T10:00:00.123Z"


def test_the_same_record_read_twice_is_the_same_inbox_key_and_another_is_not() -> None:
    again = json.loads(json.dumps(_ASK_RECORD))
    assert to_event(again).delivery_key == to_event(_ASK_RECORD).delivery_key  # type: ignore[union-attr]
    later = {**_ASK_RECORD, "ts": "2026-11-30T10:05:00.000Z"}
    assert record_id(later) != record_id(_ASK_RECORD)


def test_a_closure_record_becomes_work_item_closed() -> None:
    record = {
        "event": "work_item.ended",
        "work_item": "github:acme/api#7",
        "state": "closed",
        "kind": "issue",
        "reason": "issue-closed",
        "outcome": "completed",
        "source": "webhook",
        "actor": "octocat",
    }
    event = to_event(record)
    assert event is not None and event.event_type == "work-item.closed"
    assert event.text == "the-loop: github:acme/api#7 is closed — its issue was closed by octocat."
    assert dict(event.detail)["outcome"] == "completed"


def test_an_agent_comment_record_becomes_a_link_to_the_comment_only_when_it_was_posted() -> None:
    record = {
        "event": "work_item.commented",
        "work_item": "github:acme/api#7",
        "comment_url": "https://github.com/acme/api/issues/7#issuecomment-9",
        "comment_posted": True,
    }
    event = to_event(record)
    assert event is not None and event.event_type == "comment.agent"
    assert event.url == record["comment_url"]
    assert to_event({**record, "comment_posted": False}) is None


def test_records_the_room_does_not_show_and_broken_records_map_to_nothing() -> None:
    assert to_event({"event": "poll.cycle", "work_item": "github:acme/api#7"}) is None
    assert to_event({"event": "session.awaiting_input", "question": "no work item"}) is None
    assert to_event(["not", "a", "record"]) is None


def test_a_bare_control_plane_url_gets_the_stream_path() -> None:
    assert stream_url("http://127.0.0.1:8765") == "http://127.0.0.1:8765/api/v1/stream"
    assert stream_url("http://h/api/v1/stream?workItem=x") == "http://h/api/v1/stream?workItem=x"


def test_the_status_line_shows_the_peers_id_and_error_inert() -> None:
    status = FollowerStatus(
        url="http://loop.example/api/v1/stream",
        last_id="<!channel>",
        last_error="HTTP 502: <@U0EVIL> `break` <https://evil.example|here>",
    )
    line = status.describe()
    assert not any(c in line.removeprefix("loop stream ") for c in "<>`")
    assert "HTTP 502" in line and "!channel" in line
