"""Every instance of one activation: the webhook that tells them apart, who owns which
work item, their streams, the relay's way to their control planes, and how each is doing.

Built once by the assembly when the settings file has ``instances:``; without it there is
no fleet and the single-instance parts run as they always did.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from looproom.attach.slack_files import FileStore
from looproom.clients.the_loop import LoopApi
from looproom.control.plane_choice import Plane, Planes
from looproom.durable.contract import Item
from looproom.durable.state import lock_for, stored_mapping
from looproom.events import Event
from looproom.inbound import webhook as ingress
from looproom.inbound.recent import Recent
from looproom.instances import actors, streams
from looproom.instances.owners import Owners
from looproom.instances.relay import RoutedLoop
from looproom.instances.webhook import Ingress
from looproom.relay.reply_lookup import ReplyBook
from looproom.settings.instances import Instance

log = logging.getLogger(__name__)

#: A control plane's reachability is asked again at most this often (status, metrics).
PROBE_SECONDS = 30.0
PROBE_TIMEOUT = 2.0
#: The relay's items are grouped ``decisions:<work item>`` (``looproom.relay.relay``).
_RELAY_GROUP = "decisions:"
#: The state key: when each instance's last event was stored, by any replica, any start.
LAST_EVENT_KEY = "instances.last-event"
#: An instance's time is written at most this often: one write per event would double
#: the state's writes under a burst, and status reads it to the second at best.
WRITE_EVERY = 5.0


@dataclass(frozen=True)
class Reach:
    """Whether an instance's control plane answered its health route, and when asked."""

    ok: bool
    said: str
    at: float


