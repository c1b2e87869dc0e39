"""theloop put together: every part of one activation, built once from explicit inputs.

The Errbot plugin (``plugins/theloop/theloop.py``) reads the settings and hands this module
what only Errbot has — its storage, its data directory, the backend's Slack client or a
plain way to send a line, who the bot is — and gets back one :class:`LoopRoom` to start,
ask and stop. Nothing here imports Errbot, so the wiring runs in a unit test.

One room book and one memory serve the delivery worker, the admin commands and the
decision desk alike: each guards its read-modify-writes with a lock of its own, so two of
either over the same storage could interleave them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from looproom import admin
from looproom.attach import fetch as file_fetch
from looproom.attach import slack_files
from looproom.decide import kinds, presses, room_help, slash, talk
from looproom.decide.authorization import Policy, holders
from looproom.decide.catchup import TOP, CatchUp
from looproom.decide.cursors import Cursors
from looproom.decide.decision import Decision
from looproom.decide.desk import Desk, room_facts
from looproom.decide.effects import Effects
from looproom.decide.judging import Said, Where
from looproom.decide.listening import ListenAll
from looproom.decide.listening import command as listen_command
from looproom.decide.listening import status_line as listen_status
from looproom.decide.loop_control import LoopControl
from looproom.decide.members import Directory, Grants, UnknownHandle, resolve_grants
from looproom.decide.reconcile import Reconcile
from looproom.decide.slash_desk import SlashDesk
from looproom.decide.talk_desk import TalkDesk
from looproom.doctor import findings, jira_check
from looproom.doctor import instances as instance_check
from looproom.doctor.examine import SlackSide, examine
from looproom.doctor.split_watch import SplitWatch
from looproom.durable.contract import WorkQueue
from looproom.durable.sqlite import StorageError
from looproom.durable.worker import Worker
from looproom.events import Event
from looproom.inbound import local_secret, slack_events
from looproom.inbound import webhook as ingress
from looproom.inbound.recent import Recent
from looproom.inbound.stream import StreamFollower
from looproom.instances import report as instance_report
from looproom.instances.fleet import Fleet
from looproom.kickoff.github import IssueMaker
from looproom.kickoff.opener import Opener
from looproom.metrics import Metrics
from looproom.relay import jira_config, keywords, texts
from looproom.relay.jira_sink import JiraSink
from looproom.relay.record_reader import RecordReader
from looproom.relay.relay import RELAY, Relay
from looproom.relay.sinks import ControlPlane, GitHubSink, LedgerSink, LoopSink, Sinks
from looproom.room.channel_moves import ChannelMoves
from looproom.room.memory import Memory
from looproom.room.outlets import Outlet, PlainOutlet, event_delivery
from looproom.room.pulls import PullReader
from looproom.room.render import work_item_label
from looproom.room.roster import Roster
from looproom.room.routing import RoomBook, Thread
from looproom.room.slack_outlet import SlackOutlet
from looproom.room.told import ToldBook
from looproom.server.app import Mount, WsgiApp
from looproom.server.runner import Listening
from looproom.settings import ConfigError, Environment, Kickoff, Settings
from looproom.slack.queued_room import QueuedRoom
from looproom.slack.reactions import Reacting
from looproom.slack.replies import is_channel_id
from looproom.slack.rooms import PlainRoom, Say, SlackPoster, SlackRoom
from looproom.slack.transport import SlackTransport
from looproom.stores import open_stores

log = logging.getLogger(__name__)

INBOX = "inbox"
LEDGER_FILE = "relay-ledger.jsonl"
#: Where the files people attach to replies are kept for the sessions to read.
FILES_DIR = "files"


def _grants(
    settings: Settings, slack: SlackTransport | None, store: MutableMapping[str, Any]
) -> Grants:
    """Who decides and who collaborates, by member id: ``@handles`` resolved through Slack
    (a handle naming nobody refuses the activation, as any other bad setting does)."""
    directory = Directory(slack.users_page if slack is not None else None, store)
    try:
        return resolve_grants(settings.authorized_users, settings.collaborators, directory)
    except UnknownHandle as exc:
        raise ConfigError([str(exc)], settings.source) from None


def _jira(env: Environment, settings: Settings) -> jira_config.JiraSite | None:
    """the-loop's Jira ledger: its own ``integrations.jira`` when its config is named,
    else ``jira`` in theloop.yaml (a bad one refuses the activation)."""
    if not env.loop_config:
        return settings.jira
    try:
        return jira_config.resolve(env.loop_config, None) or settings.jira
    except jira_config.JiraConfigError as exc:
        raise ConfigError(exc.errors, env.loop_config) from None


def _keywords(env: Environment, settings: Settings) -> keywords.Keywords:
    """the-loop's control keywords, from its own config when named (a bad one refuses the
    activation: relaying in words it does not read would be silently ignored)."""
    reserved = (*kinds.VERBS, *slash.WORDS)
    try:
        return keywords.resolve(
            env.loop_config, settings.relay_keywords, settings.relay_commands, reserved
        )
    except keywords.KeywordError as exc:
        raise ConfigError(exc.errors, env.loop_config or settings.source) from None


def _file_store(
    env: Environment, data_dir: Path, slack: SlackTransport | None
) -> slack_files.FileStore | None:
    """Where attached files are fetched to, with the bot token, from Slack's file hosts
    (and the Slack API address the operator set, for a proxy or a test's loopback)."""
    if slack is None:
        return None
    allowed = list(file_fetch.SLACK_ORIGINS)
    configured = file_fetch.origin_of(env.slack_api_url) if env.slack_api_url else None
    if configured is not None:
        allowed.append(configured)

    def info(file_id: str) -> Mapping[str, Any] | None:
        reply = slack.file_info(file_id)
        found = reply.data.get("file") if reply.ok else None
        return found if isinstance(found, Mapping) else None

    return slack_files.FileStore(data_dir / FILES_DIR, slack.token, allowed, info=info)


def _control_plane(
    env: Environment, fleet: Fleet | None, files: slack_files.FileStore | None
) -> ControlPlane | None:
    """the-loop's control plane: each instance's, by the work item's owner, or the one."""
    if fleet is not None:
        return fleet.control_plane(files)
    return LoopSink(env.loop_api, files=files) if env.loop_api else None


class Decisions:
    """The decision side: the desk, the relay behind it, and where both speak."""

    def __init__(
        self,
        env: Environment,
        settings: Settings,
        *,
        book: RoomBook,
        memory: Memory,
        relay_queue: WorkQueue,
        ledger: Path,
        slack: SlackTransport | None,
        say: Say,
        bot_member: Callable[[], str],
        metrics: Metrics | None = None,
        grants: Grants | None = None,
        store: MutableMapping[str, Any] | None = None,
        cursors: Cursors | None = None,
        fleet: Fleet | None = None,
    ) -> None:
        """``bot_member`` is asked at each decision: the backend learns who it is on connecting.
        ``grants`` are the members by id (``@handles`` resolved); else the settings' as written.
        ``store`` is the plugin's storage (the kickoff's claims); ``cursors`` (in it too) say
        which thread messages were read already."""
        self._settings, self._book, self._slack = settings, book, slack
        self.grants = grants or Grants(settings.authorized_users, settings.collaborators)
        self._signing_secret = env.slack_signing_secret
        self.keywords = _keywords(env, settings)
        jira = _jira(env, settings)
        self._bot_member = bot_member
        sinks = Sinks(
            ledger=LedgerSink(ledger),
            github=GitHubSink(env.github_api, env.github_token) if env.github_token else None,
            loop=_control_plane(env, fleet, _file_store(env, ledger.parent, slack)),
            keywords=self.keywords,
            jira=JiraSink(jira) if jira is not None else None,
        )
        self.sinks = sinks
        self._destinations = sinks.available(settings.relay_repos)
        #: ``!theloop records``: read back from the ticket, for work items the room follows.
        self.records = RecordReader(sinks.ledger, sinks.github, sinks.jira, known=memory.knows)
        # On Slack, said off the caller's thread: a press is answered within Slack's
        # 3 s, and the desk's lock is never held across a Slack call.
        self._voice = QueuedRoom(SlackRoom(slack)) if slack is not None else None
        room = Reacting(self._voice or PlainRoom(say), settings.reactions)
        # A parked decision reopens its question, so the member can answer again.
        self.relay = Relay(
            relay_queue,
            sinks,
            room,
            on_given_up=self._given_up,
            observe=metrics.relay_settled if metrics is not None else lambda _i, _o: None,
            slots=env.delivery_slots,
        )
        self.cursors = cursors if cursors is not None else Cursors({})
        kept: MutableMapping[str, Any] = store if store is not None else {}
        self.roster = Roster(kept)
        #: What a collaborator or channel command changes here, and what an ending ends.
        moves = ChannelMoves(kept, book, room.reply, self._known_id)
        self.effects = Effects(self.roster, moves, settings.people)
        self.desk = Desk(
            memory,
            self.relay,
            room,
            self._policy,
            cursors=self.cursors,
            thread_lines=self._thread_lines if slack is not None else lambda _c, _t: None,
            recorded=self.effects.recorded,
        )
        self.talk = TalkDesk(self.desk, self._open_view, self._policy)
        self.desk.ask_why = self.talk.ask_why
        #: What was typed while the bot was away, read after each (re)connection on Slack
        #: and every ``slack.read.catchUpSeconds`` while connected.
        self.catch_up = (
            CatchUp(
                lambda: [(thread.channel, thread.ts) for thread in book.recent_threads()],
                lambda channel, thread, oldest: slack.thread(channel, thread, oldest),
                self._missed,
                self.cursors,
                rooms=self._rooms_read,
                read_room=slack.top_level,
                turn=slack.limits.wait,
            )
            if slack is not None
            else None
        )
        #: The listener's own second-consumer check, once Socket Mode is handed over.
        self.split: SplitWatch | None = None
        self.reconcile = Reconcile(
            self.catch_up.run if self.catch_up is not None else lambda: 0,
            settings.read.catch_up_seconds,
            check=lambda: self.split.check() if self.split is not None else None,
        )
        self.opener = self._opener(env, slack, memory, store)
        #: The rooms an admin switched to hear every message as words to the bot.
        self.listen_all = ListenAll(store if store is not None else {})
        self.slash = SlashDesk(
            self.desk,
            book,
            self._policy,
            self._room_facts,
            loop_api=env.loop_api,
            kickoff=self.opener,
            control=LoopControl(
                fleet.planes() if fleet is not None else env.loop_api,
                self._policy,
                kept,
                self._thread_link,
            ),
        )

    def start(self) -> None:
        self.relay.start()
        self.reconnected()  # at start, too: the bot was away until now
        if self.catch_up is not None:
            self.reconcile.start()

    def listen(self, socket: Any) -> None:
        """The bot's Socket Mode client: the split check runs on it after each reconcile."""
        if socket is None or self._slack is None:
            return
        room = self._settings.channel
        self.split = SplitWatch(
            self._slack,
            lambda: self._channel_id(room) if room else "",
            socket,
            self._settings.read.split_check_beats,
        )

    def _rooms_read(self) -> list[str]:
        """The rooms whose top-level messages are for the bot too: kickoff rooms, rooms
        bound to a work item, and rooms that listen to everything."""
        rooms = [room for room, _kickoff in self._settings.kickoffs]
        rooms += list(self._book.room_bindings().values()) + self.listen_all.rooms()
        return [found for found in map(self._channel_id, rooms) if found]

    def close(self) -> None:
        # The catch-up first: a reconcile cycle inside it ends at its next wait, so the
        # reconcile's join below is short, and no cycle outlives the stores.
        if self.catch_up is not None:
            self.catch_up.stop()
        self.reconcile.stop()
        self.relay.stop()
        self.relay.queue.close()
        if self._voice is not None:
            self._voice.close()  # after the relay: its last ✅ is said too

    def said(
        self, member: str, text: str, event: Mapping[str, Any], *, elsewhere: str, addressed: bool
    ) -> None:
        """A typed message. ``event`` is Slack's message event ({} on another backend);
        ``elsewhere`` is where to answer when there is no Slack channel (a plain backend)."""
        channel = str(event.get("channel") or "") or elsewhere
        ts = str(event.get("ts") or "") or f"plain-{time.time_ns()}"
        thread_ts = str(event.get("thread_ts") or "")
        if self._read_before(event, channel, thread_ts):
            return  # a top-level message read already, live or by the catch-up
        if self._help(member, event, channel, ts, thread_ts):
            return
        if self._kickoff(member, event, channel, thread_ts):
            return
        # Slack's own text keeps a mention as ``<@U…>``; the backend's has made it a name.
        raw = str(event.get("text") or "")
        if raw and not addressed:
            text = raw
        own = self._bot_member()
        named = talk.named_work_item(text) if talk.is_direct(channel) else ""
        attached = slack_files.kept(event.get("files") or [])
        said = Said(
            member,
            text.strip(),
            channel,
            ts,
            thread_ts,
            is_bot=bool(event.get("bot_id")) or event.get("subtype") == "bot_message",
            addressed=addressed,
            subtype=str(event.get("subtype") or ""),
            to_bot=talk.mentions(raw or text, own)
            or bool(named)
            or self.listen_all.hears_all(channel),
            files=slack_files.record(attached),
            attached=attached,
        )
        where = self.desk.where(channel, thread_ts, *self._room_facts(channel))
        if named and not where.work_item:
            where = Where(named, where.repository)
        if where.thread_bound and not self.cursors.claim(channel, thread_ts, ts):
            return  # read already, live or by the catch-up
        self.desk.said(said, where)

    def _help(
        self, member: str, event: Mapping[str, Any], channel: str, ts: str, thread_ts: str
    ) -> bool:
        """``@theloop help [public]``: this room's grammar — to the asker, or to the thread."""
        wanted = room_help.asked(str(event.get("text") or ""), self._bot_member())
        if not wanted or event.get("bot_id") or event.get("subtype"):
            return False
        where = self.desk.where(channel, thread_ts, *self._room_facts(channel))
        if where.thread_bound and not self.cursors.claim(channel, thread_ts, ts):
            return True  # answered already, live or by the catch-up
        kickoff = self._kickoff_for(channel)
        room = room_help.Room(
            where.work_item, where.thread_bound, where.repository, kickoff.repos if kickoff else ()
        )
        text = room_help.text(room, self._policy().on(where.work_item))
        if wanted == "public":
            self.desk.room.reply(channel, thread_ts or ts, text)
        else:
            self.desk.room.tell(channel, member, text, thread_ts)
        return True

    def _read_before(self, event: Mapping[str, Any], channel: str, thread_ts: str) -> bool:
        """Claim a top-level message in a room (the catch-up reads rooms too); True when
        it was claimed before. Threads are claimed once their work item is known."""
        ts = str(event.get("ts") or "")
        if not ts or thread_ts or talk.is_direct(channel):
            return False
        return not self.cursors.claim(channel, TOP, ts)

    def _missed(self, message: Mapping[str, Any]) -> None:
        """A message the catch-up found: through the same pipeline as a live one."""
        member = str(message.get("user") or message.get("bot_id") or "")
        self.said(member, str(message.get("text") or ""), message, elsewhere="", addressed=False)

    def reconnected(self) -> None:
        """Slack's connection is (re)established: read what was said while it was not."""
        if self.catch_up is not None:
            self.catch_up.soon()

    def _thread_lines(self, channel: str, thread: str) -> list[talk.Line] | None:
        """The thread's messages by people, oldest first; ``None`` when Slack cannot say."""
        assert self._slack is not None
        messages = self._slack.thread(channel, thread)
        if messages is None:
            return None
        own = self._bot_member()
        return [
            talk.Line(str(m.get("ts")), str(m.get("user") or ""), str(m.get("text") or ""))
            for m in messages
            if not m.get("bot_id") and m.get("user") and m.get("user") != own
        ]

    def _kickoff(self, member: str, event: Mapping[str, Any], channel: str, thread_ts: str) -> bool:
        """Whether a message was a kickoff (then the opener took it, not the desk)."""
        if self.opener is None or event.get("bot_id") or event.get("subtype"):
            return False
        raw = str(event.get("text") or "")  # Slack's own, mentions as <@U…>
        return self.opener.message(member, raw, channel, str(event.get("ts") or ""), thread_ts)

    def pressed(self, payload: Mapping[str, Any]) -> None:
        """A press, a shortcut or a submitted form that arrived over Socket Mode (already
        verified)."""
        if self.opener is not None and self.opener.picked(payload):
            return
        if not self.talk.interactive(payload):
            self.desk.pressed(payload)

    def _open_view(self, trigger_id: str, view: Mapping[str, Any]) -> bool:
        """Open a form now (a trigger is good for three seconds): not through the queue."""
        if self._slack is None:
            return False
        reply = self._slack.open_view(trigger_id, view)
        if not reply.ok:
            log.warning("views.open failed: %s", reply.error)
        return reply.ok

    def _opener(
        self,
        env: Environment,
        slack: SlackTransport | None,
        memory: Memory,
        store: MutableMapping[str, Any] | None,
    ) -> Opener | None:
        """The kickoff, where a room has one and GitHub can be written; else None."""
        if slack is None or store is None or not env.github_token or not self._settings.kickoffs:
            return None

        def bind(work_item: str, channel: str, posted: tuple[str, ...]) -> None:
            if not posted:
                return  # the thread's message could not be posted: nothing to bind
            for ts in posted:
                memory.index(channel, ts, work_item)
            self._book.remember(Thread(work_item, channel, posted[0]))

        maker = IssueMaker(env.github_api, env.github_token)
        return Opener(store, self._kickoff_for, maker, SlackPoster(slack), self._policy, bind)

    def _kickoff_for(self, channel: str) -> Kickoff | None:
        """The kickoff of the room ``channel`` is (``""``: the default room's)."""
        for room, kickoff in self._settings.kickoffs:
            if not channel and room == self._settings.channel:
                return kickoff
            if channel and self._channel_id(room) == channel:
                return kickoff
        return None

    def _channel_id(self, room: str) -> str:
        """A room's id: as written, as learnt, else asked of Slack once and learnt."""
        if is_channel_id(room):
            return room
        known = self._book.channel_id(room)
        if known or self._slack is None:
            return known
        found, _reply = self._slack.find_channel(room)
        if found:
            self._book.learn_channel_id(room, found)
        return found

    def command_over_http(self, headers: Mapping[str, str], body: bytes) -> ingress.Answer:
        """A slash command posted to our HTTP endpoint: answered only if Slack signed it."""
        checked = slash.verify(headers, body, self._signing_secret, time.time())
        if checked.status != 200 or checked.payload is None:
            log.warning("slash command refused: %s", checked.error)
            return ingress.Answer(checked.status, {"error": checked.error})
        answer = self.slash.answer(checked.payload)
        if answer is None:
            return ingress.Answer(400, {"error": f"not a {slash.COMMAND} command"})
        return ingress.Answer(200, answer)

    def press_over_http(self, headers: Mapping[str, str], body: bytes) -> presses.Checked:
        """A press posted to our HTTP endpoint: taken only if Slack's signature holds."""
        checked = presses.verify(headers, body, self._signing_secret, time.time())
        if checked.status == 200 and checked.payload is not None:
            self.pressed(checked.payload)
        return checked

    def listen_mode(self, args: str, here: str) -> str:
        """``!theloop listen``: switch a room to hear everything, or back; list them."""
        return listen_command(
            self.listen_all, args, here, self._channel_id, direct=talk.is_direct(here)
        )

    def queue_lines(self, now: float) -> list[str]:
        """``!theloop queue``'s lines for the decisions not relayed yet."""
        return texts.queue_lines(self.relay.queue.list(), now)

    def grant_lines(self) -> list[str]:
        """``!theloop status``'s grants: each act, and who holds it."""
        return [*holders(self._policy()), *(f"warning: {w}" for w in self.grants.warnings)]

    def keyword_line(self) -> str:
        """``!theloop status``'s control keywords and where they were read from."""
        said = self.keywords
        if not said.enabled:
            return f"control keywords: switched off ({said.source})"
        words = ", ".join(
            f"{c} → `{said.of(c)}`" if said.of(c) else f"{c} → off" for c in keywords.COMMANDS
        )
        return f"control keywords ({said.source}): {words}"

    def _policy(self) -> Policy:
        settings = self._settings
        return Policy(
            self._bot_member(),
            self.grants.deciders,
            settings.people,
            self._destinations,
            collaborators=self.grants.collaborators,
            granted=settings.publish,
            roster=self.roster.snapshot(),
        )

    def _given_up(self, decision: Decision) -> None:
        """A decision parked for good: its question reopens, and what it granted goes."""
        self.desk.given_up(decision)
        self.effects.given_up(decision)

    def _known_id(self, room: str) -> str:
        """A room's id as written or as learnt, without asking Slack; else the room."""
        return room if is_channel_id(room) else self._book.channel_id(room) or room

    def _thread_link(self, work_item: str) -> str:
        """A link to the room's thread for ``work_item`` (a standing session's), ``""``."""
        found = [t for t in self._book.recent_threads() if t.work_item == work_item]
        return talk.thread_link(found[0].channel, found[0].ts) if found else ""

    def _room_facts(self, channel: str) -> tuple[str, str]:
        bound = self._book.room_bindings()
        return room_facts(channel, bound, self._settings.rooms, self._known_id)


class Observers:
    """Every part told of an event the room consumed: the memory, then the effects (a
    closure ends the work item's roster and channel move once its message is out)."""

    def __init__(self, memory: Memory, effects: Effects) -> None:
        self._memory, self._effects = memory, effects

    def observe(self, event: Event, channel: str = "", ts: str = "", thread_ts: str = "") -> None:
        self._memory.observe(event, channel, ts, thread_ts)
        self._effects.observe(event, channel, ts, thread_ts)


class LoopRoom:
    """Everything one activation runs: the inbox and its worker, the stream follower, the
    decisions — and the answers to the admin commands."""

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
        self.stores = open_stores(env, data_dir, store, (INBOX, RELAY))
        store = self.stores.state
        self.metrics = Metrics(replica=self.stores.replica)
        #: Where the HTTP server listens, or why not: the adapter sets it once it started.
        self.listening = Listening()
        # The environment's secret; on the Text backend without one, a local one.
        self._data_dir = data_dir
        self._secret = "" if env.instances else local_secret.ensure(env, data_dir, console=console)
        self._answered = Recent()  # the webhook's last answers, for the doctor
        self.book = RoomBook(store)
        self.memory = Memory(store)
        self.told = ToldBook(store)
        self.inbox = self.stores.inbox
        #: Many the-loop instances (``instances:``); None: the one of the environment.
        self.fleet = Fleet(env.instances, store, self.inbox) if env.instances else None
        self.decisions = Decisions(
            env,
            settings,
            book=self.book,
            memory=self.memory,
            cursors=Cursors(store),
            relay_queue=self.stores.relay,
            ledger=data_dir / LEDGER_FILE,
            slack=slack,
            say=say,
            bot_member=bot_member,
            metrics=self.metrics,
            grants=_grants(settings, slack, store),
            store=store,
            fleet=self.fleet,
        )
        self.worker = Worker(
            self.inbox,
            event_delivery(self._outlet(slack)),
            settled=self.metrics.delivery_settled,
            slots=env.delivery_slots,
        )
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
        self.follower = (
            StreamFollower(env.loop_stream, accept=self._admit, cursor=store)
            if env.loop_stream
            else None
        )

    @property
    def interactive(self) -> bool:
        """Whether the room's presses reach the bot (Socket Mode or HTTP): then draw buttons."""
        return bool(self.env.slack_app_token or self.env.slack_signing_secret)

    def start(self) -> None:
        self.stores.start()
        self.decisions.start()
        self.worker.start()
        if self.follower is not None:
            self.follower.start()
        if self.fleet is not None:
            self.fleet.start()

    def stop(self) -> bool:
        """Stop everything; False when the delivery worker was still busy (its item is handed
        out again, flagged, after a restart)."""
        if self.follower is not None:
            self.follower.stop()
        if self.fleet is not None:
            self.fleet.stop()
        stopped = self.worker.stop()
        self.decisions.close()
        self.stores.close()
        return stopped

    # -- what the adapter asks -------------------------------------------------------------

    def receive(self, request: ingress.Request) -> ingress.Answer:
        """``POST /theloop/events``: the-loop's signed events, stored before the answer."""
        if self.fleet is not None:
            answer = self.fleet.receive(request)
        else:
            answer = ingress.handle(request, secret=self._secret, inbox=self.inbox)
        self.metrics.answered(answer.status)
        self._answered.note(answer.status)
        return answer

    def command(self, headers: Mapping[str, str], body: bytes) -> ingress.Answer:
        """``POST /theloop/slack/commands``: ``/the-loop``, answered only if Slack signed it."""
        return self.decisions.command_over_http(headers, body)

    def press(self, headers: Mapping[str, str], body: bytes) -> ingress.Answer:
        """``POST /theloop/slack/interactive``: a press, taken only if Slack signed it."""
        checked = self.decisions.press_over_http(headers, body)
        if checked.status != 200 or checked.payload is None:
            log.warning("interactive request refused: %s", checked.error)
            return ingress.Answer(checked.status, {"error": checked.error})
        return ingress.Answer(200, {})

    def events_api(self, app: WsgiApp) -> Mount:
        """``POST /slack/events`` in HTTP mode, answered by ``app`` (the chat backend's own
        view of Slack's Events API), which is handed only what Slack signed, as strict JSON."""
        secret = self.env.slack_signing_secret
        return Mount(
            app, lambda headers, body: slack_events.admit(headers, body, secret, time.time())
        )

    def health(self) -> ingress.Answer:
        """``GET /theloop/health``: 200 when storage takes writes and both workers run."""
        problems = [problem for problem in (self.inbox.writable(),) if problem]
        if not self.worker.alive:
            problems.append("the delivery worker is not running")
        if not self.decisions.relay.alive:
            problems.append("the relay worker is not running")
        shared = self._shared_health()
        if problems:
            return ingress.Answer(503, {"status": "failing", "problems": problems, **shared})
        return ingress.Answer(200, {"status": "ok", **shared})

    def _shared_health(self) -> dict[str, Any]:
        """In the shared mode, the database and the replicas seen recently."""
        if self.stores.heartbeat is None:
            return {}
        try:
            seen = [replica.name for replica in self.stores.replicas()]
        except StorageError:
            seen = []  # the database's failure is the problem already named
        return {"store": self.stores.where, "replica": self.stores.replica, "replicas": seen}

    def metrics_text(self) -> tuple[bytes, str]:
        """``GET /theloop/metrics``: the Prometheus text exposition."""
        return self.metrics.render()

    @property
    def first_run_line(self) -> str:
        """On the Text backend with a local secret: the one line that sends an event."""
        if self._secret and not self.env.webhook_secret:
            return "Send the room an event — paste this in another shell:\n" + (
                local_secret.send_line(self.env, self._data_dir)
            )
        return ""

    def doctor(self, socket: Any) -> str:
        """``!theloop doctor``: the findings, probing on the bot's own Socket Mode client."""
        if socket is not None:
            side = SlackSide(self._slack, socket, False, bool(socket.is_connected()))
        else:
            side = SlackSide(self._slack, no_socket_why="the bot holds no Socket Mode client")
        local = bool(self._secret) and not self.env.webhook_secret
        found = examine(
            self.env,
            self.settings,
            side,
            bound=self.book.room_bindings(),
            local_secret=local,
            recent=self._answered.counts(),
        )
        if self.fleet is not None:
            relay = self.decisions.relay.queue
            found += instance_check.fleet_findings(self.fleet, self.inbox, relay, time.time())
        if self.decisions.split is not None:
            found = [*found, self.decisions.split.finding()]
        if self.decisions.sinks.jira is not None:
            found = [*found, jira_check.finding(self.decisions.sinks.jira)]
        return findings.report(found)

    def status(self, now: float) -> str:
        """``!theloop status``."""
        try:
            health = admin.Health(
                counts=self.inbox.counts(),
                last_error=self.inbox.last_error(),
                worker_alive=self.worker.alive,
                bindings=self.book.thread_count(),
            )
        except StorageError as exc:  # the one thing to say while the store is unreachable
            return f"**theloop status**\nstore: {self.stores.where} — FAILING: {exc}"
        stream = self.follower.status().describe() if self.follower else "loop stream: off"
        env = replace(self.env, webhook_secret=self._secret)  # a local secret counts
        text = admin.status_text(env, self.settings, health, now, self.listening.describe())
        text += "\n" + stream + "\n" + self._store_lines(now)
        if self.fleet is not None:
            queues = (self.inbox, self.decisions.relay.queue)
            text += "\n" + "\n".join(instance_report.status_lines(self.fleet, *queues, now))
        if self._secret != self.env.webhook_secret:
            text += "\nwebhook secret: the console's own, in the data directory (env unset)"
        text += "\n" + self.decisions.keyword_line()
        text += "\n" + self.settings.reactions.describe()
        text += "\n" + self.settings.read.describe()
        text += "\n" + listen_status(self.decisions.listen_all)
        jira = self.decisions.sinks.jira
        if jira is not None:
            credential = "missing: " + jira.missing() if jira.missing() else "set"
            text += (
                f"\njira ledger: {jira.site.site} ({jira.site.deployment}), projects "
                f"{', '.join(jira.site.projects) or 'none'}; credential {credential}"
            )
        if self.decisions.split is not None:
            text += "\n" + self.decisions.split.line()
        grants = "\n".join(f"- {line}" for line in self.decisions.grant_lines())
        return f"{text}\n\n**grants** (act: who may)\n{grants}"

    def _store_lines(self, now: float) -> str:
        """Where the state is kept; in the shared mode, the replicas seen recently."""
        line = f"store: {self.stores.where}"
        if self.stores.heartbeat is None:
            return line
        try:
            seen = self.stores.replicas()
        except StorageError as exc:
            return f"{line}\nreplicas: unknown — {exc}"
        names = ", ".join(
            f"{r.name} (this one)" if r.me else f"{r.name} (seen {max(0, now - r.seen):.0f} s ago)"
            for r in seen
        )
        return f"{line}\nreplicas seen within the lease: {names or 'none'}"

    def queue(self, args: str, now: float) -> str:
        """``!theloop queue``: list what is not delivered or relayed; retry or drop one."""
        try:
            command = admin.parse_queue_command(args)
        except admin.UsageError as exc:
            return str(exc)
        if command.action == "list":
            text = admin.queue_text(self.inbox.list(), self.inbox.depth(), now)
            relays = self.decisions.queue_lines(now)
            return text + ("\n\nDecisions not relayed yet:\n" + "\n".join(relays) if relays else "")
        queue = self.decisions.relay.queue if command.key.startswith("relay:") else self.inbox
        act = queue.retry_now if command.action == "retry" else queue.drop
        if act(command.key):
            return f"{command.action}: done for `{command.key}`."
        return f"No undelivered item `{command.key}` (see `!theloop queue`)."

    def listen_mode(self, args: str, here: str) -> str:
        """``!theloop listen``: which rooms hear every message as words to the bot."""
        return self.decisions.listen_mode(args, here)

    def why(self, args: str, now: float) -> str:
        """``!theloop why <work item>``: the room's last decisions for it, with their rules."""
        asked = args.strip()
        known = self.told.items()
        match = next((k for k in known if asked in (k, work_item_label(k))), asked)
        return admin.why_text(asked, known, self.told.why(match) if asked else [], now)

    def records(self, args: str) -> str:
        """``!theloop records <work item>``: what was recorded on its ticket from Slack."""
        return self.decisions.records.answer(args)

    def bind(self, args: str) -> str:
        """``!theloop bind``."""
        return admin.bind_command(self.book, args)

    def unbind(self, args: str) -> str:
        """``!theloop unbind``."""
        return admin.unbind_command(self.book, args)

    # -- wiring ----------------------------------------------------------------------------

    def _admit(self, event: Event) -> bool:
        return ingress.admit(self.inbox, event)

    def _outlet(self, slack: SlackTransport | None) -> Outlet:
        """Slack: rooms, threads, Block Kit through the transport; elsewhere plain text.
        Either tells the memory what it posted, which is what a decision is checked against."""
        observer = Observers(self.memory, self.decisions.effects)
        if slack is not None:
            return SlackOutlet(
                slack,
                self.book,
                self.settings,
                observer=observer,
                interactive=self.interactive,
                told=self.told,
                pulls=PullReader(self.env.github_api, self.env.github_token),
            )
        return PlainOutlet(self._post, self.book, self.settings, observer=observer)

    def _post(self, room: str | None, text: str, _thread: str | None) -> None:
        # A plain backend has no threads; without a room the admins hear it.
        targets = [room] if room else list(self._admins)
        if not targets:
            raise RuntimeError("nowhere to post: set slack.channel or THELOOP_ADMINS")
        for target in targets:
            self._say(target, text)
