"""``make doctor``: the doctor from a shell, with the bot's own environment and settings.

It opens its own Socket Mode connection for the echo probe, unless a bot already answers on
THELOOP_HTTP_HOST:THELOOP_HTTP_PORT: a second connection beside a running bot would split
the events itself, and the probe would measure the doctor. Then ``!theloop doctor`` in chat
makes the probe on the bot's own connection. Exits 1 when a problem was found.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from typing import Any

from slack_sdk import WebClient

from looproom import configured
from looproom.doctor import jira_check
from looproom.doctor.examine import SlackSide, examine
from looproom.doctor.findings import PROBLEM, Finding, report
from looproom.inbound.local_secret import local_secret_in
from looproom.relay.jira_sink import JiraSink
from looproom.settings import ConfigError, Environment, Settings, jira_config
from looproom.slack.transport import SlackTransport, api_base

CONNECT_WAIT = 10.0


def main() -> int:
    try:
        env, settings = configured.read(os.environ)
    except ConfigError as exc:
        print(f"theloop doctor: fix the configuration first: {exc}", file=sys.stderr)
        return 2
    client = _client(env)
    side, opened = _slack_side(env, client)
    try:
        found = examine(env, settings, side, local_secret=_local(env))
        found += _jira(env.loop_config, settings)
    finally:
        if opened is not None:
            with contextlib.suppress(Exception):
                opened.close()
    print(report(found))
    return 1 if any(f.level == PROBLEM for f in found) else 0


def _jira(loop_config: str, settings: Settings) -> list[Finding]:
    """The Jira ledger's finding, where the-loop keeps one (its config's, else ours)."""
    try:
        site = jira_config.resolve(loop_config, None) if loop_config else None
    except jira_config.JiraConfigError as exc:
        return [Finding(PROBLEM, jira_check.SUBJECT, str(exc))]
    site = site or settings.jira
    return [jira_check.finding(JiraSink(site))] if site is not None else []


def _client(env: Environment) -> WebClient | None:
    if not env.slack_bot_token:
        return None
    return WebClient(token=env.slack_bot_token, base_url=api_base(env.slack_api_url), timeout=15)


def _slack_side(env: Environment, client: WebClient | None) -> tuple[SlackSide, Any]:
    if client is None:
        return SlackSide(), None
    transport = SlackTransport(client)
    if not env.slack_app_token:
        return SlackSide(transport), None
    if _bot_answers(env.http_host, env.http_port):
        why = (
            f"a bot answers on {env.http_host}:{env.http_port}, and a second connection "
            "beside it would split the events itself: run `!theloop doctor` in chat"
        )
        return SlackSide(transport, no_socket_why=why), None
    from slack_sdk.socket_mode import SocketModeClient

    opened = SocketModeClient(app_token=env.slack_app_token, web_client=client)
    connected = _connect(opened)
    return SlackSide(transport, opened if connected else None, True, connected), opened


def _connect(client: Any) -> bool:
    """Connect, waiting until the connection is up (or CONNECT_WAIT has passed)."""
    up = threading.Event()

    def on_message(*_args: Any) -> None:
        up.set()  # Slack's "hello" comes first on a new connection

    client.on_message_listeners.append(on_message)
    try:
        client.connect()
    except Exception:
        return False
    up.wait(CONNECT_WAIT)
    return bool(client.is_connected())


def _bot_answers(host: str, port: int) -> bool:
    target = "127.0.0.1" if host in ("0.0.0.0", "") else host
    try:
        with socket.create_connection((target, port), timeout=1.0):
            return True
    except OSError:
        return False


def _local(env: Environment) -> bool:
    return not env.webhook_secret and bool(local_secret_in(env))


if __name__ == "__main__":
    raise SystemExit(main())
