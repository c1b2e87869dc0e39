"""How each instance is doing, by name: ``!theloop status`` and the metrics.

Reachable (the control plane's health route answers), the last event stored for it (by
any replica, kept across restarts), and its queue (events not posted yet, decisions
not relayed yet). The doctor's findings about the same are in ``looproom.doctor.instances``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from looproom.durable.contract import WorkQueue
from looproom.instances.fleet import Fleet
from looproom.settings.instances import Instance


def status_lines(fleet: Fleet, inbox: WorkQueue, relay: WorkQueue, now: float) -> list[str]:
    """One line per instance for ``!theloop status``."""
    queued = waiting(fleet, inbox, relay)
    lines = []
    for instance in fleet.instances:
        reach = fleet.reach(instance)
        last = fleet.last_event(instance.name)
        posted, relayed = queued[instance.name]
        follower = fleet.followers.get(instance.name)
        stream = follower.status().state if follower is not None else "off"
        lines.append(
            f"instance {instance.name}: {instance.api} "
            f"{'reachable' if reach.ok else 'UNREACHABLE — ' + reach.said}; "
            f"last event {ago(last, now)}; queue {posted} to post, {relayed} to relay; "
            f"stream {stream}; {describe_claims(fleet, instance)}"
        )
    return lines


def describe_claims(fleet: Fleet, instance: Instance) -> str:
    """Which work items are the instance's, in words."""
    claims = instance.claims
    parts = [f"repos {', '.join(claims.repos)}"] if claims.repos else []
    parts += [f"prefix {', '.join(claims.prefixes)}"] if claims.prefixes else []
    actors = instance.actors
    if claims.learn or actors.pairs():  # a work item routed by its causer is kept the same way
        parts.append(f"{fleet.owners.learned_count(instance.name)} learned")
    if actors.pairs():
        parts.append(f"actors {len(actors.slack)} Slack, {len(actors.github)} GitHub")
    secrets = len(instance.secrets)
    rotating = "; two secrets (rotating)" if secrets > 1 else ""
    return "work items: " + ("; ".join(parts) or "none") + rotating


class InstanceGauges(Collector):
    """``theloop_instance_reachable``, ``…_last_event_timestamp_seconds``,
    ``…_queue_depth`` (by ``queue``: inbox, relay), ``…_claims_learned`` and
    ``…_claims_refused_total`` (new work items refused at the claims' cap since the start),
    labelled with the instance's name."""

    def __init__(self, fleet: Fleet, inbox: WorkQueue, relay: Callable[[], WorkQueue]) -> None:
        self._fleet, self._inbox, self._relay = fleet, inbox, relay

    def collect(self) -> Iterator[Any]:
        reachable = GaugeMetricFamily(
            "theloop_instance_reachable",
            "1 when the instance's control plane answered its health route",
            labels=["instance"],
        )
        last = GaugeMetricFamily(
            "theloop_instance_last_event_timestamp_seconds",
            "When an event of the instance was last stored (absent: none yet)",
            labels=["instance"],
        )
        depth = GaugeMetricFamily(
            "theloop_instance_queue_depth",
            "The instance's items not delivered yet, by queue",
            labels=["instance", "queue"],
        )
        learned = GaugeMetricFamily(
            "theloop_instance_claims_learned",
            "Work items the instance owns by a learned claim",
            labels=["instance"],
        )
        refused = CounterMetricFamily(
            "theloop_instance_claims_refused",
            "New work items refused because every learned claim kept (the cap) is in use",
            labels=["instance"],
        )
        queued = waiting(self._fleet, self._inbox, self._relay())
        owners = self._fleet.owners
        for instance in self._fleet.instances:
            learned.add_metric([instance.name], owners.learned_count(instance.name))
            refused.add_metric([instance.name], owners.refused[instance.name])
            reachable.add_metric([instance.name], 1.0 if self._fleet.reach(instance).ok else 0.0)
            seen = self._fleet.last_event(instance.name)
            if seen is not None:
                last.add_metric([instance.name], seen)
            posted, relayed = queued[instance.name]
            depth.add_metric([instance.name, "inbox"], posted)
            depth.add_metric([instance.name, "relay"], relayed)
        yield reachable
        yield last
        yield depth
        yield learned
        yield refused


def waiting(fleet: Fleet, inbox: WorkQueue, relay: WorkQueue) -> dict[str, tuple[int, int]]:
    """Each instance's items not delivered yet: (to post, to relay), counted among the
    queues' first thousand open items (enough to tell who waits)."""
    return fleet.queued(inbox.list(limit=1000), relay.list(limit=1000))


def ago(at: float | None, now: float) -> str:
    return "none yet" if at is None else f"{max(0.0, now - at):.0f} s ago"
