"""The Errbot side of decisions: what a received message says, and Slack's presses.

Errbot and its SlackV3 backend hand the plugin a ``Message`` and Socket Mode requests;
these helpers turn them into plain values for :class:`looproom.from_slack.listener.Listener`, where
every rule lives. The backend does not pass interactive payloads (button and checkbox
presses) to plugins, so a listener of our own is attached to its ``SocketModeClient``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from looproom.decide.kinds import VERBS
from looproom.room.readers import Asker


def member_of(identifier: Any) -> str:
    """A Slack member id (``userid``), else the backend's person string (Test, Text)."""
    return str(getattr(identifier, "userid", "") or getattr(identifier, "person", "") or "")


def asker_of(msg: Any) -> Asker:
    """Who asked a read command, and the Slack conversation its answer is said in ("" on
    another backend: one plain chat)."""
    return Asker(member_of(msg.frm), str(slack_event(msg).get("channel") or ""))


def slack_event(msg: Any) -> Mapping[str, Any]:
    """The Slack message event the SlackV3 backend keeps with ``msg``; {} on other backends."""
    return (msg.extras or {}).get("slack_event") or {}


def raw_after(msg: Any, word: str, args: str) -> str:
    """What followed ``word`` in the message as Slack sent it — mentions and room links as
    ids (``<@U…>``, ``<#C…>``), where the backend's ``args`` made them names a member could
    share with a GitHub login; ``args`` on other backends."""
    raw = str(slack_event(msg).get("text") or "")
    at = raw.lower().find(word)
    return raw[at + len(word) :].strip() if at >= 0 else args


def plain_channel(msg: Any) -> str:
    """Where to answer on a plain backend: the room, else the person."""
    room = getattr(msg.frm, "room", None)
    return str(room) if room is not None else str(msg.frm)


def is_command(msg: Any, config: Any) -> bool:
    """Whether Errbot already runs this message as a command (then it is not ours to read)."""
    text = str(msg.body or "").strip()
    prefixes = (config.BOT_PREFIX, *getattr(config, "BOT_ALT_PREFIXES", ()))
    if any(text.lower().startswith(p.lower()) for p in prefixes if p):
        return True
    first = text.split(None, 1)[0].lower() if text else ""
    optional = getattr(config, "BOT_PREFIX_OPTIONAL_ON_CHAT", False) and msg.is_direct
    return bool(optional and first in VERBS)


def listen_for_presses(
    backend: Any, pressed: Callable[[Mapping[str, Any], Callable[[], None]], None]
) -> Callable[[], None]:
    """Hand each interactive Socket Mode request's payload to ``pressed``, with what
    acknowledges it once it is stored (at the latest when ``pressed`` returns); returns
    what detaches the listener again (nothing to detach off Socket Mode)."""
    socket = getattr(backend, "slack_socket_mode", None)
    if socket is None:
        return lambda: None

    def on_request(client: Any, request: Any) -> None:
        if request.type != "interactive":
            return
        from slack_sdk.socket_mode.response import SocketModeResponse

        acknowledged: list[bool] = []

        def acknowledge() -> None:
            if not acknowledged:
                acknowledged.append(True)
                client.send_socket_mode_response(
                    SocketModeResponse(envelope_id=request.envelope_id)
                )

        # Stored before it is acknowledged, and acknowledged before the room is answered
        # (Slack waits 3 s): a bot killed before storing it leaves it unacknowledged, and
        # Slack tells the member the press did not go through.
        try:
            pressed(request.payload, acknowledge)
        except Exception:
            if not acknowledged:  # not stored (the database away): nobody may say it was
                setattr(request, _REFUSED, True)
            raise
        acknowledge()

    # The backend's own listener acknowledges every request, after ours: not one we refused.
    guarded = [(each, _unless_refused(each)) for each in socket.socket_mode_request_listeners]

    def detach() -> None:
        listeners = socket.socket_mode_request_listeners
        if on_request in listeners:
            listeners.remove(on_request)
        for each, guard in guarded:
            if guard in listeners:
                listeners[listeners.index(guard)] = each

    socket.socket_mode_request_listeners[:] = [on_request, *(guard for _, guard in guarded)]
    return detach


#: Set on a Socket Mode request whose press could not be stored: acknowledged by nobody.
_REFUSED = "theloop_refused"


def _unless_refused(listener: Callable[[Any, Any], None]) -> Callable[[Any, Any], None]:
    """``listener``, skipping a request whose press was not stored: Slack then tells the
    member the press did not go through, rather than hear it was received and lose it."""

    def guarded(client: Any, request: Any) -> None:
        if not getattr(request, _REFUSED, False):
            listener(client, request)

    return guarded


def listen_for_commands(
    backend: Any, answer: Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
) -> Callable[[], None]:
    """Answer each ``/the-loop`` slash command arriving over Socket Mode with what
    ``answer`` says, in the acknowledgement itself (Slack shows it to the member alone);
    returns what detaches the listener again. The backend does not route slash commands."""
    socket = getattr(backend, "slack_socket_mode", None)
    if socket is None:
        return lambda: None

    def on_request(client: Any, request: Any) -> None:
        if request.type != "slash_commands":
            return
        from slack_sdk.socket_mode.response import SocketModeResponse

        said = answer(request.payload or {})
        client.send_socket_mode_response(
            SocketModeResponse(envelope_id=request.envelope_id, payload=dict(said or {}) or None)
        )

    def detach() -> None:
        if on_request in socket.socket_mode_request_listeners:
            socket.socket_mode_request_listeners.remove(on_request)

    # First in line: Slack keeps an envelope's first acknowledgement, and the backend's
    # own listener acknowledges every request with nothing.
    socket.socket_mode_request_listeners.insert(0, on_request)
    return detach


def listen_for_home(
    backend: Any, opened: Callable[[Mapping[str, Any]], None]
) -> Callable[[], None]:
    """Hand ``opened`` each ``app_home_opened`` event (a member opening the app's Home tab,
    which the backend does not hand plugins); returns what detaches the listener. The
    backend's own listener acknowledges the envelope."""
    socket = getattr(backend, "slack_socket_mode", None)
    if socket is None:
        return lambda: None

    def on_request(_client: Any, request: Any) -> None:
        event = (request.payload or {}).get("event") if request.type == "events_api" else None
        if isinstance(event, Mapping) and event.get("type") == "app_home_opened":
            opened(event)

    def detach() -> None:
        if on_request in socket.socket_mode_request_listeners:
            socket.socket_mode_request_listeners.remove(on_request)

    socket.socket_mode_request_listeners.append(on_request)
    return detach


def listen_for_connections(backend: Any, connected: Callable[[], None]) -> Callable[[], None]:
    """Call ``connected`` each time Slack greets a new Socket Mode connection (its
    ``hello``): after a reconnect, what was typed meanwhile must be read. Returns what
    detaches the listener again."""
    socket = getattr(backend, "slack_socket_mode", None)
    if socket is None:
        return lambda: None

    def on_message(message: str) -> None:
        try:
            greeted = json.loads(message).get("type") == "hello"
        except (ValueError, AttributeError):
            return
        if greeted:
            connected()

    def detach() -> None:
        if on_message in socket.on_message_listeners:
            socket.on_message_listeners.remove(on_message)

    socket.on_message_listeners.append(on_message)
    return detach
