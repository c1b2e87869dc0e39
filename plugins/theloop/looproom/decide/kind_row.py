"""One row of the table of decision kinds (:mod:`looproom.decide.kinds`): what a kind of
decision is — its form, act, question, verb, reader, checks, button, words and command —
and the row of one of the-loop's control commands, which most verbs are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from looproom.decide import grammar
from looproom.decide import kind_checks as checks
from looproom.decide.changes import Change
from looproom.decide.kind_checks import PressCheck, TypedCheck
from looproom.relay import forms, records, standing
from looproom.settings import grants


@dataclass(frozen=True)
class DecisionKind:
    """One kind of decision, everything about it in one row."""

    name: str  # stored with the decision; its idempotency key includes it
    label: str  # what the room's replies call it: "the approval of @alice"
    #: The form the-loop accepts it in.
    form: forms.Form | records.Talk | records.Refusal | standing.StandingReply
    act: str  # the act a member must be granted to make it (looproom.decide.authorization)
    settles: str = ""  # the open question it answers ("" when it answers none)
    verb: str = ""  # the typed verb ("" when it is not typed as a command)
    phrases: tuple[str, ...] = ()  # other typed forms of the verb ("request changes")
    read: grammar.Reader | None = None  # the typed verb's arguments
    typed: TypedCheck | None = None
    button: str = ""  # the action id of its button ("" when it has none)
    pressed: PressCheck | None = None
    after: str = ""  # what happens next once it landed, said with the ✅
    #: Said instead of "✅ recorded — moving on" once it landed ({who}, {count} filled in).
    receipt: str = ""
    #: Typed only as an explicit command (``!do …``, a mention, ``the-loop do …``): its
    #: verb opens ordinary sentences too ("do we need this?"), which must stay words.
    addressed_only: bool = False
    #: Its ``!verb`` command's help line ("" = no such command).
    usage: str = ""
    #: The ``!verb`` command's words are read from Slack's own text, where a mention is the
    #: member's id and a room its id — never a name a GitHub login could share.
    mentions: bool = False
    #: What recording it changes in the room at once (a roster, a move), and its undoing.
    change: Change | None = None


def control(
    verb: str, label: str, reader: grammar.Reader, after: str, usage: str, **more: Any
) -> DecisionKind:
    """A row for one of the-loop's control commands, relayed as its keyword; ``about``:
    one naming people or a room."""
    about = more.pop("about", False)
    return DecisionKind(
        verb,
        label=label,
        form=forms.about(verb) if about else forms.control(verb),
        act=grants.CONTROL,
        verb=verb,
        read=reader,
        typed=checks.typed_about if about else checks.typed_control,
        after=after,
        usage=usage,
        mentions=about,
        **more,
    )
