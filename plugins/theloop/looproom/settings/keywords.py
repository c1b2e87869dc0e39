"""The control keywords the deployment's the-loop reads: its own config's, else ours.

the-loop acts on a comment that opens with one of its control keywords —
``routing.control.keywords`` in its CLI config over its defaults (``the-loop start`` …).
A team that renamed them would have every verb we relay in the default words silently
read as conversation, so the keyword is taken from where the-loop takes it: its own CLI
config file when ``THELOOP_LOOP_CONFIG`` names it (a mounted copy is fine), else
``relay.keywords`` in theloop.yaml, else the-loop's defaults. An empty keyword switches
that one command off, as in the-loop; ``routing.control.enabled: false`` switches them all.
The operator's own command words (``routing.control.commands``, else ``relay.commands``)
come from the same place (``looproom.settings.own_words``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from looproom.settings import own_words
from looproom.verb_names import (
    ADD_CHANNEL,
    ADD_COLLABORATOR,
    CLEANUP,
    CONTRIBUTE,
    DO,
    EXECUTE,
    PAUSE,
    REMOVE_CHANNEL,
    REMOVE_COLLABORATOR,
    RESUME,
    REVIEW,
    START,
    STOP,
)

#: the-loop's commands a member may type here, in its documented order.
COMMANDS = (
    START,
    STOP,
    PAUSE,
    RESUME,
    EXECUTE,
    CONTRIBUTE,
    CLEANUP,
    DO,
    REVIEW,
    ADD_COLLABORATOR,
    REMOVE_COLLABORATOR,
    ADD_CHANNEL,
    REMOVE_CHANNEL,
)
DEFAULTS: Mapping[str, str] = MappingProxyType({c: f"the-loop {c}" for c in COMMANDS})
DEFAULT_SOURCE = "the-loop's defaults"


class KeywordError(ValueError):
    """The keywords cannot be read; ``errors`` names each key and what is wrong with it."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Keywords:
    """Each command's keyword (``""``: switched off) and where they were read from."""

    words: Mapping[str, str] = field(default_factory=lambda: DEFAULTS)
    source: str = DEFAULT_SOURCE
    enabled: bool = True
    #: The operator's own command words → their keywords (``routing.control.commands``).
    custom: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def of(self, command: str) -> str:
        """The keyword that opens ``command``'s comment; ``""`` when it is switched off."""
        return self.words.get(command, "") if self.enabled else ""

    def own(self, typed: str) -> str:
        """The operator's command word ``typed`` names, ``""`` for none (or switched off)."""
        return own_words.word_for(typed, self.custom) if self.enabled else ""

    def by_last_word(self, typed: str) -> str:
        """The command whose renamed keyword ends in ``typed`` (``start`` for ``go`` where
        start is ``loop go``), as the-loop reads a mention and ``/the-loop``: ``""`` for
        none, for a command's own name (that names itself), or for a word two share."""
        typed = typed.lower()
        if not self.enabled or not typed or typed in COMMANDS:
            return ""
        found = [
            command
            for command, keyword in self.words.items()
            if keyword and keyword.split()[-1].lower() == typed
        ]
        return found[0] if len(found) == 1 and not self.own(typed) else ""

    def refusal(self, command: str) -> str:
        """Why ``command`` cannot be relayed here — ``""`` when it can."""
        if not self.enabled:
            return (
                f"the-loop's control keywords are switched off ({self.source}: "
                "`routing.control.enabled: false`), so nothing was relayed."
            )
        if not self.of(command):
            return (
                f"`{command}` is switched off in this deployment (its keyword is empty in "
                f"{self.source}), so nothing was relayed."
            )
        return ""


def parse(
    raw: Any,
    where: str,
    *,
    enabled: Any = True,
    commands: Any = None,
    commands_where: str = "",
    reserved: tuple[str, ...] = (),
) -> Keywords:
    """Keywords from a mapping of command → keyword, over the-loop's defaults; with
    ``commands``, the operator's own words (none may shadow a ``reserved`` verb)."""
    if raw is None:
        raw = {}
    errors = []
    if not isinstance(raw, Mapping):
        raise KeywordError([f"{where}: expected a mapping of command → keyword"])
    words = dict(DEFAULTS)
    for command, keyword in raw.items():
        if command not in COMMANDS:
            continue  # a command the room has no verb for
        if keyword is None:
            keyword = ""
        if not isinstance(keyword, str) or "\n" in keyword or "`" in keyword:
            errors.append(f"{where}.{command}: expected one line of words, got {keyword!r}")
            continue
        words[command] = " ".join(keyword.split())
    if not isinstance(enabled, bool):
        errors.append(f"{where}: enabled must be true or false, got {enabled!r}")
    custom, wrong = own_words.parse(
        commands, commands_where or where, words, (*COMMANDS, *reserved)
    )
    errors.extend(wrong)
    if errors:
        raise KeywordError(errors)
    return Keywords(MappingProxyType(words), where, enabled is not False, MappingProxyType(custom))


def from_loop_config(path: str, reserved: tuple[str, ...] = ()) -> Keywords:
    """``routing.control`` in the-loop's CLI config file at ``path``."""
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise KeywordError([f"THELOOP_LOOP_CONFIG: {path} does not exist"]) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise KeywordError([f"THELOOP_LOOP_CONFIG: {path} cannot be read ({exc})"]) from None
    routing = document.get("routing") if isinstance(document, Mapping) else None
    control = routing.get("control") if isinstance(routing, Mapping) else None
    control = control if isinstance(control, Mapping) else {}
    where = f"routing.control.keywords in {Path(path).name}"
    return parse(
        control.get("keywords"),
        where,
        enabled=control.get("enabled", True),
        commands=control.get("commands"),
        commands_where=f"routing.control.commands in {Path(path).name}",
        reserved=reserved,
    )


def resolve(
    loop_config: str,
    ours: Mapping[str, str] | None,
    own: Mapping[str, Any] | None = None,
    reserved: tuple[str, ...] = (),
) -> Keywords:
    """the-loop's own config when named, else ``relay.keywords`` and ``relay.commands``,
    else the defaults. ``reserved`` are the room's verbs, which no new word may shadow."""
    if loop_config:
        return from_loop_config(loop_config, reserved)
    if ours or own:
        return parse(
            ours,
            "relay.keywords in theloop.yaml",
            commands=own,
            commands_where="relay.commands in theloop.yaml",
            reserved=reserved,
        )
    return Keywords()
