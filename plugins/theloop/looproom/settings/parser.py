"""The settings file's document checked key by key: every error names its key, every
value that the-loop itself would resolve leniently is resolved the same way, with a warning.

What the bot reads from the file (``slack``, ``rooms``, ``people``, ``relay``, ``jira``,
``instances``) is parsed here into the values :class:`~looproom.settings.file.Settings`
holds; a section another part owns (reactions, ``slack.read``, Jira, instances) is parsed
by that part into the same error list.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from looproom.digest import DEFAULT_DIGEST_MODE, DIGEST_MODES
from looproom.events import ASK, KNOWN_EVENTS
from looproom.people import is_member_id
from looproom.settings import attention, instances_section, jira_config, keywords, read
from looproom.settings.errors import kind, shown
from looproom.settings.grants import DEFAULT_GRANTS, GRANTABLE, REPLY
from looproom.slack import reactions

DEFAULT_SUBSCRIBE = (ASK,)
VERBOSITIES = ("quiet", "normal", "verbose")
DEFAULT_VERBOSITY = "normal"
ROOM_STYLES = ("agentic", "classic")
MIN_CHARS, MAX_CHARS, DEFAULT_MAX_CHARS = 200, 3000, 1500

_TOP_KEYS = ("slack", "rooms", "people", "relay", "jira", "instances", "attention")
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
#: A Slack handle as people type it; resolved to a member id at activation.
_HANDLE = re.compile(r"@[a-z0-9][a-z0-9._-]{0,79}")
_GITHUB_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
#: ``owner/repo``, either side a name or a glob (``acme/*``, ``*/docs``): a work item's
#: repository always has both, so a pattern without the slash could never match.
_REPO_PATTERN = re.compile(r"[A-Za-z0-9_.*?\[\]-]+/[A-Za-z0-9_.*?\[\]-]+")


@dataclass(frozen=True)
class KickoffSettings:
    """Where a message addressed to the bot in a room opens a new work item: the
    repositories it may be opened in (several: the member picks) and the issue's labels."""

    repos: tuple[str, ...]
    labels: tuple[str, ...] = ()


def frozen(mapping: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """A read-only copy: the settings are shared by every part and never change."""
    return MappingProxyType(dict(mapping or {}))


class Parser:
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
            "people": frozen(self._people(raw.get("people"))),
            "relay_repos": frozen(self._relay_repos(relay.get("repos"))),
            "relay_keywords": frozen(self._relay_keywords(relay.get("keywords"))),
            "relay_commands": MappingProxyType(
                dict(self._mapping(relay.get("commands"), "relay.commands"))
            ),
            "reactions": reactions.parse(slack.get("reactions"), self.errors),
            "bot_token_env": self._env_name(slack.get("botTokenEnv"), "slack.botTokenEnv"),
            "app_token_env": self._env_name(slack.get("appTokenEnv"), "slack.appTokenEnv"),
            "jira": self._jira(raw.get("jira")),
            "read": read.parse(slack.get("read"), self.errors, self.warnings),
            "instances": instances_section.parse(raw.get("instances"), self.errors),
            "attention": attention.parse(raw.get("attention"), self.errors),
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
            self.errors.append(f"{key}: expected a variable's name, got {shown(value)}")
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
            self.errors.append(f"{key}: expected a mapping, got {kind(value)}")
            return {}
        return value

    def _channel(self, value: Any, key: str) -> str:
        if value is None or value == "":
            return ""
        if not isinstance(value, str) or not _CHANNEL.fullmatch(value.strip()):
            self.errors.append(
                f"{key}: expected a channel name (#the-loop) or id (C…), got {shown(value)}"
            )
            return ""
        return value.strip()

    def _subscribe(self, value: Any) -> tuple[str, ...]:
        if value is None:
            return DEFAULT_SUBSCRIBE
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.errors.append(
                f"slack.subscribe: expected a list of event types, got {shown(value)}"
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
            f"{key}: {shown(value)} is not one of {' | '.join(choices)} — using {default!r}"
        )
        return default

    def _choice(self, value: Any, key: str, choices: tuple[str, ...]) -> str:
        if value is None:
            return choices[0]
        if value not in choices:
            self.errors.append(f"{key}: must be one of {' | '.join(choices)}, got {shown(value)}")
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
                f"got {shown(value)}"
            )
            return DEFAULT_MAX_CHARS
        return value

    def _members(self, value: Any, name: str) -> frozenset[str]:
        """Slack member ids or ``@handles``; an empty list grants nobody (fail closed)."""
        if value is None:
            return frozenset()
        if not isinstance(value, list):
            self.errors.append(
                f"slack.{name}: expected a list of Slack member ids or @handles, got {shown(value)}"
            )
            return frozenset()
        members = set()
        for index, item in enumerate(value):
            key = f"slack.{name}[{index}]"
            if not isinstance(item, str) or not item.strip() or len(item.split()) != 1:
                self.errors.append(
                    f"{key}: expected a Slack member id (U…) or @handle, got {shown(item)}"
                )
                continue
            member = item.strip()
            if not (is_member_id(member) or _HANDLE.fullmatch(member)):
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
            self.errors.append(f"slack.publish: expected a list of acts, got {shown(value)}")
            return frozenset()
        granted = set()
        for index, item in enumerate(value):
            if item in GRANTABLE:
                granted.add(item)
            elif item != REPLY:
                self.warnings.append(
                    f"slack.publish[{index}]: {shown(item)} is not an act the bot grants "
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
            self.errors.append(f"{key}.repo: {shown(bad[0])} is not a repository like acme/api")
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
            if not isinstance(member, str) or not is_member_id(member):
                self.errors.append(f"{key}: expected a Slack member id (U…) as the key")
            elif not isinstance(login, str) or not _GITHUB_LOGIN.fullmatch(login):
                self.errors.append(f"{key}: expected a GitHub login, got {shown(login)}")
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
                self.errors.append(f"{key}: expected one line of words, got {shown(keyword)}")
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
                    f"{key}: expected the absolute path of the-loop's checkout, got {shown(path)}"
                )
            else:
                repos[repo] = os.path.expanduser(path)
        return repos
