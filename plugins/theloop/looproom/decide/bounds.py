"""Which work items a member may name: the operator's own, on every path, asked here alone.

Whatever names a work item — words typed in a thread, a DM, a group DM or a room that
hears everything, a ``!verb``, a button, a shortcut, a form, ``/the-loop`` — is bounded
before anything is recorded or sent: the bot's credentials never write onto a repository
or a ticket the operator never configured. A work item is the operator's when the room was
shown it (the-loop sent an event about it, or an admin bound a room to it), when its
repository is one the settings name — a ``rooms`` pattern, a ``slack.kickoff`` repository,
a ``relay.repos`` checkout, an instance's ``workItems.repos`` — or when it is a ticket of
the configured Jira site in one of its projects. Anything else is refused, naming it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable

from looproom import workitem
from looproom.room.memory import Memory
from looproom.room.routing import BindingBook
from looproom.settings import Settings
from looproom.settings.jira_config import JiraSite

#: Where a refusal says what the settings name, so an operator knows what to add.
_NAMED = "`rooms`, `slack.kickoff`, `relay.repos`, an instance's `workItems.repos`"


class Bound:
    """The work items and repositories this room may name."""

    def __init__(
        self,
        shown: Callable[[str], bool],
        patterns: Iterable[str] = (),
        jira: JiraSite | None = None,
    ) -> None:
        """``shown(ref)``: whether the room was shown the work item (or an admin bound a
        room to it); ``patterns``: the repositories the settings name (``owner/repo``,
        globs allowed, case ignored, as GitHub ignores it); ``jira``: the Jira ledger."""
        self._shown = shown
        self._patterns = tuple(dict.fromkeys(p.lower() for p in patterns if "/" in p))
        self._jira = jira

    def repository_named(self, repository: str) -> bool:
        """Whether ``repository`` (``owner/repo``) is one the settings name."""
        folded = repository.lower()
        return bool(folded) and any(fnmatch.fnmatchcase(folded, p) for p in self._patterns)

    def refusal(self, ref: str) -> str:
        """Why ``ref`` may not be named here, ``""`` when it may."""
        if ref and self._shown(ref):
            return ""
        named = workitem.parse(ref)
        if named is None:
            return f"`{ref}` is not a work item ref like `github:owner/repo#7`; nothing was sent."
        if named.is_github:
            if self.repository_named(named.repository):
                return ""
            why = f"`{named.repository}` is no repository the settings name ({_NAMED})"
        elif named.tracker == "jira":
            if self._jira is not None and self._jira.key_of(ref):
                return ""
            why = self._jira_why()
        else:
            why = f"a `{named.tracker}:` ticket is named by no setting"
        return (
            f"`{ref}` is not a work item of this room: {why}, and the-loop has sent nothing "
            "about it here — so nothing was recorded or sent."
        )

    def _jira_why(self) -> str:
        if self._jira is None:
            return "no Jira site is configured (`jira:` in theloop.yaml)"
        projects = ", ".join(self._jira.projects) or "none"
        return (
            f"it is not a ticket of the configured Jira site ({self._jira.site}) in one of "
            f"its projects ({projects})"
        )


def named_repositories(settings: Settings, claimed: Iterable[str] = ()) -> list[str]:
    """Every repository (or glob) the settings name, and the instances' ``claimed`` ones."""
    named = [pattern for pattern, _room in settings.rooms]
    named += [repo for _room, kickoff in settings.kickoffs for repo in kickoff.repos]
    return named + list(settings.relay_repos) + list(claimed)


def of_room(
    memory: Memory, book: BindingBook, patterns: Iterable[str], jira: JiraSite | None
) -> Bound:
    """The room's bound: a work item it was shown, or one an admin bound a room to (the
    operator's naming, shown or not), of ``patterns``, or of the ``jira`` site."""

    def shown(ref: str) -> bool:
        return memory.knows(ref) or workitem.canonical(ref) in book.room_bindings()

    return Bound(shown, patterns, jira)
