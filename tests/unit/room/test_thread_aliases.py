"""One thread per work item per room, whatever spelling of the work item an event uses,
on either store: GitHub's owner and repository in any case, its host written or not, its
page's address; a Jira site in any case. A binding kept under another spelling before
keys were canonical is still found after the upgrade, not opened a second time."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest

from looproom.postgres.database import Database
from looproom.postgres.state import PostgresState
from looproom.room.routing import BindingBook, ThreadBinding
from tests.support.errbot_storage import open_sqlite_storage

ALIASES = [
    "github:ACME/api#7",
    "github:acme/API#7",
    "github:github.com/acme/api#7",
    "https://github.com/acme/api/issues/7",
    "<https://github.com/Acme/Api/pull/7|acme/api#7>",
]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MutableMapping[str, Any]]:
    if request.param == "sqlite":
        kept = open_sqlite_storage(tmp_path, "TheLoop")
        yield kept
        kept.close_storage()
    else:
        database = Database(request.getfixturevalue("database_url"))
        yield PostgresState(database)
        database.close()


@pytest.mark.parametrize("alias", ALIASES)
def test_an_event_spelling_the_work_item_another_way_finds_its_thread(
    store: MutableMapping[str, Any], alias: str
) -> None:
    book = BindingBook(store)
    book.remember(ThreadBinding("github:acme/api#7", "C1", "100.1"))
    found = book.thread(alias, "C1")
    assert found is not None and found.ts == "100.1"
    book.remember(ThreadBinding(alias, "C1", "100.1", state="🔧 Working"))
    assert book.thread_count() == 1  # the same thread, not a second one


def test_a_jira_site_in_capitals_is_the_same_ticket(store: MutableMapping[str, Any]) -> None:
    book = BindingBook(store)
    book.remember(ThreadBinding("jira:acme.atlassian.net/OPS-12", "C1", "100.1"))
    found = book.thread("jira:ACME.Atlassian.net/OPS-12", "C1")
    assert found is not None and found.ts == "100.1"
    assert book.thread("jira:acme.atlassian.net/OPS-13", "C1") is None


def test_other_work_items_keep_threads_of_their_own(store: MutableMapping[str, Any]) -> None:
    book = BindingBook(store)
    book.remember(ThreadBinding("github:acme/api#7", "C1", "100.1"))
    assert book.thread("github:acme/api#8", "C1") is None
    assert book.thread("github:acme/api2#7", "C1") is None
    assert book.thread("github:ghe.example.com/acme/api#7", "C1") is None
    assert book.thread("github:acme/api#7", "C2") is None


def test_a_binding_kept_under_another_spelling_before_the_upgrade_is_found(
    store: MutableMapping[str, Any],
) -> None:
    old = {"work_item": "github:ACME/Api#7", "channel": "C1", "ts": "100.1", "seq": 1}
    store["rooms.threads"] = {"C1|github:ACME/Api#7": old}  # as a bot before kept it
    store["rooms.bindings"] = {"github:ACME/Api#7": {"room": "C0WAR", "at": 1.0}}
    book = BindingBook(store)
    found = book.thread("github:acme/api#7", "C1")
    assert found is not None and found.ts == "100.1"
    book.remember(ThreadBinding("github:acme/api#7", "C1", "100.1", state="🎉 Done"))
    assert book.thread_count() == 1
    assert book.room_for("https://github.com/acme/api/issues/7", "#the-loop", ()) == "C0WAR"
    assert book.unbind_room("github:acme/api#7") is True


def test_two_spellings_kept_before_the_upgrade_become_the_one_used_last(
    store: MutableMapping[str, Any],
) -> None:
    older = {"work_item": "github:ACME/api#7", "channel": "C1", "ts": "100.1", "seq": 1}
    newer = {"work_item": "github:acme/api#7", "channel": "C1", "ts": "200.1", "seq": 2}
    store["rooms.threads"] = {"C1|github:ACME/api#7": older, "C1|github:acme/api#7": newer}
    book = BindingBook(store)
    assert book.thread_count() == 1
    found = book.thread("github:ACME/api#7", "C1")
    assert found is not None and found.ts == "200.1"
