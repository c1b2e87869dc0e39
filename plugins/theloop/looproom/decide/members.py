"""Members named by ``@handle`` in the settings, resolved to Slack member ids once.

Slack decides on ids; people write handles. A handle in ``slack.authorizedUsers`` or
``slack.collaborators`` is looked up through ``users.list`` at activation and the answer
kept in the plugin's storage, so a restart while Slack is unreachable still knows who was
meant. A handle Slack does not know is a configuration error: a grant naming nobody is a
typo, and silently granting nobody would hide it. When Slack cannot be asked and nothing
is cached, the handle grants nobody (fail closed) and the warning says so.

A handle names whoever holds it *now*: a renamed or departed member's handle may pass to
someone else. Member ids are immune to that; docs/configuration.md says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: Where resolved handles are kept in the plugin's storage.
CACHE_KEY = "theloop:handles"
#: ``users.list`` pages of 200 read at most: 20 000 members.
MAX_PAGES = 100

#: One page of ``users.list``: ``(ok, error, members, next cursor)``.
UsersPage = Callable[[str], tuple[bool, str, list[Mapping[str, Any]], str]]


class UnknownHandle(ValueError):
    """Slack answered, and no member holds the handle: the settings are wrong."""


@dataclass(frozen=True)
class Resolved:
    """The ids for a list of entries, and the warnings met on the way."""

    ids: frozenset[str]
    warnings: tuple[str, ...] = ()


def is_handle(entry: str) -> bool:
    return entry.startswith("@") and len(entry) > 1


def _handles(page: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """``(@name, id)`` for each live member of a page; deleted accounts hold no grant."""
    for member in page:
        if not isinstance(member, Mapping) or member.get("deleted"):
            continue
        member_id, name = str(member.get("id") or ""), str(member.get("name") or "")
        if member_id and name:
            yield f"@{name.lower()}", member_id


class Directory:
    """Handles → member ids: Slack's ``users.list`` when it answers, else the cache."""

    def __init__(self, users_page: UsersPage | None, store: MutableMapping[str, Any]) -> None:
        """``users_page`` is ``None`` off Slack: there a handle is kept as written (a
        plain backend's person string may look like one)."""
        self._page, self._store = users_page, store
        self._listing: dict[str, str] | None = None

    def resolve(self, entries: Iterable[str], key: str) -> Resolved:
        """The member ids ``entries`` name; raises :class:`UnknownHandle` naming ``key``."""
        entries = sorted(set(entries))
        handles = [entry for entry in entries if is_handle(entry)]
        ids = {entry for entry in entries if not is_handle(entry)}
        if not handles:
            return Resolved(frozenset(ids))
        if self._page is None:
            return Resolved(frozenset(ids | set(handles)))
        listing, why = self._list()
        cache = dict(self._store.get(CACHE_KEY) or {})
        warnings = []
        for handle in handles:
            wanted = handle.lower()
            if listing is not None:
                if wanted not in listing:
                    raise UnknownHandle(
                        f"{key}: {handle} is no member of this Slack workspace — "
                        "write the member id (U…) or the handle as Slack shows it"
                    )
                ids.add(listing[wanted])
                cache[wanted] = listing[wanted]
            elif wanted in cache:
                ids.add(cache[wanted])
                warnings.append(f"{key}: {handle} taken from the cache ({why})")
            else:
                warnings.append(f"{key}: {handle} could not be resolved ({why}); it grants nobody")
        if listing is not None:
            self._store[CACHE_KEY] = cache
        return Resolved(frozenset(ids), tuple(warnings))

    def _list(self) -> tuple[dict[str, str] | None, str]:
        """Every live member's handle, read once per activation; ``None`` and why when not."""
        if self._listing is not None:
            return self._listing, ""
        assert self._page is not None
        found: dict[str, str] = {}
        cursor = ""
        for _ in range(MAX_PAGES):
            ok, error, members, cursor = self._page(cursor)
            if not ok:
                return None, f"users.list failed: {error}"
            found.update(_handles(members))
            if not cursor:
                self._listing = found
                return found, ""
        return None, f"users.list has more than {MAX_PAGES} pages"


@dataclass(frozen=True)
class Grants:
    """The deciders and collaborators as member ids, with the warnings of resolving them."""

    deciders: frozenset[str] = frozenset()
    collaborators: frozenset[str] = frozenset()
    warnings: tuple[str, ...] = ()


def resolve_grants(
    deciders: Iterable[str], collaborators: Iterable[str], directory: Directory
) -> Grants:
    """Both lists resolved; raises :class:`UnknownHandle` for a handle naming nobody."""
    decide = directory.resolve(deciders, "slack.authorizedUsers")
    collaborate = directory.resolve(collaborators, "slack.collaborators")
    for warning in (*decide.warnings, *collaborate.warnings):
        log.warning("theloop members: %s", warning)
    return Grants(decide.ids, collaborate.ids, decide.warnings + collaborate.warnings)
