"""The doctor's Slack checks: the token and its scopes, each room, how events arrive.

Every call goes through the bot's one Slack transport, so a room is resolved here exactly
as the delivery worker resolves it (the bot's own rooms first, then the listing).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from looproom.doctor.findings import EVIDENCE, NOTE, OK, PROBLEM, Finding
from looproom.http import rules as http_rules
from looproom.manifest import EVENTS_PATH, INTERACTIVE_PATH
from looproom.settings import Environment
from looproom.settings.read import POLL, SOCKET, ReadSettings, way_of
from looproom.slack.channel_lookup import lookup_channel
from looproom.slack.responses import Response, is_channel_id
from looproom.slack.transport import SlackTransport

REINSTALL = (
    "add it under OAuth & Permissions → Bot Token Scopes (or create the app again from "
    "`make manifest`), then reinstall the app to the workspace"
)


@dataclass(frozen=True)
class Identity:
    """Who the token says the bot is; empty when the token was refused."""

    user_id: str = ""
    name: str = ""

    @property
    def mention(self) -> str:
        return f"@{self.name}" if self.name else "the bot"


def token(slack: SlackTransport, wanted: Iterable[str]) -> tuple[list[Finding], Identity]:
    """``auth.test``: is the token good; and its granted scopes against ``wanted``."""
    response = slack.auth_test()
    if not response.ok:
        return [
            Finding(
                PROBLEM,
                "Slack bot token",
                f"refused by Slack ({response.error})",
                "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions "
                "page into THELOOP_SLACK_BOT_TOKEN; reinstall the app if it was revoked",
            )
        ], Identity()
    who = Identity(str(response.data.get("user_id") or ""), str(response.data.get("user") or ""))
    team = response.data.get("team") or response.data.get("team_id") or "?"
    found = [Finding(OK, "Slack bot token", f"valid: {who.mention} ({who.user_id}) in {team}")]
    return found + _scopes(http_rules.header(response.headers, "x-oauth-scopes"), wanted), who


def _scopes(header: str, wanted: Iterable[str]) -> list[Finding]:
    if not header:
        return [
            Finding(
                EVIDENCE,
                "Slack scopes",
                "Slack did not say which scopes the token has (no x-oauth-scopes header)",
                "compare OAuth & Permissions → Bot Token Scopes with `make manifest`",
            )
        ]
    granted = {scope.strip() for scope in header.split(",") if scope.strip()}
    missing = sorted(set(wanted) - granted)
    found = [
        Finding(PROBLEM, "Slack scopes", f"`{scope}` is not granted", REINSTALL)
        for scope in missing
    ]
    if not missing:
        found.append(Finding(OK, "Slack scopes", "every scope the manifest asks for is granted"))
    return found


def room_findings(
    slack: SlackTransport, named: Sequence[tuple[str, str]], who: Identity
) -> tuple[list[Finding], str]:
    """A finding per configured room, and the id of one the bot is in ("" if none)."""
    if not named:
        return [
            Finding(
                PROBLEM,
                "rooms",
                "no room is configured: every event is parked",
                "set slack.channel (and rooms entries) in the YAML file",
            )
        ], ""
    found: list[Finding] = []
    home = ""
    for room, where in named:
        lookup = lookup_channel(slack, room)
        subject = f"room {room} ({where})"
        shown = room if is_channel_id(room) else "#" + room.lstrip("#")
        if lookup.id and lookup.member:
            home = home or lookup.id
            found.append(Finding(OK, subject, f"found ({lookup.id}) and the bot is in it"))
        elif lookup.id:
            found.append(
                Finding(
                    PROBLEM,
                    subject,
                    f"found ({lookup.id}) but the bot is not in it: its events are parked",
                    f"invite {who.mention} to {shown} (`/invite {who.mention}` in the room)",
                )
            )
        else:
            found.append(_not_found(subject, shown, lookup.truncated, lookup.response, who))
    return found, home


def _not_found(
    subject: str, shown: str, truncated: bool, response: Response, who: Identity
) -> Finding:
    if truncated:
        return Finding(
            PROBLEM,
            subject,
            "not among the rooms Slack listed before the listing was cut short (the "
            "workspace has more rooms than the bot pages through)",
            "use the channel id (C…) instead of the name: the room's details → About",
        )
    if not response.ok:
        return Finding(
            PROBLEM,
            subject,
            f"cannot look rooms up ({response.error})",
            "grant channels:read and groups:read (see the scopes above), or use the channel id",
        )
    return Finding(
        PROBLEM,
        subject,
        f"no room {shown} that the bot can see",
        f"check the spelling; a private room is visible only to its members: invite "
        f"{who.mention} to it (`/invite {who.mention}`), or use the channel id",
    )


def events_in(env: Environment, connected: bool | None, read: ReadSettings) -> list[Finding]:
    """How Slack's events reach the bot: Socket Mode (``connected``: None = not known
    here), HTTP request URLs or a poll; and how to see that message events arrive at all."""
    way = way_of(read, env)
    if way == POLL:
        return [_polled(read)]
    if way == SOCKET:
        found = [_socket(connected)]
    else:
        found = [
            Finding(
                NOTE,
                "events over HTTP",
                f"Slack must reach this bot's {EVENTS_PATH} and {INTERACTIVE_PATH} over https",
                "create the app from `make manifest HTTP=https://<public host>`",
            )
        ]
    found.append(
        Finding(
            NOTE,
            "bot events",
            "Slack's API cannot tell which events the app subscribes to",
            "test with one message: type `!theloop` in the room. An answer means message "
            "events arrive; silence means Event Subscriptions lack message.channels "
            "(message.groups for a private room): create the app again from `make manifest`",
        )
    )
    return found


def _socket(connected: bool | None) -> Finding:
    if connected is None:
        return Finding(
            EVIDENCE,
            "Socket Mode",
            "the app token opens a connection, but whether the bot holds one is known only "
            "to the bot",
            "run `!theloop doctor` in chat while the bot runs",
        )
    if connected:
        return Finding(OK, "Socket Mode", "connected")
    return Finding(
        PROBLEM,
        "Socket Mode",
        "not connected: no message or press reaches the bot",
        "check THELOOP_SLACK_APP_TOKEN (xapp-…, scope connections:write) and that Socket "
        "Mode is on in the app's settings; the bot's log says why the connection failed",
    )


def _polled(read: ReadSettings) -> Finding:
    """A poll hears what is typed in what the room follows, late, and nothing else."""
    return Finding(
        NOTE,
        "events by poll",
        f"no Socket Mode and no request URL: the followed threads and rooms are read every "
        f"{read.interval_seconds} s (slack.read.mode: poll) — no button, press, slash command, "
        "Home tab or direct message reaches the bot",
        "for those, create an app-level token with connections:write (Basic Information → "
        "App-Level Tokens) and set THELOOP_SLACK_APP_TOKEN",
    )
