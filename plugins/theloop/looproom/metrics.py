"""What ``GET /theloop/metrics`` says, in Prometheus's text format: one registry per activation.

Counters for the webhook (accepted, duplicates, refused by reason), the inbox's deliveries
and the relay's outcomes (delivered, retried, parked), Slack's 429s; the asks' waits by kind
(a histogram); gauges read at scrape time for each queue's depth and the age of its oldest
undelivered item, the parent cards owed a redraw and the oldest open ask's wait. A registry of its
own per activation, never the process-wide default: a plugin reactivated in the same
process starts again from zero and registers no name twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from looproom.durable.outcome import Delivered, Outcome, RetryLater

#: The reason label of a refused webhook request, by status.
REFUSALS = {
    400: "malformed",
    401: "signature",
    403: "not_owner",
    405: "method",
    413: "too_large",
    422: "schema",
    503: "unavailable",
}


#: An ask's wait: a minute to three days.
ASK_BUCKETS = (60, 300, 900, 3600, 4 * 3600, 8 * 3600, 24 * 3600, 72 * 3600)


class Watched(Protocol):
    """A queue as the gauges read it."""

    name: str

    def depth(self) -> int: ...

    def oldest(self) -> float | None: ...


class _Queues(Collector):
    def __init__(self, clock: Callable[[], float]) -> None:
        self.queues: list[Watched] = []
        self._clock = clock

    def collect(self) -> Iterator[Any]:
        depth = GaugeMetricFamily(
            "theloop_queue_depth",
            "Items not delivered yet (pending, in flight, parked)",
            labels=["queue"],
        )
        age = GaugeMetricFamily(
            "theloop_queue_oldest_age_seconds",
            "Age of the oldest item not delivered yet (0 when none)",
            labels=["queue"],
        )
        now = self._clock()
        for queue in self.queues:
            oldest = queue.oldest()
            depth.add_metric([queue.name], queue.depth())
            age.add_metric([queue.name], 0.0 if oldest is None else max(0.0, now - oldest))
        yield depth
        yield age


class _Labelled(Collector):
    """Another registry's metrics, each sample labelled with the replica that counted it."""

    def __init__(self, inner: CollectorRegistry, replica: str) -> None:
        self._inner, self._replica = inner, replica

    def collect(self) -> Iterator[Any]:
        for family in self._inner.collect():
            family.samples = [
                sample._replace(labels={**sample.labels, "replica": self._replica})
                for sample in family.samples
            ]
            yield family


class Metrics:
    """The counters of one activation, and the queues whose gauges it reads."""

    def __init__(self, clock: Callable[[], float] = time.time, replica: str = "") -> None:
        """``replica``: this process's name among replicas sharing a database; every sample
        then carries it as the ``replica`` label."""
        self.registry = CollectorRegistry()
        reg = self.registry
        self._exposed = reg
        if replica:
            self._exposed = CollectorRegistry()
            self._exposed.register(_Labelled(reg, replica))
        self.accepted = Counter("theloop_events_accepted", "Events stored (202)", registry=reg)
        self.duplicates = Counter(
            "theloop_events_duplicate", "Events already stored (200)", registry=reg
        )
        self.refused = Counter(
            "theloop_events_refused", "Webhook requests refused", ["reason"], registry=reg
        )
        self.deliveries = Counter(
            "theloop_deliveries", "Inbox delivery attempts by outcome", ["outcome"], registry=reg
        )
        self.relays = Counter(
            "theloop_relays", "Relay attempts by outcome", ["outcome"], registry=reg
        )
        self.slack_rate_limited = Counter(
            "theloop_slack_rate_limited",
            "Slack answers of 429 (rate limited), those retried inline included",
            registry=reg,
        )
        self.cards_owed = Gauge(
            "theloop_cards_owed",
            "Parent cards owed a redraw (their latest state), waiting for Slack's edit budget",
            registry=reg,
        )
        self.ask_wait = Histogram(
            "theloop_ask_wait_seconds",
            "How long a work item waited on people, by the kind of ask and how it closed",
            ["kind", "outcome"],
            buckets=ASK_BUCKETS,
            registry=reg,
        )
        self.ask_oldest = Gauge(
            "theloop_ask_oldest_open_seconds",
            "How long the oldest open ask has waited (0 when none waits)",
            registry=reg,
        )
        self._queues = _Queues(clock)
        reg.register(self._queues)

    def watch_asks(self, oldest_waited: Callable[[], float]) -> None:
        """Report how long the oldest open ask has waited at each scrape."""
        self.ask_oldest.set_function(oldest_waited)

    def ask_closed(self, kind: str, outcome: str, waited: float) -> None:
        """One ask closed (answered, or moved on) after ``waited`` seconds."""
        self.ask_wait.labels(kind, outcome).observe(max(0.0, waited))

    def watch(self, queue: Watched) -> None:
        """Report ``queue``'s depth and oldest age at each scrape."""
        self._queues.queues.append(queue)

    def watch_cards(self, owed: Callable[[], int]) -> None:
        """Report how many parent cards are owed a redraw at each scrape."""
        self.cards_owed.set_function(owed)

    def answered(self, status: int) -> None:
        """One webhook answer, counted by what it meant."""
        if status == 202:
            self.accepted.inc()
        elif status == 200:
            self.duplicates.inc()
        else:
            self.refused.labels(REFUSALS.get(status, str(status))).inc()

    def delivery_settled(self, _item: object, outcome: Outcome) -> None:
        self.deliveries.labels(_outcome(outcome)).inc()

    def relay_settled(self, _item: object, outcome: Outcome) -> None:
        self.relays.labels(_outcome(outcome)).inc()

    def render(self) -> tuple[bytes, str]:
        """The text exposition and its content type."""
        return generate_latest(self._exposed), CONTENT_TYPE_LATEST


def _outcome(outcome: Outcome) -> str:
    if isinstance(outcome, Delivered):
        return "delivered"
    if isinstance(outcome, RetryLater):
        return "paced" if outcome.routine else "retried"
    return "parked"
