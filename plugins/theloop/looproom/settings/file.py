"""The settings file's values (docs/configuration.md), validated; the defaults are the-loop's.

A bad value is a :class:`~looproom.settings.errors.ConfigError` naming the key — never a
silent default — except where the-loop itself resolves an unknown value to the default
with a warning, so a file written for the-loop loads here the same way: ``slack.verbosity``,
``slack.longMessages`` and unknown ``slack.subscribe`` types (kept: custom graphs fire
custom events). The file holds no secret: those come from the environment only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from looproom.digest import DEFAULT_DIGEST_MODE
from looproom.settings import jira_config, yaml_file
from looproom.settings.attention import AttentionSettings
from looproom.settings.errors import ConfigError, kind
from looproom.settings.grants import DEFAULT_GRANTS
from looproom.settings.instances import Spec
from looproom.settings.parser import (
    DEFAULT_MAX_CHARS,
    DEFAULT_SUBSCRIBE,
    DEFAULT_VERBOSITY,
    KickoffSettings,
    Parser,
    frozen,
)
from looproom.settings.read import ReadSettings
from looproom.slack import reactions


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
    people: Mapping[str, str] = field(default_factory=frozen, hash=False)
    relay_repos: Mapping[str, str] = field(default_factory=frozen, hash=False)
    #: the-loop's control keywords when this deployment renamed them (``relay.keywords``).
    relay_keywords: Mapping[str, str] = field(default_factory=frozen, hash=False)
    #: The operator's own command words (``relay.commands``), word → keyword or
    #: ``{keyword}``; checked with the keywords (``looproom.settings.own_words``).
    relay_commands: Mapping[str, Any] = field(default_factory=frozen, hash=False)
    #: The emoji of each moment an accepted message is acknowledged at (``slack.reactions``).
    reactions: reactions.Reactions = field(default_factory=reactions.Reactions)
    #: Where the Slack tokens are read from first (``slack.botTokenEnv``/``appTokenEnv``).
    bot_token_env: str = ""
    app_token_env: str = ""
    #: How often the threads are read again while connected, and the split check's beats.
    read: ReadSettings = field(default_factory=ReadSettings)
    #: the-loop's Jira ledger (``jira``, the shape of its ``integrations.jira``); None: none.
    jira: jira_config.JiraSite | None = None
    #: Many the-loop instances (``instances:``), their secrets only named; () is one.
    instances: tuple[Spec, ...] = ()
    #: Who is asked when a work item waits on people, and how they hear (``attention``).
    attention: AttentionSettings = field(default_factory=AttentionSettings)
    warnings: tuple[str, ...] = ()
    #: The file these came from; "" when built from a mapping or when no file exists.
    source: str = ""

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, required: bool = False) -> Settings:
        """Read the YAML file at ``path``; an absent file means every default, unless it is
        ``required`` (named by ``THELOOP_CONFIG``: a typo must not mean "no settings")."""
        file = str(Path(path))
        try:
            raw = yaml_file.read(file)
        except FileNotFoundError:
            if required:
                missing = ["THELOOP_CONFIG names a file that does not exist"]
                raise ConfigError(missing, file) from None
            return cls()
        return cls.from_mapping(raw, source=file)

    @classmethod
    def from_mapping(cls, raw: Any, *, source: str = "") -> Settings:
        """Validate an already-parsed document; every bad key is named in one error."""
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ConfigError([f"the file must be a mapping of keys, got {kind(raw)}"], source)
        parser = Parser()
        values = parser.document(raw)
        if parser.errors:
            raise ConfigError(parser.errors, source)
        return cls(**values, warnings=tuple(parser.warnings), source=source)
