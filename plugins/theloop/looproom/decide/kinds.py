"""The table of decision kinds: for each, its verb, reader, checks, relay form, label, button.

A decision a member makes — typed or pressed — is one of these kinds, and everything the
bot does with one is looked up in :data:`KINDS`: how its words are read, what is checked
against what the room was shown (typed and pressed), the form the-loop accepts it in,
which open question it settles, what the room's replies call it, and the button that
makes it. A new kind is a row here and its checks beside it; only the Errbot adapter's
``!verb`` command, and a button's drawing in ``looproom.room.buttons``, live elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from looproom.decide import authorization, grammar, subjects, talk
from looproom.decide.decision import (
    ADMITTED,
    Decision,
    Verdict,
    refuse,
    unanswered,
)
from looproom.decide.presses import Press, ticked
from looproom.relay import forms, keywords, records, standing
from looproom.room import buttons
from looproom.room import checklist as checklists
from looproom.room.memory import Asked, ItemState

EXECUTE, SKIP, APPROVE, CHANGES, ANSWER = "execute", "skip", "approve", "changes", "answer"
START, STOP, PAUSE, RESUME = keywords.START, keywords.STOP, keywords.PAUSE, keywords.RESUME
CONTRIBUTE, CLEANUP, DO, REVIEW = (
    keywords.CONTRIBUTE,
    keywords.CLEANUP,
    keywords.DO,
    keywords.REVIEW,
)
ADD_COLLABORATOR, REMOVE_COLLABORATOR = keywords.ADD_COLLABORATOR, keywords.REMOVE_COLLABORATOR
ADD_CHANNEL, REMOVE_CHANNEL = keywords.ADD_CHANNEL, keywords.REMOVE_CHANNEL
#: One of the operator's own command words (``routing.control.commands``).
OWN = "own-command"
#: What a member says to the agent, on the record: a reply, the thread as context, a decision.
REPLY, CONTEXT, DECISION = "reply", "context", "decision"
#: The open questions a decision settles (see ``looproom.room.memory.Memory.settle``).
SELECTION, GATE, ASK = "selection", "gate", "ask"

#: A typed decision's check: the command, the work item's state, the decision so far, and
#: the configured destinations → the verdict.
TypedCheck = Callable[[grammar.Command, ItemState, Decision, forms.Destinations], Verdict]
#: A press's check: the press, the work item's state, the decision so far → the verdict.
PressCheck = Callable[[Press, ItemState, Decision], Verdict]


@dataclass(frozen=True)
class DecisionKind:
    """One kind of decision, everything about it in one row."""

    name: str  # stored with the decision; its idempotency key includes it
    label: str  # what the room's replies call it: "the approval of @alice"
    form: forms.Form | records.Talk | standing.StandingReply  # the form the-loop accepts it in
    act: str  # the act a member must be granted to make it (looproom.decide.authorization)
    settles: str = ""  # the open question it answers ("" when it answers none)
    verb: str = ""  # the typed verb ("" when it is not typed as a command)
    phrases: tuple[str, ...] = ()  # other typed forms of the verb ("request changes")
    read: grammar.Reader | None = None  # the typed verb's arguments
    typed: TypedCheck | None = None
    button: str = ""  # the action id of its button ("" when it has none)
    pressed: PressCheck | None = None
    after: str = ""  # what happens next once it landed, said with the ✅
    #: Typed only as an explicit command (``!do …``, a mention, ``the-loop do …``): its
    #: verb opens ordinary sentences too ("do we need this?"), which must stay words.
    addressed_only: bool = False


def admit(kind: str, base: Decision, **fields: Any) -> Verdict:
    """The verdict that records ``base`` as a decision of ``kind`` with ``fields``."""
    decision = replace(base, kind=kind, **fields)
    return Verdict(ADMITTED, kind, decision=decision, settles=BY_NAME[kind].settles)


def _where(asked: Asked | None) -> str:
    """Where the threaded acknowledgement goes: the question's thread (a reply is never
    a thread's parent in Slack), else the question's own message."""
    return (asked.thread or asked.ts) if asked is not None else ""


# -- reading typed arguments ----------------------------------------------------------------


def _read_execute(ref: str, tail: str, words: str) -> grammar.Parsed:
    if not tail:
        return grammar.Command(EXECUTE, ref)
    first, _, clause = tail.partition(" ")
    if first.lower() != grammar.WITHOUT:
        return grammar.Refusal(
            "execute-words",
            "`execute` takes nothing but `without <phases>` — say `execute` or "
            "`execute without 2, 5`; nothing was recorded.",
            ref,
        )
    return grammar.Command(EXECUTE, ref, grammar.items(clause), without=True)


def _read_skip(ref: str, tail: str, words: str) -> grammar.Parsed:
    return grammar.Command(SKIP, ref, grammar.items(tail))


def _read_approve(ref: str, tail: str, words: str) -> grammar.Parsed:
    return grammar.Command(APPROVE, ref, words=words)


def _read_changes(ref: str, tail: str, words: str) -> grammar.Parsed:
    if not words:
        return grammar.Refusal(
            "changes-without-reason",
            "`changes` needs the reason — say `changes <what should change>`; "
            "nothing was recorded.",
            ref,
        )
    return grammar.Command(CHANGES, ref, words=words)


def _read_bare(verb: str) -> grammar.Reader:
    """A control verb that takes no words: words after it make the message conversation
    (a refusal only when it was addressed to the bot)."""

    def read(ref: str, tail: str, words: str) -> grammar.Parsed:
        if words:
            return grammar.Refusal(
                f"{verb}-words",
                f"`{verb}` takes nothing after the work item — say `{verb}` or "
                f"`{verb} github:owner/repo#7`; nothing was recorded.",
                ref,
                prose=True,
            )
        return grammar.Command(verb, ref)

    return read


def _read_said(verb: str, what: str) -> grammar.Reader:
    """A control verb whose words are part of it: ``do <task>``, ``review <brief>``."""

    def read(ref: str, tail: str, words: str) -> grammar.Parsed:
        if not words:
            return grammar.Refusal(
                f"{verb}-without-words",
                f"`{verb}` needs the {what} — say `{verb} <{what}>`; nothing was recorded.",
                ref,
            )
        return grammar.Command(verb, ref, words=words)

    return read


def _read_own(keyword: str) -> grammar.Reader:
    """An operator's own word: it arms like ``start`` and, like it, takes no words."""

    def read(ref: str, tail: str, words: str) -> grammar.Parsed:
        if words:
            return grammar.Refusal(
                "own-command-words",
                f"`{keyword}` takes nothing after the work item; nothing was recorded.",
                ref,
                prose=True,
            )
        return grammar.Command(OWN, ref, words=keyword)

    return read


