"""The Errbot adapter for theloop: commands, webhooks and timers call into ``looproom``.

This file holds no business logic (DESIGN §2): every rule lives in the pure ``looproom``
package, which never imports errbot, so it is tested without a bot.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import theloop_routes
from errbot import BotPlugin, arg_botcmd, botcmd, webhook
from flask import Request, Response
from theloop_decisions import Decisions  # decisions back to the-loop (issue 4)

# Errbot puts every folder holding a .plug file on sys.path, so the core imports plainly.
from looproom import admin, digest
from looproom.durable.queue import DurableQueue
from looproom.durable.worker import Worker
from looproom.inbound import webhook as ingress
from looproom.inbound.stream import StreamFollower  # issue 5: the-loop's event stream
from looproom.room.outlets import (  # rooms/threads wiring
    Outlet,
    PlainOutlet,
    SlackOutlet,
    event_delivery,
)
from looproom.room.routing import RoomBook, bind_command, unbind_command  # rooms/threads wiring
from looproom.room.slack_transport import SlackTransport  # rooms/threads wiring
from looproom.settings import ConfigError, Environment, Settings

INBOX = "inbox"


class TheLoop(Decisions, BotPlugin):
    """the-loop's room in Errbot."""

    _env: Environment | None = None
    _settings: Settings | None = None
    _queue: DurableQueue | None = None
    _worker: Worker | None = None
    _follower: StreamFollower | None = None

    def activate(self) -> None:
        """Load settings, open the inbox, start delivering (§3.2); refuse on a bad config."""
        try:
            env = Environment.from_env(os.environ)
            settings = Settings.load(env.config_path)
        except ConfigError as exc:
            self.log.error("theloop refuses to activate, fix the configuration: %s", exc)
            raise
        for warning in settings.warnings:
            self.log.warning("theloop config: %s", warning)
        if not env.webhook_secret:
            self.log.error(
                "theloop webhook answers 503 until %s is set (fail closed)", ingress.SECRET_ENV
            )
        super().activate()
        self._env, self._settings = env, settings
        data_dir = Path(self.bot_config.BOT_DATA_DIR) / "theloop"
        self._queue = DurableQueue(data_dir / "queues.sqlite3", INBOX)
        # One transport for every Slack call, so deliveries and decision replies share
        # one per-channel pace and one 429 hold (DESIGN §2: one transport).
        slack_web = getattr(self._bot, "slack_web", None)
        slack = SlackTransport.beside(slack_web) if slack_web is not None else None
        self._decisions_open(env, settings, data_dir, slack)  # before the outlet is built
        self._worker = Worker(self._queue, event_delivery(self._outlet(settings, slack)))
        self._worker.start()
        self._follower = self._follow(env.loop_stream, self._queue)
        theloop_routes.activate(self)

    def _follow(self, url: str, inbox: DurableQueue) -> StreamFollower | None:
        """Issue 5: the-loop's stream as a second ingress into the same inbox (off unless set)."""
        if not url:
            return None
        # The plugin's storage keeps the cursor, so a restart resumes from the last id.
        follower = StreamFollower(
            url, accept=lambda event: ingress.admit(inbox, event), cursor=self
        )
        follower.start()
        return follower

    def deactivate(self) -> None:
        """Stop the worker (an item cut short is re-delivered, flagged, after restart)."""
        theloop_routes.deactivate(self)
        if self._follower is not None:
            self._follower.stop()
            self._follower = None
        if self._worker is not None and not self._worker.stop():
            self.log.warning("theloop delivery worker still busy at deactivation")
        self._decisions_close()  # issue 4
        if self._queue is not None:
            self._queue.close()
        self._worker = self._queue = None
        super().deactivate()

    # -- rooms/threads wiring (looproom.room.outlets) ------------------------------------------
    def _outlet(self, settings: Settings, slack: SlackTransport | None) -> Outlet:
        """Slack: rooms, threads, Block Kit through the transport; elsewhere plain text."""
        book = RoomBook(self)  # the plugin is Errbot's storage: bindings survive restarts
        memory = self._memory  # issue 4: the room's memory learns each event and where it went
        if slack is not None:
            return SlackOutlet(
                slack, book, settings, observer=memory, interactive=self._interactive
            )
        return PlainOutlet(self._post, book, settings, observer=memory)

    def _post(self, room: str | None, text: str, _thread: str | None) -> None:
        # Errbot's send threads only under a Message it received; a console has no threads.
        targets = [room] if room else list(self.bot_config.BOT_ADMINS)
        if not targets:
            raise RuntimeError("nowhere to post: set slack.channel or THELOOP_ADMINS")
        for target in targets:
            self.send(self.build_identifier(target), text)

    @botcmd(admin_only=True)
    def theloop_bind(self, _msg: Any, args: str) -> str:
        """A room of its own for a work item: `bind <work item> <room>`; alone: list them."""
        return bind_command(RoomBook(self), args)

    @botcmd(admin_only=True)
    def theloop_unbind(self, _msg: Any, args: str) -> str:
        """A work item's events go to its configured room again: `unbind <work item>`."""
        return unbind_command(RoomBook(self), args)

    # -- end rooms/threads wiring -----------------------------------------------------------

    @webhook("/theloop/events", methods=("POST",), raw=True)
    def theloop_events(self, request: Request) -> Response:
        """``POST /theloop/events``: the-loop's signed events (DESIGN §3.2)."""
        queue, env = self._queue, self._env
        if queue is None or env is None:
            return _json(ingress.Answer(503, {"error": "theloop is not active"}))
        length = request.content_length
        # Read at most one byte past the limit: enough to know it is too large.
        too_large = ingress.body_too_large(length)
        body = b"" if too_large else request.stream.read(ingress.MAX_BODY_BYTES + 1)
        answer = ingress.handle(
            ingress.Request(request.method, request.headers, body, length),
            secret=env.webhook_secret,
            inbox=queue,
        )
        return _json(answer, close=too_large)

    @botcmd(name="theloop")
    def theloop(self, _msg: Any, _args: str) -> str:
        """What theloop does here, and where to start."""
        return (
            "theloop posts the-loop's events into rooms and threads and carries decisions back. "
            "Try `!theloop preview <markdown>` to see how a long message is drawn; admins: "
            "`!theloop status`, `!theloop queue`."
        )

    @arg_botcmd("text", type=str, nargs="+", help="markdown to draw as the room would")
    @arg_botcmd("--limit", type=int, default=1500, help="characters (200-3000)")
    def theloop_preview(self, _msg: Any, text: list[str], limit: int) -> str:
        """Show the mrkdwn the room would post for a message (the digest above the limit, R1.1).

        The answer is fenced so every backend shows Slack's markup as it is, not re-rendered.
        """
        drawn = digest.fit(" ".join(text), max(200, min(limit, 3000)))
        return "```\n" + drawn.replace("```", "`\u200b`\u200b`") + "\n```"

    @botcmd(admin_only=True)
    def theloop_status(self, _msg: Any, _args: str) -> str:
        """Resolved configuration (secrets as set/unset), queue depth, last delivery error."""
        if self._queue is None or self._env is None or self._settings is None:
            return "theloop is not active: see `!status plugins` and the bot's log."
        health = admin.Health(
            counts=self._queue.counts(),
            last_error=self._queue.last_error(),
            worker_alive=self._worker is not None and self._worker.alive,
            bindings=RoomBook(self).thread_count(),
        )
        stream = self._follower.status().describe() if self._follower else "loop stream: off"
        return admin.status_text(self._env, self._settings, health, time.time()) + "\n" + stream

    @botcmd(admin_only=True)
    def theloop_queue(self, _msg: Any, args: str) -> str:
        """Undelivered events: `list` (default), `retry KEY` (now), `drop KEY` (give up)."""
        if self._queue is None:
            return "theloop is not active."
        try:
            command = admin.parse_queue_command(args)
        except admin.UsageError as exc:
            return str(exc)
        if command.action == "list":
            text = admin.queue_text(self._queue.list(), self._queue.depth(), time.time())
            relays = self._relay_queue_lines()  # issue 4: decisions not relayed yet
            return text + ("\n\nDecisions not relayed yet:\n" + "\n".join(relays) if relays else "")
        queue = (
            self._relay.queue if self._relay and command.key.startswith("relay:") else self._queue
        )
        act = queue.retry_now if command.action == "retry" else queue.drop
        if act(command.key):
            return f"{command.action}: done for `{command.key}`."
        return f"No undelivered item `{command.key}` (see `!theloop queue`)."


def _json(answer: ingress.Answer, *, close: bool = False) -> Response:
    # An unread body must not be taken for the next request on a kept-alive connection.
    headers = {"Connection": "close"} if close else {}
    return Response(
        answer.json(), status=answer.status, mimetype="application/json", headers=headers
    )


# Before any plugin activates: our rule and the Webserver's own (see theloop_routes).
theloop_routes.reserve(TheLoop)
