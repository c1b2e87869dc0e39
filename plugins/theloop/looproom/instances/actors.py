"""Routing by who caused a work item: to the instance that registered that person.

Each instance names the people it works for (``instances.<name>.actors``: Slack member
ids, GitHub logins). A work item that no instance claims — no ``workItems`` match, nobody
learned it — becomes the instance's that registered the person who caused it: for one
opened from Slack (a kickoff message, ``/the-loop new``), the member who asked, or their
GitHub login (``people:``); for any other GitHub issue or pull request, the login that
opened it, asked of GitHub when the relay first has something for it. The routing is kept
as a claim (:meth:`Owners.route`), so the relay, the control verbs and the webhook agree
on it, across restarts and replicas. Nobody claims it and nobody registered the person:
it waits, as before, and who asked for it is kept (:class:`Askers`) for when an instance
registers them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import Any

from looproom import workitem
from looproom.clients.github import GitHub
from looproom.durable.bounded import touched
from looproom.durable.state import lock_for, stored_mapping
from looproom.instances.owners import ClaimsFull, Owners
from looproom.settings.instances import Instance

log = logging.getLogger(__name__)

#: ``owned(work item, member)``: told once a member's request is opened.
Opened = Callable[[str, str], None]
#: ``causers(work item)``: who caused it, as ``(provider, name)`` pairs (none known: ``[]``).
Causers = Callable[[str], list[tuple[str, str]]]
#: The state key: canonical work item → who asked for it, ``"slack:U… github:login"``.
ASKERS_KEY = "instances.askers"
#: Askers kept at most: the least recently opened go first.
MOST_ASKERS = 5000
#: Authors kept once asked (they never change): at most this many work items.
MOST_AUTHORS = 1000
#: A look-up is one of the relay's steps: GitHub answers well within this.
AUTHOR_TIMEOUT = 5.0


class Registry:
    """Which instance registered each person, as ``(provider, name)``."""

    def __init__(self, instances: Sequence[Instance]) -> None:
        self._by_person: dict[tuple[str, str], Instance] = {}
        for instance in instances:
            for pair in instance.actors.pairs():
                # The settings refuse a person two instances name; the first is kept anyway.
                self._by_person.setdefault(pair, instance)

    def __bool__(self) -> bool:
        return bool(self._by_person)

    def registrar(self, causers: Iterable[tuple[str, str]]) -> Instance | None:
        """The instance that registered the first of ``causers`` someone registered."""
        for provider, name in causers:
            key = (provider, name.lower() if provider == "github" else name)
            if key in self._by_person:
                return self._by_person[key]
        return None


def route(
    owners: Owners, registry: Registry, work_item: str, causers: Sequence[tuple[str, str]]
) -> Instance | None:
    """The owner of ``work_item`` once its ``causers`` are known: the one it has, else the
    instance that registered one of them (kept); None when neither."""
    known = owners.owner(work_item)
    if known is not None:
        return known
    registrar = registry.registrar(causers)
    if registrar is None:
        return None
    try:
        owner = owners.route(registrar, work_item)
    except ClaimsFull as full:
        log.error("instances: %s not routed by who caused it: %s", work_item, full)
        return None
    if owner.name == registrar.name:
        log.info("instances: %s routed to %s, who registered its causer", work_item, owner.name)
    return owner


class Askers:
    """Who asked for each work item opened from Slack that was not routed (nobody claimed
    it, nobody registered them): kept, bounded, so that once an instance registers them —
    the settings changed, the bot restarted — what waits for the work item goes to it."""

    def __init__(self, store: MutableMapping[str, Any]) -> None:
        self._store, self._lock = store, lock_for(store)

    def keep(self, work_item: str, causers: Sequence[tuple[str, str]]) -> None:
        said = " ".join(f"{provider}:{name}" for provider, name in causers)
        with self._lock:
            kept = stored_mapping(self._store, ASKERS_KEY)
            key = workitem.canonical(work_item)
            self._store[ASKERS_KEY] = touched(kept, key, said, MOST_ASKERS)

    def of(self, work_item: str) -> list[tuple[str, str]]:
        said = str(stored_mapping(self._store, ASKERS_KEY).get(workitem.canonical(work_item)) or "")
        pairs = (word.partition(":") for word in said.split())
        return [(provider, name) for provider, _, name in pairs if name]


def on_opened(
    told: Opened,
    owners: Owners,
    registry: Registry,
    people: Mapping[str, str],
    askers: Askers,
) -> Opened:
    """``told``, then the new work item routed by the member who asked for it; when it is
    nobody's, who asked is kept for later."""

    def opened(work_item: str, member: str) -> None:
        told(work_item, member)
        causers = [("slack", member)]
        if people.get(member):
            causers.append(("github", people[member]))
        if route(owners, registry, work_item, causers) is None:
            askers.keep(work_item, causers)

    return opened


def nobody(_work_item: str) -> list[tuple[str, str]]:
    return []


def issue_authors(api: str, token: str) -> Causers:
    """The login that opened a GitHub issue or pull request, asked of GitHub once (an
    answer other than the issue: none known, asked again next time)."""
    github = GitHub(api, token, timeout=AUTHOR_TIMEOUT)
    known: dict[str, str] = {}

    def causers(work_item: str) -> list[tuple[str, str]]:
        ref = workitem.parse(workitem.canonical(work_item))
        if ref is None or not ref.is_github or ref.number is None:
            return []
        key = str(ref)
        if key not in known:
            read = github.issue(ref.repository, ref.number)
            user = read.value.get("user") if read.value is not None else None
            login = user.get("login") if isinstance(user, Mapping) else None
            if not isinstance(login, str) or not login:
                log.info("instances: who opened %s is not known (%s)", key, read.status)
                return []
            if len(known) >= MOST_AUTHORS:
                known.clear()
            known[key] = login
        return [("github", known[key])]

    return causers


def causers_for(instances: Sequence[Instance], api: str, token: str) -> Causers:
    """Who caused a work item nobody owns: its GitHub author, asked of GitHub only when an
    instance registers GitHub logins and the bot has a token; else nobody."""
    wanted = any(instance.actors.github for instance in instances)
    return issue_authors(api, token) if wanted and token else nobody
