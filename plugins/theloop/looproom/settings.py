"""The bot's settings: the YAML file and the environment, validated (docs/configuration.md).

A bad value is a :class:`ConfigError` naming the key — never a silent default — except where
the-loop itself resolves an unknown value to the default with a warning, so a file written
for the-loop loads here the same way: ``slack.verbosity``, ``slack.longMessages`` and
unknown ``slack.subscribe`` types (kept: custom graphs fire custom events). Secrets come
only from the environment and are never part of a ``repr``, a message or
:meth:`Environment.describe`, which shows only whether each is set. ``config.py`` reads the
environment with :meth:`Environment.from_env` too, so the bot and the plugin agree on it.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

import yaml

from looproom import people
from looproom.decide import reconcile
from looproom.decide.authorization import DEFAULT_GRANTS, GRANTABLE, REPLY
from looproom.digest import DEFAULT_DIGEST_MODE, DIGEST_MODES
from looproom.events import ASK, KNOWN_EVENTS
from looproom.instances import config as instances_config
from looproom.instances.model import Instance, Spec
from looproom.relay import jira_config, keywords
from looproom.slack import reactions

DEFAULT_SUBSCRIBE = (ASK,)
VERBOSITIES = ("quiet", "normal", "verbose")
DEFAULT_VERBOSITY = "normal"
ROOM_STYLES = ("agentic", "classic")
MIN_CHARS, MAX_CHARS, DEFAULT_MAX_CHARS = 200, 3000, 1500
BACKENDS = ("Text", "SlackV3", "Null", "Test")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_CONFIG_PATH = "theloop.yaml"
#: Deliveries side by side. A delivery mostly waits for Slack, so N rooms busy at once take
#: about N / slots times one room's time: 16 keeps twenty rooms within twice one room's.
DEFAULT_DELIVERY_SLOTS = 16
MAX_DELIVERY_SLOTS = 64

_TOP_KEYS = ("slack", "rooms", "people", "relay", "jira", "instances")
_SLACK_KEYS = (
    "channel",
    "subscribe",
    "verbosity",
    "maxChars",
    "longMessages",
    "authorizedUsers",
    "collaborators",
    "publish",
    "kickoff",
    "room",
    "reactions",
    "botTokenEnv",
    "appTokenEnv",
    "read",
)
#: Keys of the-loop's ``channels.slack`` that mean nothing here: a section copied from
#: the-loop's config still loads, and the operator is told what is ignored.
_THE_LOOP_ONLY_KEYS = (
    "enabled",
    "events",
)
#: An environment variable's name, as ``slack.botTokenEnv`` may name one.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_CHANNEL = re.compile(r"#?[A-Za-z0-9._-]{1,80}")
_MEMBER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
#: A Slack handle as people type it; resolved to a member id at activation.
_HANDLE = re.compile(r"@[a-z0-9][a-z0-9._-]{0,79}")
_GITHUB_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
#: ``owner/repo``, either side a name or a glob (``acme/*``, ``*/docs``): a work item's
#: repository always has both, so a pattern without the slash could never match.
_REPO_PATTERN = re.compile(r"[A-Za-z0-9_.*?\[\]-]+/[A-Za-z0-9_.*?\[\]-]+")
#: Mappings and lists inside one another at most: the documented file nests three deep.
MAX_FILE_DEPTH = 10
#: Shorter webhook secrets are refused on Slack (and warned about elsewhere): an HMAC key
#: should carry at least as many bits as its 256-bit digest can tell apart in practice.
MIN_SECRET_CHARS = 32


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: object, first: int, second: int) -> None:
        super().__init__(f"{key}: defined twice, at line {first} and at line {second}")


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (it keeps the last,
    so a second ``authorizedUsers`` would silently replace the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        lines: dict[object, int] = {}
        for key_node, _value in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in lines:
                    raise _DuplicateKey(key, lines[key], line)
                lines[key] = line
            except TypeError:  # an unhashable key: PyYAML's own error follows
                continue
        return super().construct_mapping(node, deep=deep)


class ConfigError(ValueError):
    """The configuration is wrong; ``errors`` names each key and what is wrong with it."""

    def __init__(self, errors: list[str], source: str = "") -> None:
        where = f" (in {source})" if source else ""
        super().__init__("; ".join(errors) + where)
        self.errors = errors
        self.source = source


@dataclass(frozen=True)
class KickoffSettings:
    """Where a message addressed to the bot in a room opens a new work item: the
    repositories it may be opened in (several: the member picks) and the issue's labels."""

    repos: tuple[str, ...]
    labels: tuple[str, ...] = ()