class Fleet:
    """The instances of one activation and what is known of each."""

    def __init__(
        self,
        instances: Sequence[Instance],
        store: MutableMapping[str, Any],
        inbox: ingress.Inbox,
        *,
        clock: Callable[[], float] = time.time,
        causers: actors.Causers = actors.nobody,
    ) -> None:
        """``causers(work item)``: who caused a work item nobody owns (a GitHub issue's
        author), for routing it by the ``actors`` the instances register."""
        self.instances = tuple(instances)
        self.owners = Owners(self.instances, store)
        self.actors = actors.Registry(self.instances)
        self._causers, self._askers = causers, actors.Askers(store)
        self._inbox, self._clock = inbox, clock
        self._store, self._store_lock = store, lock_for(store)
        self._last_event: dict[str, float] = {}
        self._written: dict[str, float] = {}
        self._reach: dict[str, Reach] = {}
        self._lock = threading.Lock()
        #: The webhook's last answers per instance; ``""``: signed by none of them.
        self.answered = {name: Recent() for name in ("", *(i.name for i in self.instances))}
        self.ingress = Ingress(
            self.instances,
            self.owners,
            inbox,
            seen=self._seen,
            answered=lambda name, status: self.answered[name].note(status),
        )
        self.followers = streams.followers(self.instances, store, self.admit)

    # -- in ------------------------------------------------------------------------------

    def receive(self, request: ingress.Request) -> ingress.Answer:
        """``POST /theloop/events``: signed by one of the instances, about its own work."""
        return self.ingress.handle(request)

    def admit(self, instance: Instance, event: Event) -> bool:
        """An event from ``instance``'s stream: stored when its work item is the
        instance's (False: a duplicate, or another instance's, which is skipped).
        :class:`ClaimsFull` when it would be a new claim past the cap: the follower
        reads the record again later."""
        self.owners.claim(instance, event.work_item)  # raises ClaimsFull before the gate
        refused = self.ingress.gate(instance, event)
        if refused is not None:
            log.warning("stream of %s: skipped, %s", instance.name, refused.body.get("error"))
            return False
        stored = ingress.admit(self._inbox, event)
        self._seen(instance.name)
        return stored

    def start(self) -> None:
        for follower in self.followers.values():
            follower.start()

    def stop(self) -> None:
        for follower in self.followers.values():
            follower.stop()

    # -- out -----------------------------------------------------------------------------

    def control_plane(self, files: FileStore | None, book: ReplyBook | None = None) -> RoutedLoop:
        """The relay's way to the-loop: each call to the owner of its work item. ``book``
        keeps which replies landed, for every instance's look-ups."""
        return RoutedLoop(self.instances, self.owners, files, book=book, unowned=self.route_unowned)

    def route_unowned(self, work_item: str) -> Instance | None:
        """A work item nobody owns, routed by who caused it — who asked for it in Slack,
        else its GitHub author — when an instance registers someone."""
        if not self.actors:
            return None
        causers = self._askers.of(work_item) or self._causers(work_item)
        return actors.route(self.owners, self.actors, work_item, causers)

    def on_opened(self, told: actors.Opened, people: Mapping[str, str]) -> actors.Opened:
        """The kickoff's ``owned``: ``told``, then the new work item routed to the instance
        that registered the member who asked for it, when no instance claims it."""
        return actors.on_opened(told, self.owners, self.actors, people, self._askers)

    def planes(self) -> Planes:
        """``/the-loop status|restart|upgrade|standing``'s way to the-loop: the instance
        the command names, or the owner of the room's work item or repository."""

        def owner_of(ref: str) -> str:
            owner = self.owners.owner(ref)
            return owner.name if owner is not None else ""

        return Planes([Plane(i.name, i.api, i.token) for i in self.instances], owner_of)

    # -- how each is doing ---------------------------------------------------------------

    def last_event(self, name: str) -> float | None:
        """When an event of ``name`` was last stored (or met again): by this process, or
        by any replica or an earlier start, from the state (within :data:`WRITE_EVERY`)."""
        with self._lock:
            mine = self._last_event.get(name)
        kept = self._kept().get(name)
        found = [at for at in (mine, kept) if isinstance(at, int | float)]
        return float(max(found)) if found else None

    def reach(self, instance: Instance, *, fresh: bool = False) -> Reach:
        """The control plane's health, asked again when older than :data:`PROBE_SECONDS`."""
        now = self._clock()
        with self._lock:
            known = self._reach.get(instance.name)
        if known is not None and not fresh and now - known.at < PROBE_SECONDS:
            return known
        answer = LoopApi(instance.api, instance.token, timeout=PROBE_TIMEOUT).health().answer
        said = f"answers {answer.status}" if answer.status else f"no answer ({answer.error})"
        found = Reach(answer.status == 200, "answers" if answer.status == 200 else said, now)
        with self._lock:
            self._reach[instance.name] = found
        return found

    def queued(self, inbox: Iterable[Item], relay: Iterable[Item]) -> dict[str, tuple[int, int]]:
        """Per instance, its events not delivered to Slack yet and its decisions not
        relayed yet (a work item nobody owns counts for nobody)."""
        counts = {instance.name: [0, 0] for instance in self.instances}
        owner_of = self.owners.resolver()  # one read of the claims, not one per item
        for column, items in ((0, inbox), (1, relay)):
            for item in items:
                owner = owner_of(item.group.removeprefix(_RELAY_GROUP))
                if owner is not None:
                    counts[owner.name][column] += 1
        return {name: (pair[0], pair[1]) for name, pair in counts.items()}

    def _seen(self, name: str) -> None:
        now = self._clock()
        with self._lock:
            self._last_event[name] = now
            due = now - self._written.get(name, float("-inf")) >= WRITE_EVERY
            if due:
                self._written[name] = now
        if due:
            with self._store_lock:
                kept = dict(self._kept())
                if float(kept.get(name) or 0) < now:
                    kept[name] = now
                    self._store[LAST_EVENT_KEY] = kept

    def _kept(self) -> Mapping[str, Any]:
        return stored_mapping(self._store, LAST_EVENT_KEY)
