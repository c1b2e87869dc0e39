"""The Errbot adapter for theloop: commands, the HTTP server and listeners, handed to the core.

Every rule lives in the pure ``looproom`` package, which never imports Errbot, so it is
tested without a bot (docs/architecture.md). ``activate`` builds this activation's one
:class:`looproom.assembly.Activation` from what only Errbot has — its storage, its data
directory, the backend's Slack client or its ``send``, who the bot is — and each command
below passes what it received on to that object. The typed verbs are not methods here: one
``!verb`` command per row of the decision kinds' table is registered through Errbot's
dynamic plugins on activation. The HTTP routes are the core's own
server (``looproom.server``), not Errbot's Webserver: ``activate`` starts it on
``THELOOP_HTTP_HOST``/``THELOOP_HTTP_PORT`` once the room can take requests, and
``deactivate`` stops it first.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import theloop_decisions as chat
from errbot import BotPlugin, Command, arg_botcmd, botcmd, core_plugins

# Errbot puts every folder holding a .plug file on sys.path, so the core imports plainly.
from looproom import configured, manifest, people
from looproom.admin import text as admin_text
from looproom.assembly import Activation
from looproom.decide import kinds
from looproom.decide.kind_row import DecisionKind
from looproom.inbound import slack_events
from looproom.inbound import webhook as ingress
from looproom.server.app import App, Mount
from looproom.server.runner import HttpServer, Listening
from looproom.settings import ConfigError, Environment, Settings
from looproom.slack.kept_limits import FILE_NAME as KEPT_LIMITS
from looproom.slack.kept_limits import Keeper, KeptLimits, KeptPacer
from looproom.slack.transport import SlackTransport

NOT_ACTIVE = "theloop is not active: see `!status plugins` and the bot's log."
#: The Errbot plugin the typed verbs are registered under, one command per row of
#: ``looproom.decide.kinds`` (``!help TheLoopVerbs``; an ACL names ``TheLoopVerbs:approve``).
VERBS_PLUGIN = "TheLoopVerbs"
VERBS_DOC = "the-loop's decisions and control verbs, typed: each is also read without the `!`."


class TheLoop(BotPlugin):
    """the-loop's room: its events in rooms and threads; decisions and control verbs
    (execute, skip, approve, changes, start, stop, …) taken back from the members granted them."""

    _core: Activation | None = None
    _unlisten: Callable[[], None] | None = None
    _unlisten_commands: Callable[[], None] | None = None
    _http: HttpServer | None = None

    def activate(self) -> None:
        """Load the settings, then build and start the room; refuse on a bad configuration."""
        env, settings = self._configuration()
        super().activate()  # opens the plugin's storage, which the room keeps its state in
        slack_web = getattr(self._bot, "slack_web", None)
        data_dir = Path(self.bot_config.BOT_DATA_DIR) / "theloop"
        kept = Keeper(data_dir / KEPT_LIMITS)
        # One transport for every Slack call, so deliveries and decision replies share one
        # per-channel pace and one 429 hold; its channels' posts and its method budgets
        # outlive a restart; the history methods at the pace the app has (slack.read.app).
        slack = None
        if slack_web is not None:
            slack = SlackTransport.beside(
                slack_web,
                base_url=env.slack_api_url,
                pacer=KeptPacer(kept),
                limits=KeptLimits(kept, settings.read.history_tiers()),
            )
            slack.history_page = settings.read.history_page()
        core = Activation(
            env,
            settings,
            store=self,
            data_dir=data_dir,
            slack=slack,
            say=self._say,
            admins=tuple(self.bot_config.BOT_ADMINS),
            bot_member=lambda: chat.member_of(self.bot_identifier),
            console=self._on_console(),
        )
        core.start()
        self._core = core
        unpress = chat.listen_for_presses(self._bot, self._pressed)
        unhello = chat.listen_for_connections(self._bot, core.decisions.reconnected)
        unhome = chat.listen_for_home(self._bot, core.decisions.attention.home_opened)
        core.decisions.listen(getattr(self._bot, "slack_socket_mode", None))
        self._unlisten = lambda: (unpress(), unhello(), unhome())
        self._unlisten_commands = chat.listen_for_commands(self._bot, self._commanded)
        self._http = HttpServer(App(core.routes, self._mounts(core)))
        listening = core.admin.listening = self._http.start(env.http_host, env.http_port)
        if listening.error:
            self._cannot_listen(listening)
        else:
            self.log.info("theloop http server %s", listening.describe())
        if core.first_run_line:  # the Text backend's console: show how to send an event
            for admin_id in self.bot_config.BOT_ADMINS:
                self._say(admin_id, core.first_run_line)
        self.create_dynamic_plugin(VERBS_PLUGIN, self._verb_commands(), doc=VERBS_DOC)

    def _mounts(self, core: Activation) -> dict[str, Mount]:
        """SlackV3 without an app token runs Slack's Events API: it registers its view on
        Errbot's Flask app, which nothing else serves, so this server serves it at its path."""
        if getattr(self._bot, "slack_events", None) is None:
            return {}
        return {slack_events.PATH: core.routes.events_api(core_plugins.flask_app)}

    def _cannot_listen(self, listening: Listening) -> None:
        """Loudly: the log, and each admin, since the-loop's events now reach nobody."""
        text = (
            f"theloop {listening.describe()} — the webhook and Slack's presses are unreachable; "
            "free the port or fix THELOOP_HTTP_HOST/THELOOP_HTTP_PORT, then "
            "`!plugin reload TheLoop`."
        )
        self.log.error(text)
        for admin_id in self.bot_config.BOT_ADMINS:
            try:
                self._say(admin_id, text)
            except Exception:  # telling must not take the bot down: the log has it
                self.log.exception("theloop could not tell %s", admin_id)

    def _configuration(self) -> tuple[Environment, Settings]:
        try:
            env, settings = configured.read(os.environ)
        except ConfigError as exc:
            self.log.error("theloop refuses to activate, fix the configuration: %s", exc)
            raise
        for warning in (*env.warnings, *settings.warnings):
            self.log.warning("theloop config: %s", warning)
        if not env.webhook_secret and not self._on_console():
            self.log.error(
                "theloop webhook answers 503 until %s is set (fail closed)", ingress.SECRET_ENV
            )
        return env, settings

    def _on_console(self) -> bool:
        """Errbot's Text backend: one person at a console, where a local secret is safe."""
        return getattr(self.bot_config, "BACKEND", "") == "Text"

    def deactivate(self) -> None:
        """Stop taking requests, then stop the room (an item cut short is delivered again,
        flagged, after a restart)."""
        if self._http is not None:
            self._http.stop()
            self._http = None
        if self._unlisten is not None:
            self._unlisten()
        if self._unlisten_commands is not None:
            self._unlisten_commands()
        if VERBS_PLUGIN in self._dynamic_plugins:
            self.destroy_dynamic_plugin(VERBS_PLUGIN)
        core, self._core, self._unlisten = self._core, None, None
        self._unlisten_commands = None
        if core is not None and not core.stop():
            self.log.warning("theloop delivery worker still busy at deactivation")
        super().deactivate()

    def _say(self, to: str, text: str) -> None:
        # Errbot's send threads only under a Message it received: a plain line has no thread.
        if not self._on_slack():  # Slack draws its mentions; a plain chat shows them raw
            text = people.plain_mentions(text, self._shown)
        self.send(self._addressee(to), text)

    def _on_slack(self) -> bool:
        return getattr(self._bot, "slack_web", None) is not None

    def _addressee(self, to: str) -> Any:
        """A room, an admin or a member as the backend builds it. On Slack an admin may be
        written as a member id, which SlackV3 builds a person from only as a mention. A
        member is known by the id ``chat.member_of`` gave, which on the Text console is the
        bare person (``localhost``) while that backend builds a person only from
        ``@localhost``."""
        if self._on_slack():
            return self.build_identifier(people.addressee(to, slack=True))
        try:
            return self.build_identifier(to)
        except ValueError:
            if to.startswith(("#", "@")):
                raise
            return self.build_identifier(people.addressee(to, slack=False))

    def _shown(self, member: str) -> str:
        """A member as this chat backend shows a person (``@localhost`` on the console)."""
        try:
            return str(self._addressee(member))
        except ValueError:
            return f"@{member}"

    def _commanded(self, payload: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return self._core.decisions.slash.answer(payload) if self._core is not None else None

    def _pressed(self, payload: Mapping[str, Any], taken: Callable[[], None]) -> None:
        if self._core is not None:
            self._core.decisions.listener.pressed(payload, taken)

    # -- theloop's own commands -------------------------------------------------------------

    @botcmd(name="theloop")
    def theloop(self, _msg: Any, _args: str) -> str:
        """What theloop does here, and where to start."""
        return admin_text.ABOUT

    @arg_botcmd("text", type=str, nargs="+", help="markdown to draw as the room would")
    @arg_botcmd("--limit", type=int, default=1500, help="characters (200-3000)")
    def theloop_preview(self, _msg: Any, text: list[str], limit: int) -> str:
        """Show the mrkdwn the room would post for a message (the digest above the limit)."""
        return admin_text.preview_text(" ".join(text), limit)

    @botcmd
    def theloop_manifest(self, _msg: Any, args: str) -> str:
        """The Slack app's manifest: `manifest [--name NAME] [--http https://public.host]`."""
        me = self.bot_identifier  # on Slack its display name; elsewhere a nick, if any
        name = getattr(me, "username", "") or getattr(me, "nick", "") or ""
        return manifest.command(args, str(name))

    @botcmd(admin_only=True)
    def theloop_status(self, _msg: Any, _args: str) -> str:
        """Resolved configuration (secrets as set/unset), queue depth, last delivery error."""
        return self._core.admin.status(time.time()) if self._core else NOT_ACTIVE

    @botcmd(admin_only=True)
    def theloop_doctor(self, _msg: Any, _args: str) -> str:
        """Why the room may be silent: token, scopes, rooms, events, peers — with remedies."""
        if self._core is None:
            return NOT_ACTIVE
        return self._core.admin.doctor(getattr(self._bot, "slack_socket_mode", None))

    @botcmd(admin_only=True)
    def theloop_queue(self, _msg: Any, args: str) -> str:
        """Undelivered events: `list` (default), `retry KEY` (now), `drop KEY` (give up)."""
        return self._core.admin.queue(args, time.time()) if self._core else NOT_ACTIVE

    @botcmd
    def theloop_why(self, msg: Any, args: str) -> str:
        """Where did my message go: the room's last decisions for `why <work item>`."""
        return (
            self._core.admin.why(args, time.time(), chat.asker_of(msg))
            if self._core
            else NOT_ACTIVE
        )

    @botcmd(admin_only=True)
    def theloop_asks(self, _msg: Any, args: str) -> str:
        """What waited on people: `!theloop asks [<work item> | --since 4h]`."""
        return self._core.admin.asks(args) if self._core else NOT_ACTIVE

    @botcmd
    def theloop_records(self, msg: Any, args: str) -> str:
        """What was recorded on a work item's ticket from Slack: `records <work item>`."""
        return self._core.admin.records(args, chat.asker_of(msg)) if self._core else NOT_ACTIVE

    @botcmd(admin_only=True)
    def theloop_bind(self, _msg: Any, args: str) -> str:
        """A room of its own for a work item: `bind <work item> <room>`; alone: list them."""
        return self._core.admin.bind(args) if self._core else NOT_ACTIVE

    @botcmd(admin_only=True)
    def theloop_listen(self, msg: Any, args: str) -> str:
        """What a room hears: `listen all [room]` (every message in a work item's thread is a
        reply to it), `listen addressed [room]` (only a mention, the default); alone: list."""
        here = str(chat.slack_event(msg).get("channel") or "") or chat.plain_channel(msg)
        return self._core.admin.listen(args, here) if self._core else NOT_ACTIVE

    @botcmd(admin_only=True)
    def theloop_threads(self, _msg: Any, args: str) -> str:
        """Which room and thread carries each work item: `threads [<work item>]`."""
        return self._core.admin.threads(args) if self._core else NOT_ACTIVE

    @botcmd(admin_only=True)
    def theloop_unbind(self, _msg: Any, args: str) -> str:
        """A work item's events go to its configured room again: `unbind <work item>`."""
        return self._core.admin.unbind(args) if self._core else NOT_ACTIVE

    # -- decisions, typed: one `!verb` per row of looproom.decide.kinds ---------------------

    def _verb_commands(self) -> tuple[Command, ...]:
        """Each kind's ``!verb`` command, from its row: registered on activation."""
        return tuple(
            Command(self._verb_command(kind), name=kind.verb, doc=kind.usage)
            for kind in kinds.COMMANDS
        )

    def _verb_command(self, kind: DecisionKind) -> Callable[[Any, Any, str], None]:
        def command(_plugin: Any, msg: Any, args: str) -> None:
            words = chat.raw_after(msg, kind.verb, args) if kind.mentions else args
            self._typed(msg, f"{kind.verb} {words}", addressed=True)

        return command

    def callback_message(self, msg: Any) -> None:
        """A plain message: a command typed without `!`, or an answer in a work item's thread."""
        if not chat.is_command(msg, self.bot_config):
            self._typed(msg, str(msg.body or ""), addressed=False)

    def _typed(self, msg: Any, text: str, *, addressed: bool) -> None:
        if self._core is not None:
            self._core.decisions.listener.said(
                chat.member_of(msg.frm),
                text,
                chat.slack_event(msg),
                elsewhere=chat.plain_channel(msg),
                addressed=addressed,
            )

    def callback_reaction(self, reaction: Any) -> None:
        """A reaction (SlackV3 hands each ``reaction_added``): 👀 on an open ask claims it."""
        item = getattr(reaction, "reacted_to", None) or {}
        if self._core is None or getattr(reaction, "action", "") != "added":
            return
        if not isinstance(item, dict) or item.get("type") != "message":
            return
        self._core.decisions.attention.reacted(
            chat.member_of(reaction.reactor),
            str(item.get("channel") or ""),
            str(item.get("ts") or ""),
            str(reaction.reaction_name or ""),
        )