# -- the checks of a typed decision ---------------------------------------------------------


def _typed_control(
    cmd: grammar.Command, state: ItemState, base: Decision, destinations: forms.Destinations
) -> Verdict:
    """A session command: the-loop judges it against the work item (the judging checked
    that the work item takes comments and the keyword is not switched off)."""
    return admit(cmd.verb, base, words=cmd.words)


def _typed_about(
    cmd: grammar.Command, state: ItemState, base: Decision, destinations: forms.Destinations
) -> Verdict:
    """A collaborator or channel command: whom or what it names. ``remove-channel`` alone,
    typed in a room, names that room."""
    named = cmd.items
    if not named and cmd.verb == REMOVE_CHANNEL:
        named = (subjects.room_token(base.channel),) if subjects.room_token(base.channel) else ()
        if not named:
            return refuse(
                "remove-channel-room",
                "Say which room: `remove-channel #war-room`; nothing was recorded.",
            )
    return admit(cmd.verb, base, subjects=named, thread=base.thread or base.ts)


def _typed_execute(
    cmd: grammar.Command, state: ItemState, base: Decision, destinations: forms.Destinations
) -> Verdict:
    if state.selection_done:
        return refuse(
            "selection-recorded",
            "This work item's phase selection is already recorded, so there is nothing to "
            "execute — say `skip <phase>` to leave a phase out from here on.",
        )
    answered = unanswered(state.selection, "The phase selection")
    if answered is not None:
        return answered
    rows: tuple[str, ...] = ()
    if cmd.without:
        found = checklists.leave_out(state.rows(), cmd.items, grammar.WITHOUT)
        if isinstance(found, checklists.Refused):
            return refuse(found.reason, found.text)
        rows = checklists.rows(state.rows(), untick=found.tokens)
    return admit(EXECUTE, base, rows=rows, thread=_where(state.selection))


