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


#: The acts a member may be granted, named as the-loop names the records they leave. Every
#: path that acts for a member — typed, pressed, shortcut, modal, slash command — asks
#: ``may`` about one of these, so a grant means the same thing wherever it is used.
REPLY = "work-item.reply"
GATE_FEEDBACK = "gate.feedback"
CONTROL = "control.command"
CONTEXT = "context.added"
DECISION_RECORD = "decision.recorded"
CREATE = "work-item.create"
ACTS = (REPLY, GATE_FEEDBACK, CONTROL, CONTEXT, DECISION_RECORD, CREATE)


def may(member: str, act: str, policy: Policy) -> bool:
    """Whether ``member`` may do ``act`` (one of ``ACTS``); fails closed on an unknown act.

    Every act is a listed decider's for now; the grants per act refine this one function.
    """
    return act in ACTS and may_decide(member, policy.authorized)


def refusal_text(member: str, act: str, policy: Policy) -> str:
    """What a member who may not do ``act`` is told, naming the remedy."""
    return unauthorized_text(member, policy.authorized)


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
