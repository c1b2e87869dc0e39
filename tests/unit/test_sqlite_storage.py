"""Errbot storage on SQLite: what Errbot stores survives a SIGKILL (its Shelf may not)."""

from __future__ import annotations

import signal
from pathlib import Path
from types import SimpleNamespace

import pytest
from errbot.storage import StoreMixin
from errbot.storage.shelf import ShelfStoragePlugin

from tests.support.crash import sigkill_writer
from tests.support.errbot_storage import SQLITE_STORAGE_DIR, open_sqlite_storage


def test_errbot_finds_it_by_name_and_it_behaves_as_a_mapping(tmp_path: Path) -> None:
    store = open_sqlite_storage(tmp_path, "core")
    store["configs"] = {"Webserver": {"PORT": 3141}}
    with store.mutable("configs", {}) as configs:
        configs["Webserver"]["HOST"] = "127.0.0.1"
    store["other"] = [1, 2]
    del store["other"]
    assert store["configs"] == {"Webserver": {"PORT": 3141, "HOST": "127.0.0.1"}}
    assert (list(store.keys()), len(store), "other" in store) == (["configs"], 1, False)
    with pytest.raises(KeyError):
        store["missing"]
    with pytest.raises(KeyError):
        del store["missing"]
    store.close_storage()
    assert open_sqlite_storage(tmp_path, "core")["configs"]["Webserver"]["PORT"] == 3141


def test_namespaces_are_separate(tmp_path: Path) -> None:
    core, plugin = open_sqlite_storage(tmp_path, "core"), open_sqlite_storage(tmp_path, "TheLoop")
    core["k"] = "core's"
    plugin["k"] = "plugin's"
    assert (core["k"], plugin["k"], len(core), len(plugin)) == ("core's", "plugin's", 1, 1)


def test_an_existing_shelf_is_imported_once_when_switching(tmp_path: Path) -> None:
    shelf = StoreMixin()
    shelf.open_storage(ShelfStoragePlugin(SimpleNamespace(BOT_DATA_DIR=str(tmp_path))), "core")
    shelf["configs"] = {"Webserver": {"PORT": 4000}}
    shelf["repos"] = {}
    shelf.close_storage()

    store = open_sqlite_storage(tmp_path, "core")
    assert store["configs"] == {"Webserver": {"PORT": 4000}}
    del store["repos"]
    store.close_storage()
    # Reopening does not import again: what was deleted since stays deleted.
    assert "repos" not in open_sqlite_storage(tmp_path, "core")


def test_an_unreadable_shelf_is_skipped_not_fatal(tmp_path: Path) -> None:
    for suffix in (".dat", ".dir"):
        (tmp_path / f"core.db{suffix}").write_bytes(b"\x00garbage")
    store = open_sqlite_storage(tmp_path, "core")
    store["k"] = 1
    assert store["k"] == 1


_WRITER = """
import sys
from types import SimpleNamespace
from errbot.bootstrap import get_storage_plugin
from errbot.storage import StoreMixin
config = SimpleNamespace(STORAGE="SQLite", BOT_EXTRA_STORAGE_PLUGINS_DIR=sys.argv[1],
                         BOT_DATA_DIR=sys.argv[2])
store = StoreMixin()
store.open_storage(get_storage_plugin(config), "TheLoop")
i = 0
while True:
    store[f"key-{i % 50}"] = {"i": i, "blob": "x" * (5000 + i % 7)}  # overwrites, resized
    store[f"new-{i}"] = i
    print(i, flush=True)  # only after both writes returned
    i += 1
"""


def test_a_sigkill_in_a_write_loop_leaves_a_store_that_opens_with_every_committed_value(
    tmp_path: Path,
) -> None:
    # Killed once writes 0…400 have returned (and perhaps more are under way).
    printed, returncode = sigkill_writer(_WRITER, str(SQLITE_STORAGE_DIR), str(tmp_path), after=401)
    assert returncode == -signal.SIGKILL
    committed = printed[-1] if printed else -1
    store = open_sqlite_storage(tmp_path, "TheLoop")
    assert all(store[f"new-{i}"] == i for i in range(committed + 1))
    for slot in range(50):
        # Each slot holds its last committed write, or one the kill let through after it.
        last = max(i for i in range(committed + 1) if i % 50 == slot)
        assert store[f"key-{slot}"]["i"] in (last, last + 50)
