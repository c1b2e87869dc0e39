"""Errbot storage on SQLite, crash-safe where Errbot's Shelf is not.

Errbot's default ``Shelf`` sits on ``dbm``; where only ``dbm.dumb`` exists a SIGKILL in the
middle of a write leaves the store unreadable and the bot cannot restart. Here every
``set``/``remove`` is one SQLite transaction in WAL mode with ``synchronous=FULL``: once it
returns, the value survives a SIGKILL (and a power cut); a write cut short is rolled back.

Select it in ``config.py`` with ``STORAGE = "SQLite"`` and ``BOT_EXTRA_STORAGE_PLUGINS_DIR``
pointing at this folder. ``STORAGE_CONFIG = {"path": ...}`` names the file (default
``<BOT_DATA_DIR>/storage.sqlite3``). Values are pickled, as Shelf pickles them. A namespace
opened for the first time imports what a readable Shelf file of the same name holds, so
switching an existing bot over keeps its configuration.
"""

from __future__ import annotations

import logging
import pickle
import shelve
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from errbot.storage.base import StorageBase, StoragePluginBase

# The file is opened as the plugin's queues open theirs (looproom.durable.sqlite). Errbot
# loads storage before any bot plugin, so the plugin's folder is not on sys.path yet.
_CORE = Path(__file__).resolve().parents[3] / "plugins" / "theloop"
if str(_CORE) not in sys.path:
    sys.path.append(str(_CORE))

from looproom.durable.sqlite import connect as connect_durably  # noqa: E402
from looproom.durable.sqlite import transaction  # noqa: E402

log = logging.getLogger("errbot.storage.sqlite")

_PROTOCOL = 2  # Shelf's protocol, so values move between the two unchanged
_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    namespace TEXT NOT NULL,
    key       TEXT NOT NULL,
    value     BLOB NOT NULL,
    PRIMARY KEY (namespace, key)
);
CREATE TABLE IF NOT EXISTS imported (namespace TEXT PRIMARY KEY);
"""


def connect(path: Path) -> sqlite3.Connection:
    """The shared file, its tables made if new (see ``looproom.durable.sqlite``)."""
    db = connect_durably(path)
    db.executescript(_SCHEMA)
    return db


class SQLiteStorage(StorageBase):
    """One namespace (``core`` or a plugin's name) in the shared SQLite file."""

    def __init__(self, path: Path, namespace: str) -> None:
        self._db = connect(path)
        self._namespace = namespace
        self._lock = threading.Lock()

    def get(self, key: str) -> Any:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM kv WHERE namespace=? AND key=?", (self._namespace, key)
            ).fetchone()
        if row is None:
            raise KeyError(key)
        return pickle.loads(row[0])

    def set(self, key: str, value: Any) -> None:
        blob = pickle.dumps(value, protocol=_PROTOCOL)
        with self._lock:
            self._db.execute(
                "INSERT INTO kv (namespace, key, value) VALUES (?, ?, ?) "
                "ON CONFLICT (namespace, key) DO UPDATE SET value=excluded.value",
                (self._namespace, key, blob),
            )

    def remove(self, key: str) -> None:
        with self._lock:
            cursor = self._db.execute(
                "DELETE FROM kv WHERE namespace=? AND key=?", (self._namespace, key)
            )
        if cursor.rowcount == 0:
            raise KeyError(f"{key} doesn't exist.")

    def len(self) -> int:
        with self._lock:
            (count,) = self._db.execute(
                "SELECT COUNT(*) FROM kv WHERE namespace=?", (self._namespace,)
            ).fetchone()
        return int(count)

    def keys(self) -> Iterable[str]:
        with self._lock:
            rows = self._db.execute(
                "SELECT key FROM kv WHERE namespace=? ORDER BY key", (self._namespace,)
            ).fetchall()
        return [row[0] for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def import_once(self, load: Callable[[], Iterable[tuple[str, Any]]]) -> int:
        """Copy what ``load`` yields, once per namespace, in one transaction; the count."""
        with self._lock, transaction(self._db) as db:
            done = db.execute(
                "SELECT 1 FROM imported WHERE namespace=?", (self._namespace,)
            ).fetchone()
            count = 0
            if done is None:
                for key, value in load():
                    db.execute(
                        "INSERT OR IGNORE INTO kv (namespace, key, value) VALUES (?, ?, ?)",
                        (self._namespace, key, pickle.dumps(value, protocol=_PROTOCOL)),
                    )
                    count += 1
                db.execute("INSERT INTO imported VALUES (?)", (self._namespace,))
        return count


class SQLiteStoragePlugin(StoragePluginBase):
    """Errbot's factory for namespaces: ``STORAGE = "SQLite"``."""

    def __init__(self, bot_config: Any) -> None:
        super().__init__(bot_config)
        self._data_dir = Path(bot_config.BOT_DATA_DIR)
        self._path = Path(self._storage_config.get("path") or self._data_dir / "storage.sqlite3")

    def open(self, namespace: str) -> StorageBase:
        store = SQLiteStorage(self._path, namespace)
        shelf = self._data_dir / f"{namespace}.db"
        copied = store.import_once(lambda: _shelf_items(shelf))
        if copied:
            log.info("Imported %d keys of %s from its Shelf file.", copied, namespace)
        return store


def _shelf_items(path: Path) -> list[tuple[str, Any]]:
    """What a Shelf file of that name holds; nothing if there is none or it is unreadable."""
    if not any(path.parent.glob(path.name + "*")):
        return []
    try:
        with shelve.open(str(path), flag="r", protocol=_PROTOCOL) as shelf:
            return list(shelf.items())
    except Exception as exc:  # a Shelf broken by a crash is the reason this plugin exists
        log.warning("Shelf file %s is unreadable (%s); not imported.", path, exc)
        return []
