"""Each replica's heartbeat: a row saying it is alive, and the leases of what it holds.

Every :data:`beat <Heartbeat.interval>` (a third of the lease) a replica writes its row in
``theloop_replicas`` and extends the lease of each item it holds in flight. A replica that
stops — SIGKILL, a lost machine, a database it cannot reach — stops both: its row ages
(``!theloop status`` and ``/theloop/health`` list only the replicas seen recently) and, a
lease later, its claims are free for the others to take over.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from looproom.durable.sqlite import StorageError
from looproom.postgres.database import Database
from looproom.postgres.wakeups import notify

log = logging.getLogger(__name__)

#: Rows of replicas silent this long are deleted (they are long gone).
FORGET_AFTER = 24 * 3600.0


@dataclass(frozen=True)
class Seen:
    """A replica as its last heartbeat left it."""

    name: str
    seen: float
    me: bool


class Heartbeat:
    """This replica's row and leases, kept fresh by a daemon thread."""

    def __init__(
        self,
        database: Database,
        name: str,
        lease: float,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name, self.lease = name, lease
        #: The claims' owner: unique per process, so a restarted replica of the same name
        #: never renews the claims its previous life left behind.
        self.id = f"{name}/{uuid.uuid4().hex[:12]}"
        self.interval = lease / 3
        self._db, self._clock = database, clock
        self._started = clock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="theloop-heartbeat", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop beating and hand back what this replica still holds (a rolling restart
        then costs the others no lease): each item pending again, flagged, so whoever takes
        it looks for what may have landed before doing it again."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        try:
            with self._db.transaction() as db:
                queues = db.execute(
                    "UPDATE theloop_items SET state = 'pending', maybe_delivered = TRUE,"
                    " owner = '' WHERE owner = %s AND state = 'inflight' RETURNING queue",
                    (self.id,),
                ).fetchall()
                for queue in {row[0] for row in queues}:
                    notify(db, queue)
        except StorageError as exc:  # then they lapse a lease later, as after a crash
            log.warning("heartbeat: could not hand back this replica's claims: %s", exc)

    def beat(self) -> None:
        """Write this replica's row and extend the leases of its items in flight."""
        now = self._clock()
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO theloop_replicas (id, name, started, seen) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET seen = excluded.seen",
                (self.id, self.name, self._started, now),
            )
            db.execute(
                "UPDATE theloop_items SET lease_until = %s WHERE owner = %s AND state = 'inflight'",
                (now + self.lease, self.id),
            )
            db.execute("DELETE FROM theloop_replicas WHERE seen < %s", (now - FORGET_AFTER,))

    def seen(self) -> list[Seen]:
        """The replicas whose heartbeat is at most a lease old, this one included."""
        with self._db.connection() as db:
            rows = db.execute(
                "SELECT id, name, seen FROM theloop_replicas WHERE seen >= %s ORDER BY name, id",
                (self._clock() - self.lease,),
            ).fetchall()
        return [Seen(str(name), float(seen), str(id_) == self.id) for id_, name, seen in rows]

    def _run(self) -> None:
        failing = False
        while True:  # the first beat at once, then one every interval
            try:
                self.beat()
            except StorageError as exc:
                if not failing:  # said once per outage, not every beat
                    log.error("heartbeat: %s; its claims lapse a lease after the last beat", exc)
                failing = True
            else:
                if failing:
                    log.info("heartbeat: the database answers again")
                failing = False
            if self._stop.wait(self.interval):
                return
