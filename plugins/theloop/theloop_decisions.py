"""The Errbot side of decisions (issue 4): commands, thread replies, presses — no rules here.

A mixin of :class:`theloop.TheLoop`, kept beside it like ``theloop_routes``: it turns what
Errbot and the SlackV3 backend hand us (a ``Message``, a Socket Mode request, a signed
HTTP request) into :mod:`looproom` values and hands them to the decision desk
(:class:`looproom.decide.desk.Desk`); every rule lives in ``looproom``. The backend does not
route interactive payloads (DESIGN §4), so a listener is attached to its
``SocketModeClient`` and an HTTP endpoint verifies Slack's signature.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from errbot import botcmd, webhook
from flask import Request, Response

from looproom.decide import kinds, presses
from looproom.decide.authorization import Policy
from looproom.decide.decision import Decision
from looproom.decide.desk import Desk, room_facts
from looproom.decide.judging import Said
from looproom.durable.queue import DurableQueue
from looproom.relay import forms, relay, texts
from looproom.relay.sinks import GitHubSink, LedgerSink, LoopSink, Sinks
from looproom.room.memory import Memory
from looproom.room.queued_room import QueuedRoom
from looproom.room.routing import RoomBook
from looproom.room.slack_transport import SlackTransport, is_channel_id
from looproom.settings import Environment, Settings

_GLYPHS = {"eyes": "👀", "white_check_mark": "✅", "warning": "⚠️"}


class SlackRoom:
    """The desk's and the relay's voice on Slack: reactions, threads, ephemerals, edits."""

    def __init__(self, transport: SlackTransport) -> None:
        self._slack = transport

    def react(self, channel: str, ts: str, name: str) -> None:
        if ts:
            self._slack.add_reaction(channel, ts, name)

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._slack.post_message(channel, text=text, thread_ts=thread_ts or None)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._slack.post_ephemeral(channel, member, text=text, thread_ts=thread_ts or None)

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self._slack.update_message(channel, ts, text=text, blocks=blocks)


class PlainRoom:
    """The same on a chat backend without reactions or threads (Text, Test): plain lines."""

    def __init__(self, plugin: Any) -> None:
        self._plugin = plugin

    def _say(self, to: str, text: str) -> None:
        self._plugin.send(self._plugin.build_identifier(to), text)

    def react(self, channel: str, ts: str, name: str) -> None:
        self._say(channel, _GLYPHS.get(name, f":{name}:"))

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._say(channel, text)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._say(member, text)

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        return  # nothing to edit: a plain backend has no buttons


def member_of(identifier: Any) -> str:
    """A Slack member id (``userid``), else the backend's person string (Test, Text)."""
    return str(getattr(identifier, "userid", "") or getattr(identifier, "person", "") or "")


