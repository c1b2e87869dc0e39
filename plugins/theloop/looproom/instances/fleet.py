"""Every instance of one activation: the webhook that tells them apart, who owns which
work item, their streams, the relay's way to their control planes, and how each is doing.

Built once by the assembly when the settings file has ``instances:``; without it there is
no fleet and the single-instance parts run as they always did.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from looproom.attach.slack_files import FileStore
from looproom.durable.contract import Item
from looproom.events import Event
from looproom.http.client import USER_AGENT, http
from looproom.inbound import webhook as ingress
from looproom.instances import streams
from looproom.instances.model import Instance
from looproom.instances.owners import Owners
from looproom.instances.relay import RoutedLoop
from looproom.instances.webhook import Ingress

log = logging.getLogger(__name__)

HEALTH_PATH = "/api/v1/health"
#: A control plane's reachability is asked again at most this often (status, metrics).
PROBE_SECONDS = 30.0
PROBE_TIMEOUT = 2.0
#: The relay's items are grouped ``decisions:<work item>`` (``looproom.relay.relay``).
_RELAY_GROUP = "decisions:"


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
    ) -> None:
        self.instances = tuple(instances)
        self.owners = Owners(self.instances, store)
        self._inbox, self._clock = inbox, clock
        self._last_event: dict[str, float] = {}
        self._reach: dict[str, Reach] = {}
        self._lock = threading.Lock()
        self.ingress = Ingress(self.instances, self.owners, inbox, seen=self._seen)
        self.followers = streams.followers(self.instances, store, self.admit)

    # -- in ------------------------------------------------------------------------------

    def receive(self, request: ingress.Request) -> ingress.Answer:
        """``POST /theloop/events``: signed by one of the instances, about its own work."""
        return self.ingress.handle(request)

    def admit(self, instance: Instance, event: Event) -> bool:
        """An event from ``instance``'s stream: stored when its work item is the
        instance's (False: a duplicate, or another instance's, which is skipped)."""
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

    def control_plane(self, files: FileStore | None) -> RoutedLoop:
        """The relay's way to the-loop: each call to the owner of its work item."""
        return RoutedLoop(self.instances, self.owners, files)

    # -- how each is doing ---------------------------------------------------------------

    def last_event(self, name: str) -> float | None:
        """When this process last stored (or met again) an event of ``name``."""
        with self._lock:
            return self._last_event.get(name)

    def reach(self, instance: Instance, *, fresh: bool = False) -> Reach:
        """The control plane's health, asked again when older than :data:`PROBE_SECONDS`."""
        now = self._clock()
        with self._lock:
            known = self._reach.get(instance.name)
        if known is not None and not fresh and now - known.at < PROBE_SECONDS:
            return known
        headers = {"User-Agent": USER_AGENT}
        if instance.token:
            headers["Authorization"] = f"Bearer {instance.token}"
        answer = http("GET", instance.api + HEALTH_PATH, headers, None, PROBE_TIMEOUT)
        said = f"answers {answer.status}" if answer.status else f"no answer ({answer.error})"
        found = Reach(answer.status == 200, "answers" if answer.status == 200 else said, now)
        with self._lock:
            self._reach[instance.name] = found
        return found

    def queued(self, inbox: Iterable[Item], relay: Iterable[Item]) -> dict[str, tuple[int, int]]:
        """Per instance, its events not delivered to Slack yet and its decisions not
        relayed yet (a work item nobody owns counts for nobody)."""
        counts = {instance.name: [0, 0] for instance in self.instances}
        for column, items in ((0, inbox), (1, relay)):
            for item in items:
                owner = self.owners.owner(item.group.removeprefix(_RELAY_GROUP))
                if owner is not None:
                    counts[owner.name][column] += 1
        return {name: (pair[0], pair[1]) for name, pair in counts.items()}

    def _seen(self, name: str) -> None:
        with self._lock:
            self._last_event[name] = self._clock()
