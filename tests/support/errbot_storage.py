"""Errbot's storage on the bundle's SQLite storage plugin, opened as Errbot opens it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from errbot.bootstrap import get_storage_plugin
from errbot.storage import StoreMixin

#: Where config.py points Errbot for ``STORAGE = "SQLite"``.
SQLITE_STORAGE_DIR = Path(__file__).resolve().parents[2] / ".errbot-parts" / "storage" / "sqlite"


def open_sqlite_storage(data_dir: Path, namespace: str) -> StoreMixin:
    """``namespace`` (``core``, a plugin's name) in ``data_dir``'s SQLite storage."""
    config = SimpleNamespace(
        STORAGE="SQLite",
        BOT_EXTRA_STORAGE_PLUGINS_DIR=str(SQLITE_STORAGE_DIR),
        BOT_DATA_DIR=str(data_dir),
    )
    store = StoreMixin()
    store.open_storage(get_storage_plugin(config), namespace)
    return store