def _typed_skip(
    cmd: grammar.Command, state: ItemState, base: Decision, destinations: forms.Destinations
) -> Verdict:
    found = checklists.leave_out(state.rows(), cmd.items, SKIP)
    if isinstance(found, checklists.Refused):
        return refuse(found.reason, found.text)
    if not state.selection_done:
        # Before the gate, `skip` is `execute without`: the checklist is still open.
        instead = grammar.Command(EXECUTE, items=cmd.items, without=True)
        return _typed_execute(instead, state, base, destinations)
    refusal = forms.skip_refusal(base.work_item, destinations)
    if refusal:
        return refuse("no-checkout", refusal)
    return admit(SKIP, base, nodes=found.tokens)


def _typed_gate(kind: str) -> TypedCheck:
    def check(
        cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
    ) -> Verdict:
        gate = state.gate
        if gate is None:
            return refuse(
                "no-open-gate",
                f"No gate is open on {base.work_item} as far as this room has seen, so "
                "nothing was recorded.",
            )
        answered = unanswered(gate, f"The `{gate.node}` gate")
        if answered is not None:
            return answered
        refusal = forms.approval_refusal(cmd.words) if kind == APPROVE else ""
        if refusal:
            return refuse("approval-reads-as-changes", refusal)
        return admit(kind, base, words=cmd.words, gate=gate.node, thread=_where(gate))

    return check


