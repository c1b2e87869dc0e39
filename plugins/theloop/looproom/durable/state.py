"""How a book of the plugin's state guards its read-modify-writes, on either store.

The room's books (bindings, memory, told, cursors, claims) read a mapping from the store,
change it and write it back. On the embedded store (Errbot's storage, one process) a lock
of the book's own keeps two threads from interleaving. A store shared by replicas (the
PostgreSQL state) offers ``atomic``: one database transaction under a lock every replica
takes, so the read-modify-write is one transaction wherever it runs.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any


def lock_for(store: Any) -> AbstractContextManager[Any]:
    """The store's own ``atomic`` when it has one, else a new re-entrant lock."""
    shared = getattr(store, "atomic", None)
    return shared if isinstance(shared, AbstractContextManager) else threading.RLock()


def stored_mapping(store: Any, key: str) -> Mapping[str, Any]:
    """The mapping ``store`` keeps under ``key``; empty when there is none (Errbot's storage
    raises instead of answering a default) or what is there is not a mapping."""
    try:
        found = store[key]
    except KeyError:
        return {}
    return found if isinstance(found, Mapping) else {}
