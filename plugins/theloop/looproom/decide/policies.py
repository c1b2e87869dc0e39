"""The policy in force, built afresh for each message or press.

Who the bot is is known only once the backend connected, and each work item's roster
changes as collaborators are added, so every path asks :meth:`Policies.now` rather than
keeping a :class:`~looproom.decide.authorization.AccessPolicy` of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from looproom.decide.authorization import AccessPolicy, holders
from looproom.decide.members import Grants
from looproom.relay.forms import Destinations
from looproom.settings.grants import DEFAULT_GRANTS

#: Each work item's own collaborators, by member id, as they are now.
Rosters = Callable[[], Mapping[str, frozenset[str]]]


class Policies:
    """The rules of one activation: its grants and people, with the bot and rosters live."""

    def __init__(
        self,
        bot_member: Callable[[], str],
        grants: Grants,
        *,
        people: Mapping[str, str],
        destinations: Destinations,
        granted: frozenset[str] = DEFAULT_GRANTS,
        rosters: Rosters = dict,
    ) -> None:
        self._bot_member, self.grants = bot_member, grants
        self._people, self._destinations, self._granted = people, destinations, granted
        self._rosters = rosters

    def now(self) -> AccessPolicy:
        """The policy in force at this moment."""
        return AccessPolicy(
            self._bot_member(),
            self.grants.deciders,
            self._people,
            self._destinations,
            collaborators=self.grants.collaborators,
            granted=self._granted,
            roster=self._rosters(),
        )

    def grant_lines(self) -> list[str]:
        """``!theloop status``'s grants: each act, who holds it, and what resolving warned."""
        return [*holders(self.now()), *(f"warning: {w}" for w in self.grants.warnings)]
