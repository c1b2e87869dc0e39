"""What each admin command answers about one activation, read from its live parts.

``!theloop status`` (the configuration, the queues, the store, the grants), ``queue``
(list, retry, drop — the inbox's, the relay's or the kickoff's item by its key), ``why``,
``records``, ``doctor``, ``bind``/``unbind`` and ``listen``. The words are drawn by
:mod:`looproom.admin.text`; here the parts are asked what to draw.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Protocol

from looproom.admin import bind, text, threads
from looproom.attention.side import AttentionSide
from looproom.catchup import listen_modes
from looproom.catchup.listen_modes import ListenAll
from looproom.decide import talk
from looproom.decide.policies import Policies
from looproom.doctor import findings, jira_check
from looproom.doctor import instances as instance_check
from looproom.doctor.examine import SlackSide, examine
from looproom.doctor.split_watch import SplitWatch
from looproom.durable.contract import WorkQueue
from looproom.durable.sqlite import StorageError
from looproom.durable.worker import Worker
from looproom.from_slack.channel_roles import Places
from looproom.inbound.recent import Recent
from looproom.inbound.stream import StreamFollower
from looproom.instances import report as instance_report
from looproom.instances.fleet import Fleet
from looproom.kickoff.opening import is_key as is_kickoff_key
from looproom.kickoff.opening import queue_lines as opening_lines
from looproom.relay import texts
from looproom.relay.record_reader import RecordReader
from looproom.relay.relay import Relay
from looproom.relay.sinks import Sinks
from looproom.room.delivery_log import DeliveryLog
from looproom.room.readers import Asker, Readers
from looproom.room.render import work_item_label
from looproom.room.routing import BindingBook
from looproom.server import routes
from looproom.server.runner import Listening
from looproom.settings import Environment, Settings, keywords
from looproom.slack.transport import SlackTransport
from looproom.stores import Stores


class DecisionParts(Protocol):
    """The decision side's parts the answers read."""

    relay: Relay
    sinks: Sinks
    records: RecordReader
    keywords: keywords.Keywords
    listen_all: ListenAll
    policies: Policies
    places: Places
    split: SplitWatch | None
    attention: AttentionSide
    readers: Readers