def _frozen(mapping: Mapping[str, str] | None = None) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Settings:
    """The YAML file's values, validated; the defaults are the-loop's own."""

    channel: str = ""
    subscribe: tuple[str, ...] = DEFAULT_SUBSCRIBE
    verbosity: str = DEFAULT_VERBOSITY
    max_chars: int = DEFAULT_MAX_CHARS
    long_messages: str = DEFAULT_DIGEST_MODE
    authorized_users: frozenset[str] = frozenset()
    #: Members who may reply and add context but not decide (ids or ``@handles``).
    collaborators: frozenset[str] = frozenset()
    #: The acts the room grants beyond replying; unless ``slack.publish`` is set, every
    #: act but those acting on the-loop itself (``instance.command``, ``standing.command``).
    publish: frozenset[str] = DEFAULT_GRANTS
    room_style: str = "agentic"
    rooms: tuple[tuple[str, str], ...] = ()
    #: Room → where a message there opens a new work item (``slack.kickoff`` is the
    #: default room's, under ``slack.channel``; a ``rooms`` entry may carry its own).
    kickoffs: tuple[tuple[str, KickoffSettings], ...] = ()
    people: Mapping[str, str] = field(default_factory=_frozen, hash=False)
    relay_repos: Mapping[str, str] = field(default_factory=_frozen, hash=False)
    #: the-loop's control keywords when this deployment renamed them (``relay.keywords``).
    relay_keywords: Mapping[str, str] = field(default_factory=_frozen, hash=False)
    #: The operator's own command words (``relay.commands``), word → keyword or
    #: ``{keyword}``; checked with the keywords (``looproom.relay.own_words``).
    relay_commands: Mapping[str, Any] = field(default_factory=_frozen, hash=False)
    #: The emoji of each moment an accepted message is acknowledged at (``slack.reactions``).
    reactions: reactions.Reactions = field(default_factory=reactions.Reactions)
    #: Where the Slack tokens are read from first (``slack.botTokenEnv``/``appTokenEnv``).
    bot_token_env: str = ""
    app_token_env: str = ""
    #: How often the threads are read again while connected, and the split check's beats.
    read: reconcile.ReadSettings = field(default_factory=reconcile.ReadSettings)
    #: the-loop's Jira ledger (``jira``, the shape of its ``integrations.jira``); None: none.
    jira: jira_config.JiraSite | None = None
    #: Many the-loop instances (``instances:``), their secrets only named; () is one.
    instances: tuple[Spec, ...] = ()
    warnings: tuple[str, ...] = ()
    #: The file these came from; "" when built from a mapping or when no file exists.
    source: str = ""

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, required: bool = False) -> Settings:
        """Read the YAML file at ``path``; an absent file means every default, unless it is
        ``required`` (named by ``THELOOP_CONFIG``: a typo must not mean "no settings")."""
        file = Path(path)
        try:
            text = file.read_bytes().decode("utf-8")
        except FileNotFoundError:
            if required:
                missing = ["THELOOP_CONFIG names a file that does not exist"]
                raise ConfigError(missing, str(file)) from None
            return cls()
        except UnicodeDecodeError as exc:
            raise ConfigError([f"not UTF-8 text (byte {exc.start})"], str(file)) from None
        except OSError as exc:
            raise ConfigError([f"cannot read the file: {exc.strerror}"], str(file)) from exc
        try:
            raw = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: safe
        except _DuplicateKey as exc:
            raise ConfigError([str(exc)], str(file)) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f" at line {mark.line + 1}" if mark is not None else ""
            raise ConfigError([f"not valid YAML{line}"], str(file)) from exc
        except RecursionError:
            raise ConfigError([f"nested deeper than {MAX_FILE_DEPTH} levels"], str(file)) from None
        if _depth(raw) > MAX_FILE_DEPTH:
            raise ConfigError([f"nested deeper than {MAX_FILE_DEPTH} levels"], str(file))
        return cls.from_mapping(raw, source=str(file))

    @classmethod
    def from_mapping(cls, raw: Any, *, source: str = "") -> Settings:
        """Validate an already-parsed document; every bad key is named in one error."""
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ConfigError([f"the file must be a mapping of keys, got {_kind(raw)}"], source)
        parser = _Parser()
        values = parser.document(raw)
        if parser.errors:
            raise ConfigError(parser.errors, source)
        return cls(**values, warnings=tuple(parser.warnings), source=source)