class Decisions:
    """Mixin: the decision desk, its relay and the Slack interactivity listeners."""

    # Errbot's help lists commands under the class that defines them.
    __errdoc__ = "Decisions for the-loop: execute, skip, approve, changes (authorized members)."

    _desk: Desk | None = None
    #: The room's memory, shared with the delivery outlet (which tells it what it posted).
    _memory: Memory | None = None
    #: Whether the room's presses reach the bot (Socket Mode or HTTP): then draw buttons.
    _interactive: bool = False
    _relay: relay.Relay | None = None
    _listener: Any = None
    #: On Slack, what the desk and the relay say goes through one worker thread.
    _voice: QueuedRoom | None = None

    # -- lifecycle (called from TheLoop.activate / deactivate) ----------------------------

    def _decisions_open(
        self, env: Environment, settings: Settings, data_dir: Path, slack: SlackTransport | None
    ) -> None:
        memory = Memory(self)  # type: ignore[arg-type] - the plugin is Errbot's storage
        self._memory = memory
        self._interactive = bool(env.slack_app_token or env.slack_signing_secret)
        sinks = Sinks(
            ledger=LedgerSink(data_dir / "relay-ledger.jsonl"),
            github=GitHubSink(env.github_api, env.github_token) if env.github_token else None,
            loop=LoopSink(env.loop_api) if env.loop_api else None,
        )
        # On Slack, said off the caller's thread: a press is answered within Slack's
        # 3 s, and the desk's lock is never held across a Slack call.
        room: QueuedRoom | PlainRoom
        if slack is not None:
            room = self._voice = QueuedRoom(SlackRoom(slack))
        else:
            room = PlainRoom(self)
        queue = DurableQueue(data_dir / "queues.sqlite3", relay.RELAY)
        self._relay = relay.Relay(queue, sinks, room, on_given_up=self._given_up)
        self._desk = Desk(memory, self._relay, room, self._policy)
        self._relay.start()
        self._listen_socket_mode()

    def _decisions_close(self) -> None:
        socket = getattr(self._bot, "slack_socket_mode", None)  # type: ignore[attr-defined]
        if socket is not None and self._listener in socket.socket_mode_request_listeners:
            socket.socket_mode_request_listeners.remove(self._listener)
        if self._relay is not None:
            self._relay.stop()
            self._relay.queue.close()
        if self._voice is not None:
            self._voice.close()  # after the relay: its last ✅ is said too
        self._desk = self._relay = self._memory = self._listener = self._voice = None
        self._interactive = False

    def _given_up(self, decision: Decision) -> None:
        if self._desk is not None:
            self._desk.given_up(decision)

    def _policy(self) -> Policy:
        settings: Settings = self._settings  # type: ignore[attr-defined]
        env: Environment = self._env  # type: ignore[attr-defined]
        destinations = forms.Destinations(
            github=bool(env.github_token), loop=bool(env.loop_api), repos=settings.relay_repos
        )
        own = member_of(self.bot_identifier)  # type: ignore[attr-defined]
        return Policy(own, settings.authorized_users, settings.people, destinations)

    # -- typed: commands and plain messages -------------------------------------------------

    @botcmd
    def execute(self, msg: Any, args: str) -> None:
        """`execute` · `execute without 2, 5` — answer the phase-selection checklist."""
        self._typed(msg, f"execute {args}", addressed=True)

    @botcmd
    def skip(self, msg: Any, args: str) -> None:
        """`skip <phase>[, <phase>…]` — leave phases out (before or after the selection)."""
        self._typed(msg, f"skip {args}", addressed=True)

    @botcmd
    def approve(self, msg: Any, args: str) -> None:
        """`approve [words]` — approve the open gate."""
        self._typed(msg, f"approve {args}", addressed=True)

    @botcmd
    def changes(self, msg: Any, args: str) -> None:
        """`changes <why>` — request changes at the open gate (a reason is required)."""
        self._typed(msg, f"changes {args}", addressed=True)

    def callback_message(self, msg: Any) -> None:
        """A plain message: a command typed without `!`, or an answer in a work item's thread."""
        if self._desk is None or self._is_command(msg):
            return
        self._typed(msg, str(msg.body or ""), addressed=False)

    def _is_command(self, msg: Any) -> bool:
        """Whether Errbot already runs this message as a command (then it is not ours here)."""
        config = self.bot_config  # type: ignore[attr-defined]
        text = str(msg.body or "").strip()
        prefixes = (config.BOT_PREFIX, *getattr(config, "BOT_ALT_PREFIXES", ()))
        if any(text.lower().startswith(p.lower()) for p in prefixes if p):
            return True
        first = text.split(None, 1)[0].lower() if text else ""
        optional = getattr(config, "BOT_PREFIX_OPTIONAL_ON_CHAT", False) and msg.is_direct
        return bool(optional and first in kinds.VERBS)

    def _typed(self, msg: Any, text: str, *, addressed: bool) -> None:
        desk = self._desk
        if desk is None:
            return
        event = (msg.extras or {}).get("slack_event") or {}
        channel = str(event.get("channel") or "") or _plain_channel(msg)
        ts = str(event.get("ts") or "") or f"plain-{time.time_ns()}"
        thread_ts = str(event.get("thread_ts") or "")
        is_bot = bool(event.get("bot_id")) or event.get("subtype") == "bot_message"
        said = Said(
            member_of(msg.frm),
            text.strip(),
            channel,
            ts,
            thread_ts,
            is_bot,
            addressed,
            subtype=str(event.get("subtype") or ""),
        )
        desk.said(said, desk.where(channel, thread_ts, *self._room_facts(channel)))

    def _room_facts(self, channel: str) -> tuple[str, str]:
        book = RoomBook(self)  # type: ignore[arg-type]
        settings: Settings = self._settings  # type: ignore[attr-defined]

        def id_of(room: str) -> str:
            return room if is_channel_id(room) else book.channel_id(room) or room

        return room_facts(channel, book.room_bindings(), settings.rooms, id_of)

    # -- presses: Socket Mode and HTTP -------------------------------------------------------

    def _listen_socket_mode(self) -> None:
        socket = getattr(self._bot, "slack_socket_mode", None)  # type: ignore[attr-defined]
        if socket is None:
            return

        def on_request(client: Any, request: Any) -> None:
            if request.type != "interactive":
                return
            from slack_sdk.socket_mode.response import SocketModeResponse

            # Ack first (Slack wants it within 3 s); the backend may have acked too.
            client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
            if self._desk is not None:
                self._desk.pressed(request.payload)

        self._listener = on_request
        socket.socket_mode_request_listeners.append(on_request)

    @webhook("/theloop/slack/interactive", methods=("POST",), raw=True)
    def theloop_slack_interactive(self, request: Request) -> Response:
        """``POST /theloop/slack/interactive``: Slack's signed button and checkbox presses."""
        env: Environment | None = self._env  # type: ignore[attr-defined]
        if self._desk is None or env is None:
            return Response('{"error": "theloop is not active"}', status=503)
        body = request.stream.read(presses.MAX_BODY_BYTES + 1)
        checked = presses.verify(dict(request.headers), body, env.slack_signing_secret, time.time())
        if checked.status != 200 or checked.payload is None:
            self.log.warning("interactive request refused: %s", checked.error)  # type: ignore[attr-defined]
            return Response(checked.error, status=checked.status, mimetype="text/plain")
        self._desk.pressed(checked.payload)
        return Response("", status=200)

    # -- admin ------------------------------------------------------------------------------

    def _relay_queue_lines(self) -> list[str]:
        if self._relay is None:
            return []
        return texts.queue_lines(self._relay.queue.list(), time.time())


def _plain_channel(msg: Any) -> str:
    """Where to answer on a plain backend: the room, else the person."""
    room = getattr(msg.frm, "room", None)
    return str(room) if room is not None else str(msg.frm)