class Answers:
    """The admin commands of one activation."""

    def __init__(
        self,
        env: Environment,
        settings: Settings,
        *,
        secret: str,
        stores: Stores,
        worker: Worker,
        book: BindingBook,
        told: DeliveryLog,
        decisions: DecisionParts,
        slack: SlackTransport | None = None,
        follower: StreamFollower | None = None,
        fleet: Fleet | None = None,
        answered: Recent | None = None,
    ) -> None:
        """``secret``: the webhook secret in force (a console's local one counts);
        ``answered``: the webhook's last answers, for the doctor."""
        self._env, self._settings, self._secret = env, settings, secret
        self._stores, self._inbox, self._worker = stores, stores.inbox, worker
        self._book, self._told, self._decisions = book, told, decisions
        self._slack, self._follower, self._fleet = slack, follower, fleet
        self._answered = answered if answered is not None else Recent()
        #: Where the HTTP server listens, or why not: the adapter sets it once it started.
        self.listening = Listening()

    @property
    def _relay_queue(self) -> WorkQueue:
        return self._decisions.relay.queue

    def status(self, now: float) -> str:
        """``!theloop status``."""
        try:
            health = text.Health(
                counts=self._inbox.counts(),
                last_error=self._inbox.last_error(),
                worker_alive=self._worker.alive,
                bindings=self._book.thread_count(),
            )
        except StorageError as exc:  # the one thing to say while the store is unreachable
            return f"**theloop status**\nstore: {self._stores.where} — FAILING: {exc}"
        stream = self._follower.status().describe() if self._follower else "loop stream: off"
        env = replace(self._env, webhook_secret=self._secret)  # a local secret counts
        said = text.status_text(env, self._settings, health, now, self.listening.describe())
        lines = [said, self._health_line(), stream, self._store_lines(now)]
        if self._fleet is not None:
            lines += instance_report.status_lines(self._fleet, self._inbox, self._relay_queue, now)
        if self._secret != self._env.webhook_secret:
            lines.append("webhook secret: the console's own, in the data directory (env unset)")
        lines += [self._keyword_line(), self._settings.reactions.describe()]
        lines += [
            self._settings.read.describe(self._decisions.way_in),
            listen_modes.status_line(self._decisions.listen_all),
        ]
        lines.append(self._decisions.attention.oldest_line())
        lines += self._jira_lines()
        if self._decisions.split is not None:
            lines.append(self._decisions.split.line())
        grants = "\n".join(f"- {line}" for line in self._decisions.policies.grant_lines())
        return "\n".join(lines) + f"\n\n**grants** (act: who may)\n{grants}"

    def _health_line(self) -> str:
        """What `GET /theloop/health` is degraded by, named: the route says no more."""
        found = routes.problems(self._inbox, self._worker, self._decisions.relay)
        return "health: " + (f"DEGRADED — {'; '.join(found)}" if found else "ok")

    def _store_lines(self, now: float) -> str:
        """Where the state is kept; in the shared mode, the replicas seen recently."""
        line = f"store: {self._stores.where}"
        if self._stores.heartbeat is None:
            return line
        try:
            seen = self._stores.replicas()
        except StorageError as exc:
            return f"{line}\nreplicas: unknown — {exc}"
        names = ", ".join(
            f"{r.name} (this one)" if r.me else f"{r.name} (seen {max(0, now - r.seen):.0f} s ago)"
            for r in seen
        )
        return f"{line}\nreplicas seen within the lease: {names or 'none'}"

    def _keyword_line(self) -> str:
        """The control keywords and where they were read from."""
        said = self._decisions.keywords
        if not said.enabled:
            return f"control keywords: switched off ({said.source})"
        words = ", ".join(
            f"{c} → `{said.of(c)}`" if said.of(c) else f"{c} → off" for c in keywords.COMMANDS
        )
        return f"control keywords ({said.source}): {words}"

    def _jira_lines(self) -> list[str]:
        jira = self._decisions.sinks.jira
        if jira is None:
            return []
        credential = "missing: " + jira.missing() if jira.missing() else "set"
        return [
            f"jira ledger: {jira.site.site} ({jira.site.deployment}), projects "
            f"{', '.join(jira.site.projects) or 'none'}; credential {credential}"
        ]

    def queue(self, args: str, now: float) -> str:
        """``!theloop queue``: list what is not delivered or relayed; retry or drop one."""
        try:
            command = text.parse_queue_command(args)
        except text.UsageError as exc:
            return str(exc)
        if command.action == "list":
            listed = text.queue_text(self._inbox.list(), self._inbox.depth(), now)
            relays = texts.queue_lines(self._relay_queue.list(), now)
            kicks = self._stores.kickoff
            opening = opening_lines(kicks.list(), now) if kicks is not None else []
            return (
                listed
                + ("\n\nDecisions not relayed yet:\n" + "\n".join(relays) if relays else "")
                + ("\n\nWork items not opened yet:\n" + "\n".join(opening) if opening else "")
            )
        queue = self._relay_queue if command.key.startswith("relay:") else self._inbox
        if is_kickoff_key(command.key) and self._stores.kickoff is not None:
            queue = self._stores.kickoff
        act = queue.retry_now if command.action == "retry" else queue.drop
        if act(command.key):
            return f"{command.action}: done for `{command.key}`."
        return f"No undelivered item `{command.key}` (see `!theloop queue`)."

    def why(self, args: str, now: float, asker: Asker) -> str:
        """``!theloop why <work item>``: the room's last decisions for it, with their rules
        — to who could read it in Slack (``looproom.room.readers``)."""
        asked = args.strip()
        readers = self._decisions.readers
        readable = readers.readable(asker)  # each room asked of Slack once
        known = [k for k in self._told.items() if readable(k)]
        match = next((k for k in known if asked in (k, work_item_label(k))), asked)
        refused = readers.refusal(match, asker) if asked else ""
        if refused:
            return refused
        return text.why_text(asked, known, self._told.why(match) if asked else [], now)

    def asks(self, args: str) -> str:
        """``!theloop asks [<work item> | --since <when>]``: the asks on record."""
        try:
            return self._decisions.attention.answer(args)
        except StorageError as exc:
            return f"The asks cannot be read now: {exc}"

    def records(self, args: str, asker: Asker) -> str:
        """``!theloop records <work item>``: what was recorded on its ticket from Slack —
        to who could read it in Slack."""
        reader = self._decisions.records
        return reader.answer(args, lambda ref: self._decisions.readers.refusal(ref, asker))

    def bind(self, args: str) -> str:
        """``!theloop bind``."""
        return bind.bind_command(self._book, args, self._decisions.places.ids.find)

    def threads(self, args: str) -> str:
        """``!theloop threads``: each work item's room and thread, as the-loop lists them."""
        return threads.threads_text(self._book.threads(), self._decisions.listen_all.rooms, args)

    def unbind(self, args: str) -> str:
        """``!theloop unbind``."""
        return bind.unbind_command(self._book, args)

    def listen(self, args: str, here: str) -> str:
        """``!theloop listen``: switch a room to hear everything, or back; list them."""
        ids = self._decisions.places.ids
        return listen_modes.command(
            self._decisions.listen_all, args, here, ids.of, direct=talk.is_direct(here)
        )

    def doctor(self, socket: Any) -> str:
        """``!theloop doctor``: the findings, probing on the bot's own Socket Mode client."""
        homes = self._decisions.attention.homes
        tab = homes.tab_on if homes is not None else None
        if socket is not None:
            side = SlackSide(self._slack, socket, False, bool(socket.is_connected()), home_tab=tab)
        else:
            why = "the bot holds no Socket Mode client"
            side = SlackSide(self._slack, no_socket_why=why, home_tab=tab)
        found = examine(
            self._env,
            self._settings,
            side,
            bound=self._book.room_bindings(),
            local_secret=bool(self._secret) and not self._env.webhook_secret,
            recent=self._answered.counts(),
        )
        if self._fleet is not None:
            relay = self._relay_queue
            found += instance_check.fleet_findings(self._fleet, self._inbox, relay, time.time())
        if self._decisions.split is not None:
            found = [*found, self._decisions.split.finding()]
        if self._decisions.sinks.jira is not None:
            found = [*found, jira_check.finding(self._decisions.sinks.jira)]
        return findings.report(found)
