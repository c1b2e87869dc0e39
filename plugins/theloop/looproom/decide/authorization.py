"""Who may decide: a listed Slack member id, and no one when the list is empty.

The allow-list is ``slack.authorizedUsers`` — Slack member ids, never names: names are
attacker-chosen — and an empty list denies everyone (fail closed). It is asked on every
path, typed or pressed, before anything a member said is validated, recorded or relayed
(see ``looproom.decide.judging`` for the order); an unauthorized member gets a refusal
naming the remedy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from looproom.relay.forms import Destinations


@dataclass(frozen=True)
class Policy:
    """The rules in force: the bot's own id, the allow-list, people → GitHub logins,
    and which relay destinations are configured."""

    own_id: str
    authorized: frozenset[str]
    people: Mapping[str, str] = field(default_factory=dict)
    destinations: Destinations = field(default_factory=Destinations)


def may_decide(member: str, authorized: frozenset[str]) -> bool:
    """Fail closed: only a listed Slack member id decides; an empty list denies all."""
    return bool(member) and member in authorized


def unauthorized_text(member: str, authorized: frozenset[str]) -> str:
    """The refusal an unauthorized member sees, naming the remedy."""
    nobody = " (the list is empty, so nobody may)" if not authorized else ""
    return (
        f"Only members listed in `slack.authorizedUsers` may decide for the-loop{nobody}, "
        f"and your member id `{member or 'unknown'}` is not there — nothing was relayed. "
        "Ask an operator to add it to `slack.authorizedUsers` in theloop.yaml."
    )