def _typed_answer(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    """Words said where the open ask awaits them (the judging checked where)."""
    return admit(ANSWER, base, words=cmd.words, thread=_where(state.ask))


def _typed_reply(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    """Words addressed to the bot: a reply to the session, open question or not."""
    if not cmd.words.strip():
        return refuse("empty-reply", "There is nothing to send the agent besides the mention.")
    return admit(REPLY, base, words=cmd.words, thread=base.thread or base.ts)


def _typed_context(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    """The thread as context: the desk reads the thread, since the last record, after this."""
    return admit(CONTEXT, base, thread=base.thread or base.ts)


def _typed_decision(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    topic, why = cmd.items
    return admit(DECISION, base, words=cmd.words, topic=topic, why=why, thread=base.thread)


# -- the checks of a press ------------------------------------------------------------------


def _pressed_gate(kind: str) -> PressCheck:
    def check(press: Press, state: ItemState, base: Decision) -> Verdict:
        stale = refuse("stale", "This gate is no longer open, so nothing was relayed.")
        closed = unanswered(state.gate, "This gate", missing=stale, shown=press.ts)
        if closed is not None:
            return closed
        if kind == CHANGES:
            # A change request needs its reason; the button cannot carry one.
            return refuse(
                "changes-without-reason",
                "Say what should change: reply `changes <why>` in this thread. Nothing was "
                "relayed yet.",
            )
        return admit(kind, base, gate=state.gate.node if state.gate else "")

    return check


def _pressed_default(press: Press, state: ItemState, base: Decision) -> Verdict:
    stale = refuse("stale", "This question is no longer open, so nothing was relayed.")
    closed = unanswered(state.ask, "This question", missing=stale, shown=press.ts)
    if closed is not None:
        return closed
    default = state.ask.default if state.ask else ""
    if not default:
        return refuse("no-default", "This question states no default to accept.")
    return admit(ANSWER, base, words=default)


def _pressed_control(press: Press, state: ItemState, base: Decision) -> Verdict:
    """A control verb's button: the-loop judges it against the work item."""
    return admit(press.action_id.removeprefix(buttons.PREFIX), base)


def _pressed_execute(press: Press, state: ItemState, base: Decision) -> Verdict:
    stale = refuse("stale", "This phase selection is no longer open, so nothing was relayed.")
    closed = unanswered(state.selection, "This phase selection", missing=stale, shown=press.ts)
    if closed is not None:
        return closed
    rows = state.rows()
    if state.selection_done:
        return refuse("stale", "The phase selection is already recorded; nothing was relayed.")
    if press.value != rows.fingerprint:
        return refuse(
            "stale",
            "The checklist changed since this message showed it, so nothing was relayed — "
            "use the newest checklist in this thread.",
        )
    ticks = ticked(press.values, rows)
    return admit(EXECUTE, base, rows=checklists.rows(rows, ticks=ticks))


# -- the table ------------------------------------------------------------------------------

KINDS: tuple[DecisionKind, ...] = (
    DecisionKind(
        EXECUTE,
        label="phase selection",
        form=forms.CONTROL_COMMAND,
        act=authorization.CONTROL,
        settles=SELECTION,
        verb="execute",
        read=_read_execute,
        typed=_typed_execute,
        button=buttons.EXECUTE,
        pressed=_pressed_execute,
    ),
    DecisionKind(
        SKIP,
        label="skip",
        form=forms.SKIP,
        act=authorization.CONTROL,
        verb="skip",
        read=_read_skip,
        typed=_typed_skip,
    ),
    DecisionKind(
        APPROVE,
        label="approval",
        form=forms.APPROVAL,
        act=authorization.GATE_FEEDBACK,
        settles=GATE,
        verb="approve",
        read=_read_approve,
        typed=_typed_gate(APPROVE),
        button=buttons.APPROVE,
        pressed=_pressed_gate(APPROVE),
    ),
    DecisionKind(
        CHANGES,
        label="change request",
        form=forms.CHANGE_REQUEST,
        act=authorization.GATE_FEEDBACK,
        settles=GATE,
        verb="changes",
        phrases=("request changes",),
        read=_read_changes,
        typed=_typed_gate(CHANGES),
        button=buttons.CHANGES,
        pressed=_pressed_gate(CHANGES),
    ),
    *(
        DecisionKind(
            verb,
            label=label,
            form=forms.control(verb),
            act=authorization.CONTROL,
            verb=verb,
            read=reader,
            typed=_typed_control,
            after=after,
            addressed_only=verb in (DO, REVIEW),
            # A new work item's thread opens with a Start button.
            button=buttons.START if verb == START else "",
            pressed=_pressed_control if verb == START else None,
        )
        for verb, label, reader, after in (
            (
                START,
                "start request",
                _read_bare(START),
                "the-loop arms this work item and starts its session",
            ),
            (
                STOP,
                "stop request",
                _read_bare(STOP),
                "the-loop stops the session; nothing starts it again until someone says `start`",
            ),
            (
                PAUSE,
                "pause request",
                _read_bare(PAUSE),
                "the-loop pauses the session; `resume` wakes it",
            ),
            (RESUME, "resume request", _read_bare(RESUME), "the-loop wakes the paused session"),
            (
                CONTRIBUTE,
                "contribute request",
                _read_bare(CONTRIBUTE),
                "the-loop joins this work item as a contributor, in its contribution loop",
            ),
            (
                DO,
                "ad-hoc task",
                _read_said(DO, "task"),
                "the-loop works the task in its ad-hoc loop until you say it is done",
            ),
            (
                REVIEW,
                "review request",
                _read_said(REVIEW, "brief"),
                "the-loop reviews the pull request against the brief and changes no code",
            ),
            (
                CLEANUP,
                "cleanup request",
                _read_bare(CLEANUP),
                "the-loop reclaims this work item's local sessions and checkout",
            ),
        )
    ),
    *(
        DecisionKind(
            verb,
            label=label,
            form=forms.about(verb),
            act=authorization.CONTROL,
            verb=verb,
            read=reader,
            typed=_typed_about,
            after=after,
        )
        for verb, label, reader, after in (
            (
                ADD_COLLABORATOR,
                "collaborator grant",
                subjects.read_collaborators(ADD_COLLABORATOR),
                "they may reply and add context on this work item; deciding stays with you",
            ),
            (
                REMOVE_COLLABORATOR,
                "collaborator removal",
                subjects.read_collaborators(REMOVE_COLLABORATOR),
                "they no longer give input on this work item",
            ),
            (
                ADD_CHANNEL,
                "collaboration channel",
                subjects.read_channel(ADD_CHANNEL),
                "this work item's updates go to that room, and decisions typed there count",
            ),
            (
                REMOVE_CHANNEL,
                "channel removal",
                subjects.read_channel(REMOVE_CHANNEL, optional=True),
                "this work item's updates go back to its configured room",
            ),
        )
    ),
    # An operator's own command word: read with the deployment's keywords (``read``).
    DecisionKind(
        OWN,
        label="command",
        form=forms.OWN_COMMAND,
        act=authorization.CONTROL,
        typed=_typed_control,
        after="the-loop arms this work item on the loop that word names",
    ),
    # An answer has no verb: it is the words said in an open ask's thread, or the
    # "Defaults are fine" press.
    DecisionKind(
        ANSWER,
        label="answer",
        form=forms.REPLY,
        act=authorization.REPLY,
        settles=ASK,
        typed=_typed_answer,
        button=buttons.DEFAULT,
        pressed=_pressed_default,
    ),
    # A reply has no verb either: it is words addressed to the bot (``looproom.decide.talk``).
    DecisionKind(
        REPLY, label="reply", form=standing.REPLY_FORM, act=authorization.REPLY, typed=_typed_reply
    ),
    DecisionKind(
        CONTEXT,
        label="context",
        form=records.CONTEXT_FORM,
        act=authorization.CONTEXT,
        verb=talk.RECORD_CONTEXT,
        read=talk.read_record_context,
        typed=_typed_context,
    ),
    DecisionKind(
        DECISION,
        label="decision",
        form=records.DECISION_FORM,
        act=authorization.DECISION_RECORD,
        verb=talk.RECORD_DECISION,
        read=talk.read_record_decision,
        typed=_typed_decision,
    ),
)

BY_NAME: Mapping[str, DecisionKind] = {kind.name: kind for kind in KINDS}
BY_VERB: Mapping[str, DecisionKind] = {kind.verb: kind for kind in KINDS if kind.verb}
#: Every typed verb and phrase → its kind.
BY_WORD: Mapping[str, DecisionKind] = {
    word: kind for kind in KINDS if kind.verb for word in (kind.verb, *kind.phrases)
}
BY_BUTTON: Mapping[str, DecisionKind] = {kind.button: kind for kind in KINDS if kind.button}
#: The typed verbs, for the adapter's commands (``!execute``…).
VERBS: tuple[str, ...] = tuple(BY_VERB)
#: Every typed verb and phrase, with its reader, for :func:`looproom.decide.grammar.parse`.
READERS: Mapping[str, grammar.Reader] = {
    word: kind.read
    for kind in KINDS
    if kind.read is not None
    for word in (kind.verb, *kind.phrases)
}


def read(text: str, own_id: str = "", said: keywords.Keywords | None = None) -> grammar.Parsed:
    """One typed message read with every kind's verb, and the operator's own words in
    ``said`` (the deployment's keywords); ``own_id`` is the bot's member id."""
    if said is None or not said.custom or not said.enabled:
        return grammar.parse(text, READERS, own_id)
    own: dict[str, grammar.Reader] = {}
    for word, keyword in said.custom.items():
        for typed in (word, keyword.split()[-1].lower()):
            if typed not in READERS and said.own(typed) == word:
                own[typed] = _read_own(keyword)
    return grammar.parse(text, {**own, **READERS}, own_id)


def kind_of(verb: str) -> DecisionKind:
    """The kind a parsed command's verb is (a typed word, or the operator's own command)."""
    return BY_WORD.get(verb) or BY_NAME[verb]


def act_of(parsed: grammar.Parsed) -> str:
    """The act what was typed would be: its verb's kind's act; plain words are a reply; a
    word read as an operator's own command steers, as ``start`` does."""
    verb = parsed.verb if isinstance(parsed, grammar.Command | grammar.Refusal) else ""
    kind = BY_WORD.get(verb) or BY_NAME.get(verb) or (BY_NAME[OWN] if verb else BY_NAME[ANSWER])
    return kind.act


def target(decision: Decision, destinations: forms.Destinations) -> dict[str, Any]:
    """Where ``decision`` goes and in what form: the sink's name and its request."""
    return BY_NAME[decision.kind].form.target(decision, destinations)


#: A reply's check, for the judging: words addressed to the bot are a reply without a verb.
reply: TypedCheck = _typed_reply


def act(kind: str) -> str:
    """What a member must be granted to make a decision of ``kind``."""
    return BY_NAME[kind].act


def label(kind: str) -> str:
    """What the room's replies call a decision of ``kind``."""
    return BY_NAME[kind].label


def after(kind: str) -> str:
    """What happens next once a decision of ``kind`` landed, ``""`` when nothing to say."""
    known = BY_NAME.get(kind)
    return known.after if known is not None else ""


def unwritable(kind: DecisionKind, work_item: str, destinations: forms.Destinations) -> str:
    """Why ``kind`` cannot reach ``work_item`` — a form the-loop reads from the ticket's
    comments on a work item we cannot comment on, or a control command this deployment
    switched off — ``""`` when it can."""
    if not isinstance(kind.form, forms.Comment):
        return ""
    refusal = forms.tracker_refusal(work_item, destinations)
    if not refusal and kind.form.command:
        refusal = destinations.keywords.refusal(kind.form.command)
    return refusal


def settles(kind: str) -> str:
    """The open question a decision of ``kind`` answers, ``""`` for none."""
    known = BY_NAME.get(kind)
    return known.settles if known is not None else ""
