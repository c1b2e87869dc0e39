"""How a book of the plugin's state guards its read-modify-writes, on either store.

The room's books (bindings, memory, told, cursors, claims) read a mapping from the store,
change it and write it back. On the embedded store (Errbot's storage, one process) a lock
of the book's own keeps two threads from interleaving. A store shared by replicas (the
PostgreSQL state) offers ``atomic``: one database transaction under a lock every replica
takes, so the read-modify-write is one transaction wherever it runs.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from typing import Any


def lock_for(store: Any) -> AbstractContextManager[Any]:
    """The store's own ``atomic`` when it has one, else a new re-entrant lock."""
    shared = getattr(store, "atomic", None)
    return shared if isinstance(shared, AbstractContextManager) else threading.RLock()
