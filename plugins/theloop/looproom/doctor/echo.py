"""Is another connection of this app taking part of its events? Post, and listen for the echo.

Slack spreads an app's events across every Socket Mode connection the app has open, so a
second copy of the bot (another host, an old container, a laptop) silently takes a share of
what people type. Slack has no API that lists an app's connections: the probe posts a few
messages carrying a random nonce into a room the bot is in and waits for their ``message``
events on the bot's own connection. An echo that does not come back is evidence of another
consumer, never proof (events may also be off for that room), and the finding says so.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Callable, Mapping
from typing import Any

from looproom.doctor.findings import EVIDENCE, OK, Finding
from looproom.slack.transport import SlackTransport

BEATS = 3  # two consumers keep all three echoes only one time in eight
WINDOW = 5.0  # seconds: Socket Mode delivers in well under one
_MARK = "theloop doctor echo"
_NONCE = re.compile(re.escape(_MARK) + r" ([0-9a-f]{16})\b")
SUBJECT = "second consumer"


class Echoes:
    """Listens on a Socket Mode client for the probe's messages coming back.

    On the bot's own connection (``own=False``) the backend acknowledges every envelope;
    on a connection the doctor opened itself it acknowledges only its own echoes, so a
    person's message it happened to receive is retried by Slack to the bot.
    """

    def __init__(self, socket: Any, *, own: bool) -> None:
        self._socket, self._own = socket, own
        self._seen: set[str] = set()
        self._changed = threading.Condition()

    def start(self) -> None:
        self._socket.socket_mode_request_listeners.append(self._on_request)

    def stop(self) -> None:
        listeners = self._socket.socket_mode_request_listeners
        if self._on_request in listeners:
            listeners.remove(self._on_request)

    def wait_for(self, nonces: set[str], timeout: float) -> set[str]:
        """The nonces of ``nonces`` seen within ``timeout`` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: nonces <= self._seen, timeout)
            return nonces & self._seen

    def _on_request(self, client: Any, request: Any) -> None:
        if getattr(request, "type", "") != "events_api":
            return
        nonce = nonce_in((getattr(request, "payload", None) or {}).get("event") or {})
        if not nonce:
            return
        if self._own:
            from slack_sdk.socket_mode.response import SocketModeResponse

            client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        with self._changed:
            self._seen.add(nonce)
            self._changed.notify_all()


def nonce_in(event: Mapping[str, Any]) -> str:
    """The probe's nonce in a ``message`` event, or ``""``."""
    if event.get("type") != "message":
        return ""
    match = _NONCE.search(str(event.get("text") or ""))
    return match.group(1) if match else ""


def probe(
    slack: SlackTransport,
    channel: str,
    echoes: Echoes,
    *,
    beats: int = BEATS,
    window: float = WINDOW,
    nonce: Callable[[], str] = lambda: secrets.token_hex(8),
) -> Finding:
    """Post ``beats`` nonces into ``channel`` and count the echoes; delete the posts after."""
    heard = listen(slack, channel, echoes, beats=beats, window=window, nonce=nonce)
    if isinstance(heard, str):
        return Finding(EVIDENCE, SUBJECT, f"could not post the probe ({heard})")
    return verdict(heard, beats, window)


def listen(
    slack: SlackTransport,
    channel: str,
    echoes: Echoes,
    *,
    beats: int = BEATS,
    window: float = WINDOW,
    nonce: Callable[[], str] = lambda: secrets.token_hex(8),
) -> int | str:
    """How many of ``beats`` posted nonces came back within ``window`` seconds; Slack's
    error when one could not be posted. The posts are deleted after."""
    posted: list[tuple[str, str]] = []
    echoes.start()
    try:
        for _ in range(beats):
            value = nonce()
            reply = slack.post_message(
                channel, text=f"{_MARK} {value} — checking that this bot hears its room"
            )
            if not reply.ok:
                return reply.error or "not posted"
            posted.append((value, reply.ts))
        return len(echoes.wait_for({value for value, _ in posted}, window))
    finally:
        echoes.stop()
        for _, ts in posted:
            slack.delete_message(channel, ts)


def verdict(heard: int, beats: int, window: float) -> Finding:
    """What ``heard`` echoes of ``beats`` mean, hedged as far as the measurement allows."""
    caveat = "evidence, not proof: Slack has no API that lists an app's connections"
    if heard == beats:
        return Finding(
            OK,
            SUBJECT,
            f"{heard}/{beats} echoes came back within {window:g} s: no sign of another "
            f"connection taking this app's events ({caveat})",
        )
    also = (
        "; none came back, so message events may also be off for this room (check the "
        "app's Event Subscriptions against `make manifest`)"
        if heard == 0
        else ""
    )
    return Finding(
        EVIDENCE,
        SUBJECT,
        f"{heard}/{beats} echoes came back within {window:g} s: another connection of this "
        f"app may be taking part of its events — Slack spreads them across every Socket Mode "
        f"connection ({caveat}){also}",
        "stop every other copy of this bot that uses the same app token (another host, an "
        "old container, `make run` on a laptop): one app token, one running bot",
    )