class _Parser:
    """Collects every error and warning of one document, so one run names them all."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def document(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        self._unknown(raw, _TOP_KEYS, "")
        slack = self._mapping(raw.get("slack"), "slack")
        for key in _THE_LOOP_ONLY_KEYS:
            if key in slack:
                self.warnings.append(f"slack.{key}: the-loop's key, not used by the bot (ignored)")
        self._unknown(slack, (*_SLACK_KEYS, *_THE_LOOP_ONLY_KEYS), "slack.")
        room = self._mapping(slack.get("room"), "slack.room")
        self._unknown(room, ("style",), "slack.room.")
        relay = self._mapping(raw.get("relay"), "relay")
        self._unknown(relay, ("repos", "keywords", "commands"), "relay.")
        return {
            "channel": self._channel(slack.get("channel"), "slack.channel"),
            "subscribe": self._subscribe(slack.get("subscribe")),
            "verbosity": self._lenient(
                slack.get("verbosity"), "slack.verbosity", VERBOSITIES, DEFAULT_VERBOSITY
            ),
            "max_chars": self._max_chars(slack.get("maxChars")),
            "long_messages": self._lenient(
                slack.get("longMessages"), "slack.longMessages", DIGEST_MODES, DEFAULT_DIGEST_MODE
            ),
            "authorized_users": self._members(slack.get("authorizedUsers"), "authorizedUsers"),
            "collaborators": self._members(slack.get("collaborators"), "collaborators"),
            "publish": self._publish(slack.get("publish")),
            "room_style": self._choice(room.get("style"), "slack.room.style", ROOM_STYLES),
            "rooms": self._rooms(raw.get("rooms")),
            "kickoffs": self._kickoffs(slack, raw.get("rooms")),
            "people": _frozen(self._people(raw.get("people"))),
            "relay_repos": _frozen(self._relay_repos(relay.get("repos"))),
            "relay_keywords": _frozen(self._relay_keywords(relay.get("keywords"))),
            "relay_commands": MappingProxyType(
                dict(self._mapping(relay.get("commands"), "relay.commands"))
            ),
            "reactions": reactions.parse(slack.get("reactions"), self.errors),
            "bot_token_env": self._env_name(slack.get("botTokenEnv"), "slack.botTokenEnv"),
            "app_token_env": self._env_name(slack.get("appTokenEnv"), "slack.appTokenEnv"),
            "jira": self._jira(raw.get("jira")),
            "read": reconcile.parse(slack.get("read"), self.errors, self.warnings),
            "instances": instances_config.parse(raw.get("instances"), self.errors),
        }

    def _jira(self, value: Any) -> jira_config.JiraSite | None:
        try:
            return jira_config.parse(value, "jira")
        except jira_config.JiraConfigError as exc:
            self.errors.extend(exc.errors)
            return None

    def _env_name(self, value: Any, key: str) -> str:
        if value is None or value == "":
            return ""
        if not isinstance(value, str) or not _ENV_NAME.fullmatch(value.strip()):
            self.errors.append(f"{key}: expected a variable's name, got {_shown(value)}")
            return ""
        return value.strip()

    def _unknown(self, raw: Mapping[str, Any], known: Iterable[str], prefix: str) -> None:
        allowed = tuple(known)
        for key in raw:
            if key not in allowed:
                self.errors.append(
                    f"{prefix}{key}: unknown key (known: {', '.join(sorted(allowed))})"
                )

    def _mapping(self, value: Any, key: str) -> Mapping[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.errors.append(f"{key}: expected a mapping, got {_kind(value)}")
            return {}
        return value

    def _channel(self, value: Any, key: str) -> str:
        if value is None or value == "":
            return ""
        if not isinstance(value, str) or not _CHANNEL.fullmatch(value.strip()):
            self.errors.append(
                f"{key}: expected a channel name (#the-loop) or id (C…), got {_shown(value)}"
            )
            return ""
        return value.strip()

    def _subscribe(self, value: Any) -> tuple[str, ...]:
        if value is None:
            return DEFAULT_SUBSCRIBE
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.errors.append(
                f"slack.subscribe: expected a list of event types, got {_shown(value)}"
            )
            return DEFAULT_SUBSCRIBE
        types = tuple(dict.fromkeys(v.strip() for v in value))
        unknown = [t for t in types if t not in KNOWN_EVENTS]
        if unknown:
            self.warnings.append(
                f"slack.subscribe: {', '.join(unknown)} not in the-loop's catalog — kept "
                "(a custom graph may fire it), but check the spelling"
            )
        if not types:
            self.warnings.append("slack.subscribe: empty — no event will be posted")
        return types

    def _lenient(self, value: Any, key: str, choices: tuple[str, ...], default: str) -> str:
        """Unknown → the default with a warning, as the-loop resolves these keys."""
        if value is None:
            return default
        if value in choices:
            return value
        self.warnings.append(
            f"{key}: {_shown(value)} is not one of {' | '.join(choices)} — using {default!r}"
        )
        return default

    def _choice(self, value: Any, key: str, choices: tuple[str, ...]) -> str:
        if value is None:
            return choices[0]
        if value not in choices:
            self.errors.append(f"{key}: must be one of {' | '.join(choices)}, got {_shown(value)}")
            return choices[0]
        return value

    def _max_chars(self, value: Any) -> int:
        if value is None:
            return DEFAULT_MAX_CHARS
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not (MIN_CHARS <= value <= MAX_CHARS)
        ):
            self.errors.append(
                f"slack.maxChars: must be an integer from {MIN_CHARS} to {MAX_CHARS}, "
                f"got {_shown(value)}"
            )
            return DEFAULT_MAX_CHARS
        return value

    def _members(self, value: Any, name: str) -> frozenset[str]:
        """Slack member ids or ``@handles``; an empty list grants nobody (fail closed)."""
        if value is None:
            return frozenset()
        if not isinstance(value, list):
            self.errors.append(
                f"slack.{name}: expected a list of Slack member ids or @handles, "
                f"got {_shown(value)}"
            )
            return frozenset()
        members = set()
        for index, item in enumerate(value):
            key = f"slack.{name}[{index}]"
            if not isinstance(item, str) or not item.strip() or len(item.split()) != 1:
                self.errors.append(
                    f"{key}: expected a Slack member id (U…) or @handle, got {_shown(item)}"
                )
                continue
            member = item.strip()
            if not (_MEMBER_ID.fullmatch(member) or _HANDLE.fullmatch(member)):
                self.warnings.append(
                    f"{key}: {member!r} is neither a Slack member id (U…/W…) nor an "
                    "@handle; it can only match on a non-Slack backend"
                )
            members.add(member)
        return frozenset(members)

    def _publish(self, value: Any) -> frozenset[str]:
        """The acts granted beyond replying. Like the-loop, a name that is not an act is
        ignored with a warning: a typo may narrow the grants, never widen them."""
        if value is None:
            return DEFAULT_GRANTS
        if not isinstance(value, list):
            self.errors.append(f"slack.publish: expected a list of acts, got {_shown(value)}")
            return frozenset()
        granted = set()
        for index, item in enumerate(value):
            if item in GRANTABLE:
                granted.add(item)
            elif item != REPLY:
                self.warnings.append(
                    f"slack.publish[{index}]: {_shown(item)} is not an act the bot grants "
                    f"({', '.join(GRANTABLE)}) — ignored"
                )
        return frozenset(granted)

    def _rooms(self, value: Any) -> tuple[tuple[str, str], ...]:
        rooms = []
        for pattern, room in self._mapping(value, "rooms").items():
            key = f"rooms[{pattern!r}]"
            if not isinstance(pattern, str) or not _REPO_PATTERN.fullmatch(pattern):
                self.errors.append(f"{key}: expected a repository pattern like acme/api or acme/*")
                continue
            if isinstance(room, Mapping):  # {room: "#x", kickoff: {…}}
                self._unknown(room, ("room", "kickoff"), f"{key}.")
                room = room.get("room")
            channel = self._channel(room, key)
            if channel:
                rooms.append((pattern, channel))
            elif room in (None, ""):
                self.errors.append(f"{key}: expected a room name or id, got nothing")
        return tuple(rooms)

    def _kickoffs(
        self, slack: Mapping[str, Any], rooms: Any
    ) -> tuple[tuple[str, KickoffSettings], ...]:
        found = []
        default = self._kickoff(slack.get("kickoff"), "slack.kickoff")
        if default is not None:
            channel = self._channel(slack.get("channel"), "slack.channel")
            if not channel:
                self.errors.append("slack.kickoff: needs slack.channel, the room it listens in")
            else:
                found.append((channel, default))
        entries = rooms.items() if isinstance(rooms, Mapping) else ()
        for pattern, room in entries:
            if isinstance(room, Mapping) and isinstance(room.get("room"), str):
                kickoff = self._kickoff(room.get("kickoff"), f"rooms[{pattern!r}].kickoff")
                if kickoff is not None:
                    found.append((room["room"].strip(), kickoff))
        return tuple(found)

    def _kickoff(self, value: Any, key: str) -> KickoffSettings | None:
        """``{repo: owner/repo | [owner/repo, …], labels: [...]}``; ``None`` when unset."""
        if value is None:
            return None
        raw = self._mapping(value, key)
        self._unknown(raw, ("repo", "labels"), f"{key}.")
        repos = raw.get("repo")
        repos = [repos] if isinstance(repos, str) else repos
        if not isinstance(repos, list) or not repos:
            self.errors.append(f"{key}.repo: expected a repository like acme/api, or a list")
            return None
        bad = [r for r in repos if not isinstance(r, str) or not _REPO.fullmatch(r)]
        if bad:
            self.errors.append(f"{key}.repo: {_shown(bad[0])} is not a repository like acme/api")
            return None
        labels = raw.get("labels") or []
        if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
            self.errors.append(f"{key}.labels: expected a list of label names")
            return None
        return KickoffSettings(tuple(dict.fromkeys(repos)), tuple(labels))

    def _people(self, value: Any) -> dict[str, str]:
        people = {}
        for member, login in self._mapping(value, "people").items():
            key = f"people[{member!r}]"
            if not isinstance(member, str) or not _MEMBER_ID.fullmatch(member):
                self.errors.append(f"{key}: expected a Slack member id (U…) as the key")
            elif not isinstance(login, str) or not _GITHUB_LOGIN.fullmatch(login):
                self.errors.append(f"{key}: expected a GitHub login, got {_shown(login)}")
            else:
                people[member] = login
        return people

    def _relay_keywords(self, value: Any) -> dict[str, str]:
        """the-loop's control keywords as this deployment renamed them (``""``: off)."""
        found = {}
        for command, keyword in self._mapping(value, "relay.keywords").items():
            key = f"relay.keywords[{command!r}]"
            if command not in keywords.COMMANDS:
                self.errors.append(f"{key}: not a command (known: {', '.join(keywords.COMMANDS)})")
            elif not isinstance(keyword, str) or "\n" in keyword or "`" in keyword:
                self.errors.append(f"{key}: expected one line of words, got {_shown(keyword)}")
            else:
                found[command] = keyword
        return found

    def _relay_repos(self, value: Any) -> dict[str, str]:
        repos = {}
        for repo, path in self._mapping(value, "relay.repos").items():
            key = f"relay.repos[{repo!r}]"
            if not isinstance(repo, str) or not _REPO.fullmatch(repo):
                self.errors.append(f"{key}: expected a repository like acme/api as the key")
            elif not isinstance(path, str) or not os.path.isabs(os.path.expanduser(path)):
                self.errors.append(
                    f"{key}: expected the absolute path of the-loop's checkout, got {_shown(path)}"
                )
            else:
                repos[repo] = os.path.expanduser(path)
        return repos


