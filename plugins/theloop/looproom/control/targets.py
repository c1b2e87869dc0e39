"""Which work items ``/the-loop <verb>`` may name: the operator's own, as in the-loop.

A slash command names its work item in words, from any room, so what it names is bounded
before anything is recorded: the bot's credential never writes a command onto a
repository the operator never configured. A work item is the operator's when the room was
shown it (the-loop sent an event about it), or when its repository is one the settings
name — a `rooms` pattern, a `slack.kickoff` repository, a `relay.repos` checkout, an
instance's `workItems.repos`. Another tracker's work item is bounded by its own ledger
(the Jira site and projects), not here.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable

from looproom import workitem


class Targets:
    """The repositories and work items ``/the-loop`` may name."""

    def __init__(self, shown: Callable[[str], bool], patterns: Iterable[str] = ()) -> None:
        """``shown(ref)``: whether the room was shown the work item; ``patterns``: the
        repositories the settings name (``owner/repo``, globs allowed, case ignored)."""
        self._shown = shown
        self._patterns = tuple(dict.fromkeys(p.lower() for p in patterns if "/" in p))

    def refusal(self, ref: str) -> str:
        """Why ``ref`` may not be named here, ``""`` when it may."""
        repository = workitem.repository_of(ref)
        if not repository or self._shown(ref):
            return ""
        if any(fnmatch.fnmatchcase(repository.lower(), p) for p in self._patterns):
            return ""
        return (
            f"`{ref}` is not a work item of this room: `{repository}` is no repository the "
            "settings name (`rooms`, `slack.kickoff`, `relay.repos`), and the-loop has sent "
            "nothing about it here — so nothing was recorded."
        )
