"""One the-loop instance as the bot knows it: what the file says, and what it resolves to.

:class:`Spec` is the ``instances:`` entry as written — its secrets only *named* (an
environment variable or a file). :class:`Instance` is the same with the secrets read; the
secrets and the token are never part of a ``repr``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field

from looproom import workitem


@dataclass(frozen=True)
class SecretRef:
    """Where a secret is read from: an environment variable, or a file."""

    env: str = ""
    file: str = ""

    def describe(self) -> str:
        return f"environment variable {self.env}" if self.env else f"file {self.file}"


@dataclass(frozen=True)
class Claims:
    """Which work items are an instance's: repositories (globs), ref prefixes, and whether
    the first event it sends about a work item nobody owns makes it its own."""

    repos: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    learn: bool = True

    def matches(self, work_item: str) -> bool:
        """Whether ``work_item`` is this instance's by its repositories or prefixes, in
        whatever case or form it is written (a prefix is compared case-folded with the
        work item's canonical spelling: the configured bound wins over every alias)."""
        named = workitem.canonical(work_item)
        if any(named.casefold().startswith(prefix.casefold()) for prefix in self.prefixes):
            return True
        repository = workitem.repository_of(named)
        return bool(repository) and any(
            fnmatch.fnmatchcase(repository, pattern.lower()) for pattern in self.repos
        )


@dataclass(frozen=True)
class Actors:
    """The people an instance works for: a work item no instance claims, caused by one of
    them, is routed to it. Slack member ids as written; GitHub logins lowercased (GitHub
    compares them without case)."""

    slack: tuple[str, ...] = ()
    github: tuple[str, ...] = ()

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """Every ``(provider, name)`` registered."""
        return tuple(("slack", m) for m in self.slack) + tuple(("github", g) for g in self.github)


@dataclass(frozen=True)
class Spec:
    """One ``instances.<name>`` entry, validated, its secrets only named."""

    name: str
    key_id: str
    secrets: tuple[SecretRef, ...]
    api: str
    token: SecretRef | None = None
    stream: str = ""
    claims: Claims = field(default_factory=Claims)
    actors: Actors = field(default_factory=Actors)


@dataclass(frozen=True)
class Instance:
    """One instance with its secrets read: what the webhook, relay and stream use."""

    name: str
    key_id: str
    #: One, or two while a rotation is under way: either verifies.
    secrets: tuple[str, ...] = field(repr=False)
    api: str
    token: str = field(default="", repr=False)
    stream: str = ""
    claims: Claims = field(default_factory=Claims)
    actors: Actors = field(default_factory=Actors)
