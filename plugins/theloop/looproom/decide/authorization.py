"""Who may do what: acts granted to the room, and members granted acts — fail closed.

Two lists say it, both checked on every path (typed, pressed, shortcut, modal, slash) by
the one question :func:`may`, before anything a member said is validated, recorded or
relayed (see ``looproom.decide.judging`` for the order):

- the room's grants, ``slack.publish``: the acts members may do here beyond replying
  (a reply is always granted). An act the room was not granted is nobody's.
- the members: deciders (``slack.authorizedUsers``) may do every granted act;
  collaborators (``slack.collaborators``) may reply and add context — input — but not
  decide, steer or create, as the-loop's own collaborators may not. A work item's own
  collaborators (its roster, ``add-collaborator``) are collaborators on that work item
  only: :meth:`AccessPolicy.on` is the policy for one work item.
- ``instance.command`` and ``standing.command`` (``/the-loop restart``, ``standing …``)
  reach past any one work item, so the room holds them only when ``slack.publish`` names
  them — they are never granted by default.

Members are Slack member ids, never names: names are attacker-chosen. An ``@handle`` in
the file is resolved to its id once, at activation (``looproom.decide.members``), so
the lists here hold ids only. An empty decider list denies every decision. A refusal
names the act that is not the member's and the remedy; a stranger is told no more than
before the grants existed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from looproom.relay.forms import Destinations
from looproom.settings.grants import (
    ACTS,
    CONTEXT,
    CONTROL,
    CREATE,
    DECISION_RECORD,
    DEFAULT_GRANTS,
    GATE_FEEDBACK,
    GRANTABLE,
    INSTANCE,
    REPLY,
    STANDING,
)

#: What a collaborator may do: give input. Deciding, steering and creating bind the work
#: item and are a decider's alone — the-loop draws the same line for its collaborators.
INPUT_ACTS = frozenset({REPLY, CONTEXT})

#: What each act is called in a refusal, so a member knows what they tried to do.
ACT_WORDS = {
    REPLY: "replying to the-loop",
    GATE_FEEDBACK: "answering a gate (approve, changes)",
    CONTROL: "steering a run (execute, start, stop, skip …)",
    CONTEXT: "adding context to a work item",
    DECISION_RECORD: "recording a decision on a work item",
    CREATE: "opening a new work item",
    INSTANCE: "steering the-loop instance (status, restart, upgrade)",
    STANDING: "steering standing sessions (list, start, stop, restart, talking to one)",
}


@dataclass(frozen=True)
class AccessPolicy:
    """The rules in force: the bot's own id, the deciders, people → GitHub logins, which
    relay destinations are configured, the collaborators, and the acts the room grants
    beyond replying (every act unless ``slack.publish`` narrows it)."""

    own_id: str
    authorized: frozenset[str]
    people: Mapping[str, str] = field(default_factory=dict)
    destinations: Destinations = field(default_factory=Destinations)
    collaborators: frozenset[str] = frozenset()
    granted: frozenset[str] = DEFAULT_GRANTS
    #: Each work item's own collaborators (``add-collaborator``), by member id.
    roster: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def on(self, work_item: str) -> AccessPolicy:
        """The policy on ``work_item``: its own collaborators count as collaborators."""
        extra = self.roster.get(work_item, frozenset())
        return replace(self, collaborators=self.collaborators | extra) if extra else self

    def role(self, member: str) -> str:
        """``decider``, ``collaborator`` or ``""`` for a stranger."""
        if member and member in self.authorized:
            return "decider"
        if member and member in self.collaborators:
            return "collaborator"
        return ""


def room_grants(act: str, policy: AccessPolicy) -> bool:
    """Whether the room may do ``act`` at all: a reply always, the rest when published."""
    return act == REPLY or (act in GRANTABLE and act in policy.granted)


def may(member: str, act: str, policy: AccessPolicy) -> bool:
    """Whether ``member`` may do ``act`` (one of ``ACTS``); fails closed on an unknown act,
    an act the room was not granted, and anyone on neither list."""
    if act not in ACTS or not room_grants(act, policy):
        return False
    role = policy.role(member)
    return role == "decider" or (role == "collaborator" and act in INPUT_ACTS)


def refusal_text(member: str, act: str, policy: AccessPolicy) -> str:
    """What a member who may not do ``act`` is told: which act is not theirs, and the remedy.

    A stranger hears what strangers always heard — the allow-list and its remedy — and
    nothing about the grants or who holds them.
    """
    role = policy.role(member)
    if not role:
        return unauthorized_text(member, policy.authorized)
    what = ACT_WORDS.get(act, f"`{act}`")
    if not room_grants(act, policy):
        return (
            f"This room is not granted `{act}` — {what} — so nothing was relayed: "
            "`slack.publish` in theloop.yaml does not list it. Ask an operator to add it."
        )
    return (
        f"As a collaborator you may reply and add context, but `{act}` — {what} — is for "
        "members in `slack.authorizedUsers`, so nothing was relayed. Ask one of them, or "
        "an operator to list you there."
    )


def unauthorized_text(member: str, authorized: frozenset[str]) -> str:
    """The refusal a stranger sees, naming the remedy."""
    nobody = " (the list is empty, so nobody may)" if not authorized else ""
    return (
        f"Only members listed in `slack.authorizedUsers` may decide for the-loop{nobody}, "
        f"and your member id `{member or 'unknown'}` is not there — nothing was relayed. "
        "Ask an operator to add it to `slack.authorizedUsers` in theloop.yaml."
    )


def holders(policy: AccessPolicy) -> list[str]:
    """Each act and who holds it, for ``!theloop status``."""
    lines = []
    for act in ACTS:
        if not room_grants(act, policy):
            lines.append(f"{act}: not granted to the room (`slack.publish`)")
            continue
        who = sorted(policy.authorized) + (
            sorted(policy.collaborators - policy.authorized) if act in INPUT_ACTS else []
        )
        lines.append(f"{act}: " + (", ".join(f"`{m}`" for m in who) or "nobody"))
    for item, members in sorted(policy.roster.items()):
        names = ", ".join(f"`{m}`" for m in sorted(members))
        lines.append(f"collaborators on {item} (reply, context there only): {names}")
    return lines
