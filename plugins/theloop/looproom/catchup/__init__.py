"""Nothing typed is lost: per-thread cursors, the catch-up after a reconnect, the periodic
reconcile, and which rooms hear every message."""
