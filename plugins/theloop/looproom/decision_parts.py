"""The parts the decision side is built from, each from the settings and the peers at
hand: who may decide, the-loop's keywords, where decisions go (the sinks, with the files
people attach), and the catch-up that reads what was said while the bot was away.
Settings a part cannot work with refuse the activation here, naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from looproom.attach import fetch as file_fetch
from looproom.attach import links as file_links
from looproom.attach import slack_files
from looproom.attach.links import FileLinks
from looproom.catchup.catchup import CatchUp
from looproom.catchup.cursors import Cursors
from looproom.decide import kinds
from looproom.decide.members import Directory, Grants, UnknownHandle, resolve_grants
from looproom.from_slack import slash
from looproom.from_slack.channel_roles import Places
from looproom.from_slack.listener import Listener
from looproom.instances.fleet import Fleet
from looproom.loop_log.channel import ChannelLog
from looproom.relay.jira_sink import JiraSink
from looproom.relay.reply_lookup import ReplyBook
from looproom.relay.sinks import ControlPlane, GitHubSink, LedgerSink, LoopSink, Sinks
from looproom.room.routing import BindingBook
from looproom.settings import ConfigError, Environment, Settings, jira_config, keywords
from looproom.slack.transport import SlackTransport

#: Where the files people attach to replies are kept for the sessions to read.
FILES_DIR = "files"


def grants(
    settings: Settings, slack: SlackTransport | None, store: MutableMapping[str, Any]
) -> Grants:
    """Who decides and who collaborates, by member id: ``@handles`` resolved through Slack
    (a handle naming nobody refuses the activation, as any other bad setting does)."""
    directory = Directory(slack.users_page if slack is not None else None, store)
    try:
        return resolve_grants(settings.authorized_users, settings.collaborators, directory)
    except UnknownHandle as exc:
        raise ConfigError([str(exc)], settings.source) from None


def relay_keywords(env: Environment, settings: Settings) -> keywords.Keywords:
    """the-loop's control keywords, from its own config when named (a bad one refuses the
    activation: relaying in words it does not read would be silently ignored)."""
    reserved = (*kinds.VERBS, *slash.WORDS)
    try:
        return keywords.resolve(
            env.loop_config, settings.relay_keywords, settings.relay_commands, reserved
        )
    except keywords.KeywordError as exc:
        raise ConfigError(exc.errors, env.loop_config or settings.source) from None


def sinks(
    env: Environment,
    settings: Settings,
    said: keywords.Keywords,
    ledger: Path,
    slack: SlackTransport | None,
    fleet: Fleet | None,
    store: MutableMapping[str, Any],
) -> Sinks:
    """Where decisions go: the ledger, GitHub, the-loop's control plane (each instance's,
    by the work item's owner, with ``fleet``), and the Jira ledger — the-loop's own
    ``integrations.jira`` when its config is named, else ``jira`` in theloop.yaml. The
    replies that landed are kept in ``store``, so a restart still counts them."""
    try:
        jira = jira_config.resolve(env.loop_config, None) if env.loop_config else None
    except jira_config.JiraConfigError as exc:
        raise ConfigError(exc.errors, env.loop_config) from None
    jira = jira or settings.jira
    files = file_store(env, ledger.parent, slack)
    book = ReplyBook(store)
    loop: ControlPlane | None = fleet.control_plane(files, book) if fleet is not None else None
    if fleet is None and env.loop_api:
        loop = LoopSink(env.loop_api, files=files, book=book)
    return Sinks(
        ledger=LedgerSink(ledger),
        github=GitHubSink(env.github_api, env.github_token) if env.github_token else None,
        loop=loop,
        keywords=said,
        jira=JiraSink(jira) if jira is not None else None,
        files=files,
    )


def file_store(
    env: Environment, data_dir: Path, slack: SlackTransport | None
) -> slack_files.FileStore | None:
    """Where attached files are fetched to, with the bot token, from Slack's file hosts
    (and the Slack API address the operator set, for a proxy or a test's loopback); with
    the bot's public address, the links the session downloads them from."""
    if slack is None:
        return None
    allowed = list(file_fetch.SLACK_ORIGINS)
    if env.slack_api_url and (configured := file_fetch.origin_of(env.slack_api_url)):
        allowed.append(configured)

    def info(file_id: str) -> Mapping[str, Any] | None:
        reply = slack.file_info(file_id)
        found = reply.data.get("file") if reply.ok else None
        return found if isinstance(found, Mapping) else None

    links = None
    if env.public_url:
        links = FileLinks(env.public_url, lambda: file_links.key_from(slack.token()))
    return slack_files.FileStore(data_dir / FILES_DIR, slack.token, allowed, info=info, links=links)


def catch_up(
    slack: SlackTransport | None,
    book: BindingBook,
    listener: Listener,
    cursors: Cursors,
    places: Places,
    records: ChannelLog,
) -> CatchUp | None:
    """On Slack, what was typed while the bot was away: each recent thread and each room
    it reads, since its cursor, handed to the listener as missed (each catch-up at a
    connect kept in ``records``)."""
    if slack is None:
        return None
    return CatchUp(
        lambda: [(thread.channel, thread.ts) for thread in book.recent_threads()],
        lambda channel, thread, oldest: slack.thread(channel, thread, oldest, so_far=True),
        listener.missed,
        cursors,
        rooms=places.read,
        read_room=slack.top_level,
        turn=slack.limits.wait,
        records=records,
    )
