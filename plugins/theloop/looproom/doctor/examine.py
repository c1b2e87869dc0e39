"""Every check the doctor makes, in the order a silent room is usually explained."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looproom import manifest
from looproom.doctor import attention_check, echo, peers, slack_checks
from looproom.doctor import instances as instances_check
from looproom.doctor.findings import EVIDENCE, NOTE, OK, Finding
from looproom.doctor.shared_store import shared_database
from looproom.room.routing import has_glob
from looproom.settings import Environment, Settings, grants
from looproom.slack.transport import SlackTransport


@dataclass(frozen=True)
class SlackSide:
    """What the doctor has of Slack: the transport (None off Slack), the Socket Mode client
    the echoes are listened for on, whether the doctor opened that client itself, whether
    it is connected (None: not known here), and why there is no client to listen on."""

    transport: SlackTransport | None = None
    socket: Any = None
    own_socket: bool = False
    connected: bool | None = None
    no_socket_why: str = ""
    #: Whether the app's Home tab is on, as the bot last published one (None: not known).
    home_tab: bool | None = None


def examine(
    env: Environment,
    settings: Settings,
    slack: SlackSide,
    *,
    bound: Mapping[str, str] | None = None,
    local_secret: bool = False,
    recent: Mapping[int, int] | None = None,
    window: float = echo.WINDOW,
) -> list[Finding]:
    """The findings, Slack first, then the webhook and the relay's peers. ``recent``: the
    webhook's last answers (status → count), known only inside the bot."""
    found = _slack(env, settings, slack, bound or {}, window)
    found.append(grants_in_force(settings))
    if env.instances:  # each the-loop instance: its control plane, stream and keys
        found += instances_check.findings(env.instances)
    else:
        found += peers.webhook(env, local_secret=local_secret, recent=recent)
    found += peers.github(env, relay_repositories(settings))
    optional = (peers.loop_api(env), peers.loop_stream(env), shared_database(env))
    found += [f for f in optional if f is not None]
    return found


def grants_in_force(settings: Settings) -> Finding:
    """The acts the room grants (``slack.publish``), named — unset, more than the-loop's own
    room grants by default (replies only), which a team moving over should know."""
    held = sorted(settings.publish | {grants.REPLY})
    said = "the room grants " + ", ".join(f"`{act}`" for act in held)
    if settings.publish == grants.DEFAULT_GRANTS:
        return Finding(
            NOTE,
            "grants",
            said + " (`slack.publish` unset: every act but the-loop's own control)",
            "the-loop's own room grants replies only by default — "
            "`slack.publish: [work-item.reply]` for the same",
        )
    return Finding(OK, "grants", said + " (`slack.publish`)")


def configured_rooms(settings: Settings, bound: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each room the bot may post in, once, with where it is configured."""
    named = [(settings.channel, "slack.channel")] if settings.channel else []
    named += [(room, f"rooms[{pattern}]") for pattern, room in settings.rooms]
    named += [(room, f"bound to {item}") for item, room in sorted(bound.items())]
    seen: set[str] = set()
    unique = []
    for room, where in named:
        key = room.lstrip("#").lower()
        if key not in seen:
            seen.add(key)
            unique.append((room, where))
    return unique


def relay_repositories(settings: Settings) -> list[str]:
    """The repositories decisions are relayed to that the configuration names."""
    exact = [pattern for pattern, _ in settings.rooms if "/" in pattern and not has_glob(pattern)]
    return sorted({*settings.relay_repos, *exact})


def _slack(
    env: Environment, settings: Settings, slack: SlackSide, bound: Mapping[str, str], window: float
) -> list[Finding]:
    transport = slack.transport
    if transport is None:
        return [
            Finding(
                NOTE,
                "Slack",
                f"not on Slack (the {env.backend} backend): nothing of Slack to check",
                "set THELOOP_SLACK_BOT_TOKEN (and THELOOP_SLACK_APP_TOKEN) to run on Slack",
            )
        ]
    found, who = slack_checks.token(transport, manifest.bot_scopes(manifest.load()))
    if not who.user_id:
        return found  # nothing else answers to a refused token
    rooms, home = slack_checks.room_findings(transport, configured_rooms(settings, bound), who)
    found += rooms
    found += slack_checks.events_in(env, slack.connected, settings.read)
    found.append(attention_check.finding(settings.attention, transport.auth_test()))
    found.append(attention_check.home_finding(slack.home_tab))
    if env.slack_app_token:
        found.append(_probe(transport, slack, home, window))
    return found


def _probe(transport: SlackTransport, slack: SlackSide, home: str, window: float) -> Finding:
    if slack.socket is None:
        return Finding(EVIDENCE, echo.SUBJECT, f"not probed: {slack.no_socket_why}")
    if not home:
        return Finding(
            EVIDENCE, echo.SUBJECT, "not probed: the bot is in none of the configured rooms"
        )
    echoes = echo.Echoes(slack.socket, own=slack.own_socket)
    return echo.probe(transport, home, echoes, window=window)
