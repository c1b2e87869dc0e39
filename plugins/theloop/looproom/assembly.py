"""theloop put together: every part of one activation, built once from explicit inputs.

The Errbot plugin (``plugins/theloop/theloop.py``) reads the settings and hands this module
what only Errbot has — its storage, its data directory, the backend's Slack client or a
plain way to send a line, who the bot is — and gets back one :class:`Activation` to start
and stop, whose parts it asks: ``decisions.listener`` what people say and press,
``routes`` the HTTP requests, ``admin`` the admin commands. Nothing here imports Errbot,
so the wiring runs in a unit test; nothing here reads a message or draws an answer.

One binding book and one memory serve the delivery worker, the admin commands and the
decision desk alike: each guards its read-modify-writes with a lock of its own, so two of
either over the same storage could interleave them.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from functools import partial
from pathlib import Path
from typing import Any

from looproom.admin.answers import Answers
from looproom.attention.feed import Feed
from looproom.attention.side import ATTENTION
from looproom.catchup.cursors import Cursors
from looproom.decide.effects import Effects
from looproom.decision_side import Decisions
from looproom.durable.worker import Worker
from looproom.events import Event
from looproom.inbound import local_secret
from looproom.inbound import webhook as ingress
from looproom.inbound.recent import Recent
from looproom.inbound.stream import StreamFollower
from looproom.instances import report as instance_report
from looproom.instances.actors import causers_for
from looproom.instances.fleet import Fleet
from looproom.kickoff.opening import KICKOFF
from looproom.loop_log.channel import ChannelLog
from looproom.metrics import Metrics
from looproom.postgres.slack_budgets import SharedBudgets, SharedLimits, SharedPacer
from looproom.relay.relay import RELAY
from looproom.room.cards import Cards
from looproom.room.delivery_log import DeliveryLog
from looproom.room.memory import Memory
from looproom.room.outlets import Outlet, PlainOutlet, event_delivery
from looproom.room.pulls import PullReader
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.server.routes import Routes
from looproom.settings import Environment, Settings
from looproom.settings import read as reading
from looproom.slack.speakers import Say
from looproom.slack.transport import SlackTransport
from looproom.stores import open_stores

INBOX = "inbox"
LEDGER_FILE = "relay-ledger.jsonl"


class Observers:
    """Every part told of an event the room consumed: the memory, then the effects (a
    closure ends the work item's roster and channel move once its message is out), then
    the asks on record (what the work item now waits on people for)."""

    def __init__(self, memory: Memory, effects: Effects, attention: Feed) -> None:
        self._memory, self._effects, self._attention = memory, effects, attention

    def observe(self, event: Event, channel: str = "", ts: str = "", thread_ts: str = "") -> None:
        state = self._memory.observe(event, channel, ts, thread_ts)
        self._effects.observe(event, channel, ts, thread_ts)
        self._attention.observed_event(event, state)


class Activation:
    """Everything one activation runs: the inbox and its worker, the stream follower, the
    decisions, the HTTP routes and the admin commands."""

    def __init__(
        self,
        env: Environment,
        settings: Settings,
        *,
        store: MutableMapping[str, Any],
        data_dir: Path,
        slack: SlackTransport | None,
        say: Say,
        admins: tuple[str, ...],
        bot_member: Callable[[], str],
        console: bool = False,
    ) -> None:
        """``store`` is the plugin's storage (bindings, memory and the stream cursor survive
        restarts); ``slack`` the transport on Slack, else None and ``say`` posts plainly to
        a room or, without one, to each of ``admins``. ``console``: the chat backend is
        Errbot's Text console, where an unset webhook secret gets a local one."""
        self.env, self.settings = env, settings
        self._admins, self._say, self._slack = admins, say, slack
        #: The queues and the books' records: SQLite here, or the shared database.
        self.stores = open_stores(env, data_dir, store, (INBOX, RELAY), KICKOFF, ATTENTION)
        if slack is not None and self.stores.database is not None:
            # Slack counts the app's calls whatever replica makes them: one budget for all.
            budgets = SharedBudgets(self.stores.database)
            slack.pacer, slack.limits = SharedPacer(budgets), SharedLimits(budgets)
        store = self.stores.state
        self.metrics = Metrics(replica=self.stores.replica)
        # The environment's secret; on the Text backend without one, a local one.
        secret = "" if env.instances else local_secret.ensure(env, data_dir, console=console)
        #: On the Text backend with a local secret: the one line that sends an event.
        self.first_run_line = local_secret.first_run_line(env, data_dir, secret)
        self.book, self.memory, self.told = BindingBook(store), Memory(store), DeliveryLog(store)
        self.inbox = self.stores.inbox
        #: Many the-loop instances (``instances:``); None: the one of the environment.
        authors = causers_for(env.instances, env.github_api, env.github_token)
        self.fleet = (
            Fleet(env.instances, store, self.inbox, causers=authors) if env.instances else None
        )
        self.decisions = Decisions(
            env,
            settings,
            book=self.book,
            memory=self.memory,
            cursors=Cursors(store),
            relay_queue=self.stores.relay,
            kickoff_queue=self.stores.kickoff,
            ledger=data_dir / LEDGER_FILE,
            slack=slack,
            say=say,
            bot_member=bot_member,
            metrics=self.metrics,
            store=store,
            fleet=self.fleet,
            stores=self.stores,
            admins=admins,
        )
        #: The parents' redraws, on a stage of their own: they never hold a delivery slot.
        self.cards = Cards(slack, self.book) if slack is not None else None
        #: The room's records for the-loop's event log, read signed by loopside.
        self.records = ChannelLog(self.stores.room_records)
        self.worker = Worker(
            self.inbox,
            event_delivery(self._outlet(slack), self.records),
            settled=self.metrics.delivery_settled,
            slots=env.delivery_slots,
        )
        self._measure(slack)
        accept = partial(ingress.admit, self.inbox)
        self.follower = (
            StreamFollower(env.loop_stream, accept=accept, cursor=store)
            if env.loop_stream
            else None
        )
        answered = Recent()  # the webhook's last answers, for the doctor
        self.routes = Routes(
            secret=secret,
            signing_secret=env.slack_signing_secret,
            inbox=self.inbox,
            worker=self.worker,
            relay=self.decisions.relay,
            metrics=self.metrics,
            slash_desk=self.decisions.slash,
            pressed=self.decisions.listener.pressed,
            fleet=self.fleet,
            answered=answered,
            files=self.decisions.sinks.files,
            heard=self.decisions.attention.home_opened,
            records=self.stores.room_records,
        )
        self.admin = Answers(
            env,
            settings,
            secret=secret,
            stores=self.stores,
            worker=self.worker,
            book=self.book,
            told=self.told,
            decisions=self.decisions,
            slack=slack,
            follower=self.follower,
            fleet=self.fleet,
            answered=answered,
        )

    def start(self) -> None:
        self.stores.start()
        self.decisions.start()
        self.decisions.attention.start()
        if self.cards is not None:
            self.cards.start()
        self.worker.start()
        if self.follower is not None:
            self.follower.start()
        if self.fleet is not None:
            self.fleet.start()

    def stop(self) -> bool:
        """Stop everything; False when the delivery worker was still busy (its item is handed
        out again, flagged, after a restart) or a parent's redraw was still in a call."""
        if self.follower is not None:
            self.follower.stop()
        if self.fleet is not None:
            self.fleet.stop()
        if self._slack is not None:
            self._slack.close()  # a slot waiting for Slack's budget stops waiting
        stopped = self.worker.stop()
        stopped = self.decisions.attention.stop() and stopped
        if self.cards is not None:  # what is still owed is in the book: drawn after a start
            stopped = self.cards.stop() and stopped
        self.decisions.close()
        self.stores.close()
        return stopped

    def _measure(self, slack: SlackTransport | None) -> None:
        """The queues' depths, each instance's, and Slack's 429s, in the metrics."""
        self.metrics.watch(self.inbox)
        self.metrics.watch(self.decisions.relay.queue)
        if self.fleet is not None:
            self.metrics.registry.register(
                instance_report.InstanceGauges(
                    self.fleet, self.inbox, lambda: self.decisions.relay.queue
                )
            )
        if slack is not None:
            slack.on_rate_limited = self.metrics.slack_rate_limited.inc
        if self.cards is not None:
            cards = self.cards
            self.metrics.watch_cards(lambda: cards.owed)

    def _outlet(self, slack: SlackTransport | None) -> Outlet:
        """Slack: rooms, threads, Block Kit through the transport; elsewhere plain text.
        Either tells the memory what it posted, which is what a decision is checked against."""
        observer = Observers(self.memory, self.decisions.effects, self.decisions.attention.feed)
        if slack is not None:
            return SlackOutlet(
                slack,
                self.book,
                self.settings,
                observer=observer,
                # Buttons only where the room's presses reach the bot (Socket Mode or HTTP):
                # a poll reads what is typed, and a press would reach nobody.
                interactive=self.decisions.way_in in (reading.SOCKET, reading.EVENTS),
                told=self.told,
                pulls=PullReader(self.env.github_api, self.env.github_token),
                cards=self.cards,
                records=self.records,
            )
        return PlainOutlet(self._post, self.book, self.settings, observer=observer)

    def _post(self, room: str | None, text: str, _thread: str | None) -> None:
        # A plain backend has no threads; without a room the admins hear it.
        targets = [room] if room else list(self._admins)
        if not targets:
            raise RuntimeError("nowhere to post: set slack.channel or THELOOP_ADMINS")
        for target in targets:
            self._say(target, text)
