"""Files attached to a reply: fetched from (a loopback) Slack with the bot token, safely.

The bot token rides on every download, so it goes only to an allowed origin — checked
before the first request and again before each redirect hop — and a file over the cap is
refused, not cut. The session is told local paths under a frame calling it untrusted; the
ticket is told names and Slack's permalinks, never a private URL or a path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.attach import fetch as web
from looproom.attach.slack_files import FileStore, kept, record, safe_name, section, vtt_text
from looproom.loop_log.book import sqlite_records
from looproom.loop_log.channel import ChannelLog
from looproom.relay import forms
from looproom.relay.sinks import LoopSink
from looproom.slack.transport import SlackTransport
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

PNG = b"\x89PNG\r\n\x1a\n" + b"pixels" * 100


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _store(slack: FakeSlack, folder: Path, **options: object) -> FileStore:
    allowed = [*web.SLACK_ORIGINS, web.origin_of(slack.url)]
    return FileStore(folder, lambda: BOT_TOKEN, [a for a in allowed if a], **options)  # type: ignore[arg-type]


def test_a_screenshot_is_fetched_with_the_bot_token_and_handed_to_the_session(
    slack: FakeSlack, tmp_path: Path
) -> None:
    attached = kept([slack.add_file("screen shot.png", PNG, "image/png")])
    (fetched,) = _store(slack, tmp_path / "files").fetch_all(attached)
    assert fetched.kind == "image" and not fetched.error
    saved = Path(fetched.path)
    assert saved.parent == tmp_path / "files" and saved.read_bytes() == PNG
    assert saved.name.endswith("-screen_shot.png")
    assert [token for _path, token in slack.downloads] == [BOT_TOKEN]

    told = section([fetched])
    assert "UNTRUSTED" in told and f"saved at {saved}" in told
    assert attached[0]["permalink"] in told
    ticket = record(attached)
    assert (
        ticket.startswith("📎 screen_shot.png (image/png, ") and attached[0]["permalink"] in ticket
    )
    assert "files-pri" not in ticket and str(tmp_path) not in ticket


def test_a_file_fetched_before_is_reused_so_a_retry_tells_the_same_path(
    slack: FakeSlack, tmp_path: Path
) -> None:
    attached = kept([slack.add_file("plan.pdf", b"%PDF-1.7 plan", "application/pdf")])
    store = _store(slack, tmp_path)
    first, again = store.fetch_all(attached), store.fetch_all(attached)
    assert first == again and first[0].kind == "pdf"
    assert len(slack.downloads) == 1


def test_a_voice_note_comes_with_slacks_own_transcript(slack: FakeSlack, tmp_path: Path) -> None:
    words = "ship the smaller migration first, then the backfill"
    attached = kept([slack.add_file("voice.m4a", b"audio", "audio/mp4", transcript=words)])
    assert record(attached).splitlines()[1] == f"> Slack's transcript: {words[:20]}"
    (fetched,) = _store(slack, tmp_path).fetch_all(attached)
    assert fetched.kind == "audio" and fetched.transcript == words
    assert f'Slack\'s transcript: "{words}"' in section([fetched])


def test_a_voice_note_still_being_transcribed_is_asked_about_again(
    slack: FakeSlack, tmp_path: Path
) -> None:
    words = "keep the old rows"
    transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
    voice = slack.add_file("voice.m4a", b"audio", "audio/mp4", transcript=words, processing=1)
    attached = kept([voice])
    assert attached[0]["transcribing"] and not record(attached).count("transcript")
    waits: list[float] = []

    def info(file_id: str) -> dict[str, Any] | None:
        return transport.file_info(file_id).data.get("file")

    store = _store(slack, tmp_path, info=info, sleep=waits.append)
    (fetched,) = store.fetch_all(attached)
    assert fetched.transcript == words and len(waits) == 2
    never = kept([slack.add_file("v2.m4a", b"a", "audio/mp4", transcript=words, processing=9)])
    (fetched,) = _store(slack, tmp_path, info=info, sleep=waits.append).fetch_all(never)
    assert fetched.path and fetched.transcript == ""  # named and saved, without a transcript


def test_a_redirect_to_a_host_not_allowed_is_refused_before_the_token_goes_there(
    slack: FakeSlack, tmp_path: Path
) -> None:
    with FakeSlack(host="127.0.0.2") as elsewhere:
        theirs = elsewhere.add_file("x.png", PNG, "image/png")
        found = slack.add_file("screen.png", PNG, "image/png")
        path = found["url_private"].split(str(slack.port), 1)[1]
        slack.redirects[path] = theirs["url_private"]
        (fetched,) = _store(slack, tmp_path).fetch_all(
            kept([{**found, "url_private_download": ""}])
        )
        assert fetched.error == "off-host" and not fetched.path
        assert elsewhere.downloads == []
    assert "not on the file host" in section([fetched])
    assert list(tmp_path.iterdir()) == []


def test_a_redirect_within_the_allowed_origins_is_followed(
    slack: FakeSlack, tmp_path: Path
) -> None:
    moved = slack.add_file("moved.png", PNG, "image/png")
    found = slack.add_file("screen.png", b"old", "image/png")
    path = found["url_private"].split(str(slack.port), 1)[1]
    slack.redirects[path] = moved["url_private"]
    (fetched,) = _store(slack, tmp_path).fetch_all(kept([{**found, "url_private_download": ""}]))
    assert Path(fetched.path).read_bytes() == PNG


def test_a_file_over_the_cap_is_refused_not_cut(slack: FakeSlack, tmp_path: Path) -> None:
    big = slack.add_file("big.png", PNG, "image/png")
    lying = {**big, "size": 10}  # Slack's declared size is not trusted: the body is counted
    (fetched,) = _store(slack, tmp_path, max_bytes=100).fetch_all(kept([lying]))
    assert fetched.error == "over-cap" and not fetched.path
    assert list(tmp_path.iterdir()) == []
    declared = kept([big])  # declared over the cap: not even asked for
    slack.downloads.clear()
    assert _store(slack, tmp_path, max_bytes=100).fetch_all(declared)[0].error == "over-cap"
    assert slack.downloads == []


def test_an_origin_not_allowed_and_a_missing_token_are_never_asked(
    slack: FakeSlack, tmp_path: Path
) -> None:
    attached = kept([slack.add_file("a.png", PNG, "image/png")])
    only_slack = FileStore(tmp_path, lambda: BOT_TOKEN, web.SLACK_ORIGINS)
    assert only_slack.fetch_all(attached)[0].error == "off-host"
    no_token = FileStore(tmp_path, lambda: "", [web.origin_of(slack.url)])  # type: ignore[list-item]
    assert no_token.fetch_all(attached)[0].error == "no-token"
    assert slack.downloads == []


def test_files_older_than_the_keep_are_removed(slack: FakeSlack, tmp_path: Path) -> None:
    now = [1_000_000.0]
    store = _store(slack, tmp_path, keep=3600.0, clock=lambda: now[0])
    old = tmp_path / "F0-old.png"
    old.write_bytes(b"x")
    os.utime(old, (now[0] - 7200, now[0] - 7200))
    store.fetch_all(kept([slack.add_file("new.png", PNG, "image/png")]))
    assert not old.exists() and len(list(tmp_path.iterdir())) == 1


def test_the_allow_list_matches_scheme_host_and_port_exactly() -> None:
    slack_files = web.SLACK_ORIGINS
    assert any(o.admits("https://files.slack.com/files-pri/T-F/a.png") for o in slack_files)
    assert any(o.admits("https://acme.enterprise.slack.com/x") for o in slack_files)
    for url in (
        "http://files.slack.com/a",  # no token over plain HTTP
        "https://files.slack.com.evil.test/a",
        "https://evilslack.com/a",
        "https://files.slack.com:8443/a",
        "file:///etc/passwd",
    ):
        assert not any(o.admits(url) for o in slack_files), url


@settings(deadline=None)
@given(st.text(max_size=200))
def test_a_saved_name_never_leaves_its_folder(name: str) -> None:
    safe = safe_name(name)
    assert safe and "/" not in safe and "\\" not in safe and not safe.startswith(".")
    assert len(safe) <= 80
    assert (Path("/data/files") / safe).parent == Path("/data/files")


def test_captions_are_read_as_their_words_once_each() -> None:
    vtt = (
        "WEBVTT\n\n1\n00:00.000 --> 00:01.000\n<v Ana>Hello</v>\n\n"
        "2\n00:01.000 --> 00:02.000\nHello\n\n3\n00:02.000 --> 00:03.000\nthere\n"
    )
    assert vtt_text(vtt) == "Hello there"


# -- the caps at their edges (docs/security.md: 25 MiB at most, 10 files per message) -------

MIB_25 = 25 * 1024 * 1024


def test_a_file_of_exactly_25_mib_is_fetched_and_one_byte_more_is_refused(
    slack: FakeSlack, tmp_path: Path
) -> None:
    store = FileStore(tmp_path, lambda: BOT_TOKEN, [web.origin_of(slack.url)])  # type: ignore[list-item]
    whole = slack.add_file("whole.bin", b"w" * MIB_25, "application/octet-stream")
    over = slack.add_file("over.bin", b"o" * (MIB_25 + 1), "application/octet-stream")
    # Slack's declared size is not trusted: each body is counted as it comes.
    fetched = store.fetch_all(kept([{**whole, "size": 10}, {**over, "size": 10}]))
    assert [f.error for f in fetched] == ["", "over-cap"]
    assert Path(fetched[0].path).stat().st_size == MIB_25 and not fetched[1].path
    # Declared truthfully: exactly the cap is asked for; one byte more is not even asked.
    slack.downloads.clear()
    again = FileStore(tmp_path / "again", lambda: BOT_TOKEN, [web.origin_of(slack.url)])  # type: ignore[list-item]
    assert [f.error for f in again.fetch_all(kept([whole, over]))] == ["", "over-cap"]
    assert len(slack.downloads) == 1


def test_ten_files_of_a_message_are_fetched_and_the_eleventh_is_named_only(
    slack: FakeSlack, tmp_path: Path
) -> None:
    attached = kept([slack.add_file(f"shot-{n}.png", PNG, "image/png") for n in range(11)])
    fetched = _store(slack, tmp_path).fetch_all(attached)
    assert [f.error for f in fetched] == [""] * 10 + ["too-many"]
    assert len(slack.downloads) == 10


def test_a_replys_files_are_counted_in_the_loops_log_once_however_often_it_is_sent(
    slack: FakeSlack, tmp_path: Path
) -> None:
    small = slack.add_file("note.txt", b"ok", "text/plain")
    large = slack.add_file("dump.bin", b"x" * 64, "application/octet-stream")
    store = _store(slack, tmp_path / "files", max_bytes=32)
    kept_records = sqlite_records(tmp_path / "queues.sqlite3")
    store.records = ChannelLog(kept_records)
    item = "github:acme/api#7"
    target = {
        "path": forms.REPLY_PATH,
        "json": {"ref": item, "actor": "U0ALICE01", "text": "see attached"},
        "files": kept([small, large]),
    }
    with FakeLoop({item: False}) as loop:
        sink = LoopSink(loop.url, timeout=5, files=store)
        sink.send(target, key="relay:r1")
        sink.send(target, key="relay:r1")  # the relay tried again
    ((record,),) = [kept_records.since(0).records]
    assert record["event"] == "channel.attachments"
    assert record["fields"] == {
        "channel": "slack",
        "work_item": item,
        "actor": "U0ALICE01",
        "count": 2,
        "fetched": 1,  # the one over the cap is named to the session, not fetched
    }
