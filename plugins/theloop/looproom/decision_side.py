"""The decision side of one activation, built: the desk, the relay behind it, the readers.

What people say and press is read by ``listener`` and judged by ``desk``; a decision
admitted is recorded in the relay's queue and carried to ``sinks``; ``catch_up`` reads
what was said while the bot was away; ``slash`` answers ``/the-loop``; ``opener`` opens
a work item where a room runs a kickoff. Settings that a part cannot work with (a handle
naming nobody, the-loop's keywords or Jira config unreadable) refuse the activation, naming
the file (the parts built from the settings: :mod:`looproom.decision_parts`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from looproom import decision_parts as parts
from looproom.attention.side import AttentionSide
from looproom.catchup.cursors import Cursors
from looproom.catchup.listen_modes import ListenAll
from looproom.catchup.reconcile import Reconcile
from looproom.control.loop_control import LoopControl
from looproom.decide import kinds
from looproom.decide.bounds import named_repositories, of_room
from looproom.decide.desk import Desk, Reopening
from looproom.decide.effects import Effects
from looproom.decide.policies import Policies
from looproom.doctor.split_watch import SplitWatch
from looproom.durable.contract import WorkQueue
from looproom.from_slack.channel_roles import Places
from looproom.from_slack.listener import Listener, thread_lines
from looproom.from_slack.menu_desk import MenuDesk, WhyForm
from looproom.from_slack.slash_desk import SlashDesk
from looproom.instances.fleet import Fleet
from looproom.kickoff.github import IssueMaker
from looproom.kickoff.opener import Opener
from looproom.metrics import Metrics
from looproom.relay.record_reader import RecordReader
from looproom.relay.relay import Relay
from looproom.room.channel_moves import ChannelMoves
from looproom.room.memory import Memory
from looproom.room.readers import Readers
from looproom.room.roster import Roster
from looproom.room.routing import BindingBook, ThreadBinding
from looproom.settings import Environment, Settings, read
from looproom.slack.channels import ChannelIds
from looproom.slack.queued_speaker import QueuedSpeaker
from looproom.slack.reactions import Reacting
from looproom.slack.speakers import PlainSpeaker, Say, SlackPoster, SlackSpeaker, view_opener
from looproom.slack.transport import SlackTransport
from looproom.stores import Stores


def _opener(
    env: Environment,
    settings: Settings,
    slack: SlackTransport | None,
    store: MutableMapping[str, Any] | None,
    memory: Memory,
    book: BindingBook,
    decisions: Decisions,
    queue: WorkQueue | None,
) -> Opener | None:
    """The kickoff, where a room has one and GitHub can be written; else None."""
    if slack is None or store is None or not env.github_token or not settings.kickoffs:
        return None
    if queue is None:
        return None

    def bind(work_item: str, channel: str, posted: tuple[str, ...]) -> None:
        if not posted:
            return  # the thread's message could not be posted: nothing to bind
        for ts in posted:
            memory.index(channel, ts, work_item)
        book.remember(ThreadBinding(work_item, channel, posted[0], origin="kickoff"))

    maker = IssueMaker(env.github_api, env.github_token)
    kickoff_for, policy = decisions.places.kickoff_for, decisions.policies.now
    poster, named = SlackPoster(slack), decisions.desk.bound.repository_named
    parts = (store, kickoff_for, maker, poster, policy, bind)
    return Opener(*parts, queue=queue, named=named, records=decisions.desk.records)


def _slash_desk(
    env: Environment,
    settings: Settings,
    decisions: Decisions,
    book: BindingBook,
    memory: Memory,
    store: MutableMapping[str, Any],
    fleet: Fleet | None,
) -> SlashDesk:
    """``/the-loop``'s answers, the-loop itself asked at each instance's control plane."""
    planes = fleet.planes() if fleet is not None else env.loop_api
    return SlashDesk(
        decisions.desk,
        book,
        decisions.policies.now,
        decisions.places.command_facts,
        loop_api=env.loop_api,
        kickoff=decisions.opener,
        control=LoopControl(
            planes,
            decisions.policies.now,
            store,
            decisions.places.thread_link,
            split=lambda: decisions.split.line() if decisions.split is not None else "",
            records=decisions.desk.records,
        ),
        mine=decisions.attention.mine,
        readers=decisions.readers,
    )


class Decisions:
    """The decision side: the desk, the relay behind it, and where both speak."""

    def __init__(
        self,
        env: Environment,
        settings: Settings,
        *,
        book: BindingBook,
        memory: Memory,
        relay_queue: WorkQueue,
        kickoff_queue: WorkQueue | None = None,
        ledger: Path,
        slack: SlackTransport | None,
        say: Say,
        bot_member: Callable[[], str],
        metrics: Metrics | None = None,
        store: MutableMapping[str, Any] | None = None,
        cursors: Cursors | None = None,
        fleet: Fleet | None = None,
        stores: Stores | None = None,
        admins: tuple[str, ...] = (),
    ) -> None:
        """``bot_member`` is asked at each decision: the backend learns who it is on connecting.
        ``store`` is the plugin's storage (the kickoff's claims, the members' ids, the
        rosters); ``cursors`` (in it too) say which thread messages were read already."""
        self._settings, self._slack = settings, slack
        kept: MutableMapping[str, Any] = store if store is not None else {}
        grants = parts.grants(settings, slack, kept)
        self.keywords = parts.relay_keywords(env, settings)
        self.sinks = parts.sinks(env, settings, self.keywords, ledger, slack, fleet, kept)
        #: ``!theloop records``: read back from the ticket, for work items the room follows.
        sinks = self.sinks
        self.records = RecordReader(sinks.ledger, sinks.github, sinks.jira, known=memory.knows)
        # On Slack, said off the caller's thread: a press is answered within Slack's
        # 3 s, and the desk's lock is never held across a Slack call.
        self._voice = QueuedSpeaker(SlackSpeaker(slack)) if slack is not None else None
        room = Reacting(self._voice or PlainSpeaker(say), settings.reactions)
        self.cursors = cursors if cursors is not None else Cursors({})
        self.roster = Roster(kept)
        #: The rooms an admin switched to hear every message as words to the bot.
        self.listen_all = ListenAll(kept)
        self.places = Places(
            book,
            ChannelIds(book, slack),
            default_room=settings.channel,
            rooms=settings.rooms,
            kickoffs=settings.kickoffs,
            listening=self.listen_all.rooms,
        )
        destinations = self.sinks.available(settings.relay_repos)
        #: Who may read about a work item: a member of a room it lives in, or an admin.
        self.readers = Readers(
            book, self.places.ids.known, slack.members if slack is not None else None, admins
        )
        self.policies = Policies(
            bot_member,
            grants,
            people=settings.people,
            destinations=destinations,
            granted=settings.publish,
            rosters=self.roster.snapshot,
        )
        #: What a collaborator or channel command changes here, and what an ending ends.
        moves = ChannelMoves(kept, book, room.reply, self.places.ids.known)
        self.effects = Effects(
            self.roster,
            moves,
            settings.people,
            listen=lambda room, mode: self.listen_all.switch(self.places.ids.known(room), mode),
        )
        self.way_in = read.way_of(settings.read, env)  # Socket Mode, the Events API, or a poll
        self.attention = AttentionSide(  # the asks on record, and who is told of them
            settings,
            kept,
            self.policies.now,
            self.places.ids.known,
            stores.asks if stores is not None else None,
            memory.get,
            queue=stores.attention if stores is not None else None,
            slack=slack,
            metrics=metrics,
            taps=self.way_in != read.POLL,  # polling, no press would reach the bot
        )
        self.relay = Relay(  # a parked decision reopens its question: answered again
            relay_queue,
            self.sinks,
            room,
            parked=Reopening(memory, self.attention.given_up(self.effects.given_up)),
            stamp=kinds.restamped,
            observe=metrics.relay_settled if metrics is not None else lambda _i, _o: None,
            slots=env.delivery_slots,
            notice_after=env.relay_notice_seconds,
            give_up_after=env.relay_give_up_seconds,
            records=stores.room_records if stores is not None else None,
        )
        claimed = [repo for i in fleet.instances for repo in i.claims.repos] if fleet else []
        self.desk = Desk(
            memory,
            self.relay,
            room,
            self.policies.now,
            cursors=self.cursors,
            thread_lines=thread_lines(slack, bot_member),
            recorded=self.attention.recorded(self.effects.recorded),
            vet=self.effects.refusal,
            ask_why=WhyForm(memory, view_opener(slack)),
            find_room=self.places.ids.find if slack is not None else lambda name: (name, ""),
            bound=of_room(memory, book, named_repositories(settings, claimed), destinations.jira),
            records=stores.room_records if stores is not None else None,
            later=lambda said, where: self.menus.later(said, where),
        )
        self.menus = MenuDesk(self.desk, view_opener(slack), self.policies.now, kept)
        if self.sinks.files is not None:  # a reply's files fetched: counted in the-loop's log
            self.sinks.files.records = self.desk.records
        self.opener = _opener(env, settings, slack, store, memory, book, self, kickoff_queue)
        if self.opener is not None:  # who asked owns it, and the instance registering them
            learn = self.attention.feed.whom.owners.learn
            self.opener.opening.owned = fleet.on_opened(learn, settings.people) if fleet else learn
        self.listener = Listener(
            self.desk,
            self.menus,
            self.places,
            self.policies,
            bot_member=bot_member,
            listen_all=self.listen_all,
            opener=self.opener,
            direct_press=self.attention.pressed,
        )
        #: What was missed, or (polling) all it hears: fed to the listener, so judged once.
        self.catch_up = parts.catch_up(
            slack, book, self.listener, self.cursors, self.places, self.desk.records
        )
        self.split: SplitWatch | None = None  # the listener's own check, on Socket Mode
        self.reconcile = Reconcile(
            self.catch_up.run if self.catch_up is not None else lambda: 0,
            read.seconds_between(settings.read, self.way_in),
            check=lambda: self.split.check() if self.split is not None else None,
        )
        self.slash = _slash_desk(env, settings, self, book, memory, kept, fleet)

    def start(self) -> None:
        self.relay.start()
        if self.opener is not None:
            self.opener.start()  # what a bot that died left unopened is opened now
        # What a bot that died left unrecorded, recorded now: a Slack read, off the start.
        if self.menus.contexts_waiting():
            threading.Thread(target=self.menus.resume, name="theloop-contexts", daemon=True).start()
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
            lambda: self.places.ids.of(room) if room else "",
            socket,
            self._settings.read.split_check_beats,
            records=self.desk.records,
        )

    def reconnected(self) -> None:
        """Slack's connection is (re)established: read what was said while it was not."""
        if self.catch_up is not None:
            self.catch_up.soon()

    def close(self) -> None:
        # The catch-up first: a reconcile cycle inside it ends at its next wait, so the
        # reconcile's join below is short, and no cycle outlives the stores.
        if self.catch_up is not None:
            self.catch_up.stop()
        self.reconcile.stop()
        self.relay.stop()
        self.relay.queue.close()
        if self.opener is not None:
            self.opener.stop()
        if self._voice is not None:
            self._voice.close()  # after the relay: its last ✅ is said too
