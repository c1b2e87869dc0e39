"""``instances.<name>.actors``: the people each instance works for, validated.

``{slack: [member ids], github: [logins]}``, as the-loop's ``gateway.actors`` registers
them with its gateway, each list capped at :data:`MOST_ACTORS` as the gateway caps it. A
person may be one instance's only: two instances naming the same member or login is an
error at start naming both — the gateway refuses the second registration the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from looproom.people import is_member_id
from looproom.settings.instances import Actors, Spec

#: Per provider, as the-loop's gateway takes them at most in one registration.
MOST_ACTORS = 256
PROVIDERS = ("slack", "github")
#: A GitHub login (letters, digits, single dashes, 39 at most), or an app's ``name[bot]``.
_LOGIN = re.compile(r"[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}(?:\[bot\])?")


def parse(value: Any, key: str, errors: list[str]) -> Actors:
    """The actors ``value`` names (``None``: none); each problem appended to ``errors``."""
    if value is None:
        return Actors()
    if not isinstance(value, Mapping):
        errors.append(f"{key}: expected a mapping like {{slack: [U0123ABCD], github: [login]}}")
        return Actors()
    for provider in value:
        if provider not in PROVIDERS:
            errors.append(
                f"{key}.{provider}: unknown provider (known: {', '.join(PROVIDERS)}; a work "
                "item this bot routes is caused in Slack or on GitHub)"
            )
    slack = _names(value.get("slack"), f"{key}.slack", errors, is_member_id, "a Slack member id")
    github = _names(value.get("github"), f"{key}.github", errors, _is_login, "a GitHub login")
    return Actors(slack, tuple(login.lower() for login in github))


def _names(
    value: Any, key: str, errors: list[str], valid: Callable[[str], bool], what: str
) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        errors.append(f"{key}: expected a list of texts, each {what}")
        return ()
    if len(value) > MOST_ACTORS:
        errors.append(f"{key}: {len(value)} given, at most {MOST_ACTORS}")
        return ()
    bad = [name for name in value if not valid(name.strip())]
    if bad:
        errors.append(f"{key}: {_shown(bad[0])} is not {what}")
        return ()
    return tuple(dict.fromkeys(name.strip() for name in value))


def _is_login(text: str) -> bool:
    return bool(_LOGIN.fullmatch(text))


def unique(specs: Sequence[Spec], errors: list[str]) -> None:
    """A person registered by two instances: an error naming both, so the bot does not
    start on a guess — the file must say whose they are."""
    holder: dict[tuple[str, str], str] = {}
    for spec in specs:
        for pair in spec.actors.pairs():
            first = holder.setdefault(pair, spec.name)
            if first != spec.name:
                errors.append(
                    f"instances.{spec.name}.actors.{pair[0]}: {pair[1]} is registered by "
                    f"instances.{first} too; a person's work items go to one instance"
                )


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"
