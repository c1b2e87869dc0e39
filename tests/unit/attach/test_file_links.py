"""The links the session downloads attached files from: signed, expiring, one work item's.

A link is honoured only as it was made — the same file, the same work item, before its
time — and by any replica holding the same bot token: one that never fetched the file
fetches it from Slack again, within the same allow-list and cap.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looproom.attach import fetch as web
from looproom.attach.links import FileLinks, Linked, Refused, key_from
from looproom.attach.serving import Served, served
from looproom.attach.slack_files import FileStore, kept, section
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

ITEM, OTHER = "github:acme/api#7", "github:acme/api#8"
PNG = b"\x89PNG\r\n\x1a\n" + b"pixels" * 100
BASE = "https://bot.example.com"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def _links(clock: Clock, token: str = BOT_TOKEN, lifetime: float = 3600.0) -> FileLinks:
    return FileLinks(BASE, lambda: key_from(token), lifetime=lifetime, clock=clock)


def _store(slack: FakeSlack, folder: Path, links: FileLinks) -> FileStore:
    allowed = [a for a in (*web.SLACK_ORIGINS, web.origin_of(slack.url)) if a]

    def info(file_id: str) -> dict | None:
        return slack.file_objects.get(file_id, [None])[-1]

    return FileStore(folder, lambda: BOT_TOKEN, allowed, info=info, links=links)


def _query(link: str) -> str:
    return urllib.parse.urlsplit(link).query


def test_a_link_is_honoured_until_its_second_and_refused_one_second_past() -> None:
    clock = Clock()
    links = _links(clock)
    link, until = links.link("F1", ITEM, "shot.png")
    assert link.startswith(f"{BASE}/theloop/files?") and until == clock.now + 3600
    clock.now = until
    assert links.check(_query(link)) == Linked("F1", ITEM)
    clock.now = until + 1
    assert links.check(_query(link)) == Refused(410, "the link has expired")


@given(field=st.sampled_from(["f", "w", "e"]), value=st.text(min_size=1, max_size=40))
def test_a_link_changed_in_any_signed_field_is_refused(field: str, value: str) -> None:
    links = _links(Clock())
    link, _until = links.link("F1", ITEM, "shot.png")
    fields = dict(urllib.parse.parse_qsl(_query(link)))
    if fields[field] == value:
        return
    fields[field] = value
    verdict = links.check(urllib.parse.urlencode(fields))
    assert isinstance(verdict, Refused) and verdict.status in (400, 403)


def test_a_link_made_with_another_token_or_none_is_refused() -> None:
    clock = Clock()
    link, _until = _links(clock, token="xoxb-another-workspace").link("F1", ITEM, "a.png")
    assert _links(clock).check(_query(link)).status == 403  # type: ignore[union-attr]
    assert _links(clock, token="").check(_query(link)).status == 503  # type: ignore[union-attr]


def test_a_link_naming_a_field_twice_or_too_long_is_refused_before_its_signature() -> None:
    links = _links(Clock())
    query = _query(links.link("F1", ITEM, "a.png")[0])
    assert links.check(query + "&w=" + urllib.parse.quote(OTHER)).status == 400  # type: ignore[union-attr]
    assert links.check(query + "&n=" + "x" * 2048).status == 400  # type: ignore[union-attr]


def test_the_session_is_given_links_and_any_replica_serves_them(
    slack: FakeSlack, tmp_path: Path
) -> None:
    clock = Clock()
    attached = kept([slack.add_file("screen shot.png", PNG, "image/png")])
    (fetched,) = _store(slack, tmp_path / "one", _links(clock)).fetch_all(attached, ITEM)
    told = section([fetched])
    assert fetched.download in told and "saved at" not in told and str(tmp_path) not in told

    here = served(_store(slack, tmp_path / "one", _links(clock)), _query(fetched.download))
    assert here == Served("screen_shot.png", "image/png", PNG)
    downloads = len(slack.downloads)
    # A replica with an empty folder fetches it from Slack again, with the bot token.
    there = served(_store(slack, tmp_path / "two", _links(clock)), _query(fetched.download))
    assert there == here and len(slack.downloads) == downloads + 1


def test_without_a_public_address_no_link_is_made_or_served(
    slack: FakeSlack, tmp_path: Path
) -> None:
    attached = kept([slack.add_file("a.png", PNG, "image/png")])
    allowed = [a for a in (*web.SLACK_ORIGINS, web.origin_of(slack.url)) if a]
    store = FileStore(tmp_path, lambda: BOT_TOKEN, allowed)
    (fetched,) = store.fetch_all(attached, ITEM)
    assert not fetched.download and f"saved at {fetched.path}" in section([fetched])
    assert served(store, "f=F1&w=x&e=1&s=y") == Refused(404, "this bot hands out no file links")