def _depth(value: Any, level: int = 0) -> int:
    """How deep ``value`` nests, counted no further than one past the limit."""
    if level > MAX_FILE_DEPTH or not isinstance(value, dict | list):
        return level
    children = value.values() if isinstance(value, dict) else value
    return max((_depth(child, level + 1) for child in children), default=level + 1)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), "a list" if isinstance(value, list) else "a mapping"
    )


def _shown(value: Any) -> str:
    """A value for an error message: its repr, short (the file holds no secrets)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


_SECRETS = {
    "webhook_secret": "THELOOP_WEBHOOK_SECRET",
    "slack_bot_token": "THELOOP_SLACK_BOT_TOKEN",
    "slack_app_token": "THELOOP_SLACK_APP_TOKEN",
    "slack_signing_secret": "THELOOP_SLACK_SIGNING_SECRET",
    "github_token": "THELOOP_GITHUB_TOKEN",
}
#: Shown by :meth:`Environment.describe` as they are. ``config.py`` acts on the log level
#: and the Slack API URL at start, from the same environment the plugin reads.
_PLAIN = {
    "backend": "THELOOP_BACKEND",
    "data_dir": "THELOOP_DATA_DIR",
    "http_host": "THELOOP_HTTP_HOST",
    "http_port": "THELOOP_HTTP_PORT",
    "config_path": "THELOOP_CONFIG",
    "admins": "THELOOP_ADMINS",
    "github_api": "THELOOP_GITHUB_API",
    "loop_api": "THELOOP_LOOP_API",
    "loop_stream": "THELOOP_LOOP_STREAM",
    "loop_config": "THELOOP_LOOP_CONFIG",
    "log_level": "THELOOP_LOG_LEVEL",
    "slack_api_url": "THELOOP_SLACK_API_URL",
    "database_url": "THELOOP_DATABASE_URL",
    "lease_seconds": "THELOOP_LEASE_SECONDS",
    "replica": "THELOOP_REPLICA",
    "delivery_slots": "THELOOP_DELIVERY_SLOTS",
    "relay_notice_seconds": "THELOOP_RELAY_NOTICE_SECONDS",
    "relay_give_up_seconds": "THELOOP_RELAY_GIVE_UP_SECONDS",
}
#: Shown redacted: a URL may carry ``user:pass@`` or ``?token=``.
_URLS = (
    "THELOOP_GITHUB_API",
    "THELOOP_LOOP_API",
    "THELOOP_LOOP_STREAM",
    "THELOOP_SLACK_API_URL",
    "THELOOP_DATABASE_URL",
)
#: The shared mode's lease: how long a stopped replica's claim holds before another takes it.
DEFAULT_LEASE_SECONDS = 30.0
#: A reply waiting on the-loop's event log: the thread hears after 10 minutes, a day parks it.
DEFAULT_RELAY_NOTICE_SECONDS = 600.0
DEFAULT_RELAY_GIVE_UP_SECONDS = 86400.0


@dataclass(frozen=True)
class Environment:
    """The environment variables (docs/configuration.md), with their fallbacks and defaults.

    Secret fields are left out of ``repr`` so a stray log line cannot carry them.
    """

    webhook_secret: str = field(default="", repr=False)
    slack_bot_token: str = field(default="", repr=False)
    slack_app_token: str = field(default="", repr=False)
    slack_signing_secret: str = field(default="", repr=False)
    github_token: str = field(default="", repr=False)
    github_api: str = "https://api.github.com"
    loop_api: str = ""
    loop_stream: str = ""
    #: the-loop's own CLI config (a mounted copy): its control keywords are read from it.
    loop_config: str = ""
    data_dir: str = "./data"
    http_host: str = "127.0.0.1"
    http_port: int = 3141
    config_path: str = DEFAULT_CONFIG_PATH
    backend: str = "Text"
    admins: tuple[str, ...] = ()
    log_level: str = "INFO"
    #: Another Slack Web API base URL (a proxy, GovSlack, a test fake); "" is Slack's own.
    slack_api_url: str = ""
    #: The shared mode: every replica's state in this PostgreSQL database ("" = SQLite).
    #: Out of ``repr``: it may carry a password (``describe`` shows it redacted).
    database_url: str = field(default="", repr=False)
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    #: This process's name among the replicas (status lines, the metrics' label).
    replica: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    #: How many deliveries (and, apart, decisions) run side by side, each work item's in order.
    delivery_slots: int = DEFAULT_DELIVERY_SLOTS
    #: A reply that may have landed while the-loop cannot be asked: said to wait after this
    #: many seconds, parked for an admin after that many.
    relay_notice_seconds: float = DEFAULT_RELAY_NOTICE_SECONDS
    relay_give_up_seconds: float = DEFAULT_RELAY_GIVE_UP_SECONDS
    #: Whether ``THELOOP_CONFIG`` was set: then its file must exist.
    config_given: bool = False
    #: The ``instances:`` of the settings file with their secrets read (``configured``).
    instances: tuple[Instance, ...] = field(default=(), repr=False)
    #: What is allowed but unwise (a short secret on the console backend).
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, bot_token_env: str = "", app_token_env: str = ""
    ) -> Environment:
        """Read ``env`` (``os.environ``); raise :class:`ConfigError` naming each bad variable.
        ``bot_token_env``/``app_token_env``: the variables ``slack.botTokenEnv`` and
        ``slack.appTokenEnv`` name, read before the bot's own."""

        def get(*names: str, default: str = "") -> str:
            values = (env.get(name, "").strip() for name in names)
            return next((value for value in values if value), default)

        errors: list[str] = []
        bot_token = get(*_names(bot_token_env, "SLACK_BOT_TOKEN"))
        backend = get("THELOOP_BACKEND", default="SlackV3" if bot_token else "Text")
        if backend not in BACKENDS:
            errors.append(f"THELOOP_BACKEND: must be one of {', '.join(BACKENDS)}, got {backend!r}")
        elif backend == "SlackV3" and not bot_token:
            errors.append("THELOOP_BACKEND: SlackV3 needs THELOOP_SLACK_BOT_TOKEN (an xoxb- token)")
        # Any case: a typo must not silently log at another level.
        log_level = get("THELOOP_LOG_LEVEL", default="INFO").upper()
        if log_level not in LOG_LEVELS:
            levels = ", ".join(LOG_LEVELS)
            errors.append(f"THELOOP_LOG_LEVEL: must be one of {levels}, got {_shown(log_level)}")
        port = _port(get("THELOOP_HTTP_PORT", default="3141"), errors)
        slots = _slots(get("THELOOP_DELIVERY_SLOTS", default=str(DEFAULT_DELIVERY_SLOTS)), errors)
        horizons = _relay_horizons(get, errors)
        urls = {
            name: _url(get(*names, default=default), names[0], errors)
            for name, names, default in (
                ("github_api", ("THELOOP_GITHUB_API",), "https://api.github.com"),
                ("loop_api", ("THELOOP_LOOP_API",), ""),
                ("loop_stream", ("THELOOP_LOOP_STREAM",), ""),
                ("slack_api_url", ("THELOOP_SLACK_API_URL",), ""),
            )
        }
        admins_raw = get("THELOOP_ADMINS")
        admins = tuple(people.admin_id(a) for a in admins_raw.split(",") if a.strip())
        if admins_raw and not admins:
            errors.append(f"THELOOP_ADMINS: no admin in {_shown(admins_raw)} (comma-separated ids)")
        data_dir = get("THELOOP_DATA_DIR", default="./data")
        if os.path.exists(data_dir) and not os.path.isdir(data_dir):
            errors.append(f"THELOOP_DATA_DIR: {data_dir!r} is a file, not a directory")
        secret = get("THELOOP_WEBHOOK_SECRET")
        shared = _shared_mode(get, errors)
        warnings = _secret_strength(secret, backend, errors)
        if errors:
            raise ConfigError(errors, "the environment")
        return cls(
            webhook_secret=secret,
            slack_bot_token=bot_token,
            slack_app_token=get(*_names(app_token_env, "SLACK_APP_TOKEN")),
            slack_signing_secret=get("THELOOP_SLACK_SIGNING_SECRET"),
            github_token=get("THELOOP_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
            data_dir=data_dir,
            http_host=get("THELOOP_HTTP_HOST", default="127.0.0.1"),
            http_port=port,
            delivery_slots=slots,
            config_path=get("THELOOP_CONFIG", default=DEFAULT_CONFIG_PATH),
            backend=backend,
            admins=admins,
            log_level=log_level,
            config_given=bool(get("THELOOP_CONFIG")),
            loop_config=get("THELOOP_LOOP_CONFIG"),
            warnings=warnings,
            **urls,
            **shared,
            **horizons,
        )

    def describe(self) -> dict[str, str]:
        """The resolved values by variable name, secrets shown only as set/unset."""
        shown = {var: "set" if getattr(self, name) else "unset" for name, var in _SECRETS.items()}
        for name, var in _PLAIN.items():
            value = getattr(self, name)
            shown[var] = ", ".join(value) if isinstance(value, tuple) else str(value)
        for var in _URLS:
            shown[var] = redact_url(shown[var])
        return dict(sorted(shown.items()))


def _names(configured: str, suffix: str) -> tuple[str, ...]:
    """Where a Slack token is read: the configured variable, then the bot's, then the-loop's."""
    return tuple(n for n in (configured, f"THELOOP_{suffix}", f"THE_LOOP_{suffix}") if n)


def redact_url(url: str) -> str:
    """``url`` without userinfo, query or fragment, which may carry credentials.

    Scheme, host, port and path stay, so an admin can still tell which server it is.
    """
    if not url:
        return ""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def _secret_strength(secret: str, backend: str, errors: list[str]) -> tuple[str, ...]:
    """A short webhook secret: an error where the webhook faces Slack's world, else a warning.
    Only its length is ever said, never a character of it."""
    if not secret or len(secret) >= MIN_SECRET_CHARS:
        return ()
    problem = (
        f"THELOOP_WEBHOOK_SECRET: {len(secret)} characters, fewer than {MIN_SECRET_CHARS} "
        "(make one with `openssl rand -hex 32`)"
    )
    if backend == "SlackV3":
        errors.append(problem)
        return ()
    return (problem,)


def _port(raw: str, errors: list[str]) -> int:
    """0 lets the OS pick a free port (tests); ``!theloop status`` shows the one it took."""
    if raw.isascii() and raw.isdigit() and 0 <= int(raw) <= 65535:
        return int(raw)
    errors.append(f"THELOOP_HTTP_PORT: must be an integer from 0 to 65535, got {_shown(raw)}")
    return 0


def _shared_mode(get: Callable[..., str], errors: list[str]) -> dict[str, Any]:
    """THELOOP_DATABASE_URL (a ``postgresql://`` URL), THELOOP_LEASE_SECONDS, THELOOP_REPLICA."""
    shared: dict[str, Any] = {}
    url = get("THELOOP_DATABASE_URL")
    if url and urlsplit(url).scheme not in ("postgresql", "postgres"):
        # Only the scheme is echoed: the URL may carry a password.
        scheme = urlsplit(url).scheme or "none"
        errors.append(f"THELOOP_DATABASE_URL: must be a postgresql:// URL, got scheme {scheme!r}")
    shared["database_url"] = url
    lease = get("THELOOP_LEASE_SECONDS")
    try:
        shared["lease_seconds"] = float(lease) if lease else DEFAULT_LEASE_SECONDS
        if not 1 <= shared["lease_seconds"] <= 3600:
            raise ValueError
    except ValueError:
        errors.append(f"THELOOP_LEASE_SECONDS: must be seconds from 1 to 3600, got {_shown(lease)}")
    if get("THELOOP_REPLICA"):
        shared["replica"] = get("THELOOP_REPLICA")
    return shared


def _relay_horizons(get: Callable[..., str], errors: list[str]) -> dict[str, float]:
    """THELOOP_RELAY_NOTICE_SECONDS and THELOOP_RELAY_GIVE_UP_SECONDS: seconds, the notice
    no later than the give-up."""
    found: dict[str, float] = {}
    for name, var, default in (
        ("relay_notice_seconds", "THELOOP_RELAY_NOTICE_SECONDS", DEFAULT_RELAY_NOTICE_SECONDS),
        ("relay_give_up_seconds", "THELOOP_RELAY_GIVE_UP_SECONDS", DEFAULT_RELAY_GIVE_UP_SECONDS),
    ):
        raw = get(var)
        try:
            found[name] = float(raw) if raw else default
            if not 1 <= found[name] <= 30 * 86400:
                raise ValueError
        except ValueError:
            errors.append(f"{var}: must be seconds from 1 to 2592000 (30 days), got {_shown(raw)}")
            found[name] = default
    if found["relay_notice_seconds"] > found["relay_give_up_seconds"]:
        errors.append(
            "THELOOP_RELAY_NOTICE_SECONDS: must not be more than THELOOP_RELAY_GIVE_UP_SECONDS"
        )
    return found


def _slots(raw: str, errors: list[str]) -> int:
    """Delivery slots: at least one; past :data:`MAX_DELIVERY_SLOTS` Slack's workspace-wide
    limits, not the slots, are what holds deliveries back."""
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_DELIVERY_SLOTS:
        return int(raw)
    errors.append(
        f"THELOOP_DELIVERY_SLOTS: must be an integer from 1 to {MAX_DELIVERY_SLOTS}, "
        f"got {_shown(raw)}"
    )
    return DEFAULT_DELIVERY_SLOTS


def _url(raw: str, name: str, errors: list[str]) -> str:
    """An http(s) base URL, without a trailing slash; "" stays "" (the sink is off)."""
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # Only the scheme is echoed: a URL may carry credentials in its userinfo.
        errors.append(f"{name}: must be an http(s) URL, got scheme {parts.scheme or 'none'!r}")
        return ""
    return raw.rstrip("/")
