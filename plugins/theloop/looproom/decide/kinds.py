"""The table of decision kinds: each verb is one row — reader, checks, form, label, button,
and its `!verb` command (each row a :class:`~looproom.decide.kind_row.DecisionKind`).

Everything the bot does with a decision, typed or pressed, is looked up in :data:`KINDS`:
how its words are read (:mod:`looproom.decide.verbs`), what is checked against what the
room was shown (:mod:`looproom.decide.kind_checks`), the form the-loop accepts it in, the
question it settles, what the room calls it, its button, and ``usage``: the Errbot adapter
registers one ``!verb`` command per row that has one. A control verb relays one of
the-loop's commands, whose default keyword is the-loop's own (:mod:`looproom.settings.keywords`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from looproom.decide import changes, grammar, subjects, talk, verbs
from looproom.decide import kind_checks as checks
from looproom.decide.kind_row import DecisionKind, control
from looproom.decide.verbs import ANSWER, ASK, CONTEXT, DECISION, GATE, OWN, REPLY, SELECTION
from looproom.decide.verdict import ADMITTED, Verdict
from looproom.relay import forms, records, standing
from looproom.relay.decision import Decision
from looproom.room import buttons
from looproom.settings import grants, keywords
from looproom.verb_names import (
    ADD_CHANNEL,
    ADD_COLLABORATOR,
    APPROVE,
    CHANGES,
    CLEANUP,
    CONTRIBUTE,
    DO,
    EXECUTE,
    PAUSE,
    RECORD_CONTEXT,
    RECORD_DECISION,
    REMOVE_CHANNEL,
    REMOVE_COLLABORATOR,
    RESUME,
    REVIEW,
    SKIP,
    START,
    STOP,
)

#: Not a decision: a refused phase selection, written on the ticket as well as said to
#: the member (``looproom.decide.desk``), as the-loop writes it.
REFUSED_SELECTION = "refused-selection"

KINDS: tuple[DecisionKind, ...] = (
    DecisionKind(
        EXECUTE,
        label="phase selection",
        form=forms.CONTROL_COMMAND,
        act=grants.CONTROL,
        settles=SELECTION,
        verb=EXECUTE,
        read=verbs.read_execute,
        typed=checks.typed_execute,
        button=buttons.EXECUTE,
        pressed=checks.pressed_execute,
        usage="`execute` · `execute without 2, 5` — answer the phase-selection checklist.",
    ),
    DecisionKind(
        SKIP,
        label="skip",
        form=forms.SKIP,
        act=grants.CONTROL,
        verb=SKIP,
        read=verbs.read_skip,
        typed=checks.typed_skip,
        usage="`skip <phase>[, <phase>…]` — leave phases out (before or after the selection).",
    ),
    DecisionKind(
        APPROVE,
        label="approval",
        form=forms.APPROVAL,
        act=grants.GATE_FEEDBACK,
        settles=GATE,
        verb=APPROVE,
        read=verbs.read_approve,
        typed=checks.typed_gate(APPROVE),
        button=buttons.APPROVE,
        pressed=checks.pressed_gate(APPROVE),
        usage="`approve [words]` — approve the open gate.",
    ),
    DecisionKind(
        CHANGES,
        label="change request",
        form=forms.CHANGE_REQUEST,
        act=grants.GATE_FEEDBACK,
        settles=GATE,
        verb=CHANGES,
        phrases=("request changes",),
        read=verbs.read_changes,
        typed=checks.typed_gate(CHANGES),
        button=buttons.CHANGES,
        pressed=checks.pressed_gate(CHANGES),
        usage="`changes <why>` — request changes at the open gate (a reason is required).",
    ),
    control(
        START,
        "start request",
        verbs.read_bare(START),
        "the-loop arms this work item and starts its session",
        "`start [<work item>]` — the-loop arms the work item and starts its session.",
        # A new work item's thread opens with a Start button.
        button=buttons.START,
        pressed=checks.pressed_control,
    ),
    control(
        STOP,
        "stop request",
        verbs.read_bare(STOP),
        "the-loop stops the session; nothing starts it again until someone says `start`",
        "`stop [<work item>]` — the-loop stops the work item's session.",
    ),
    control(
        PAUSE,
        "pause request",
        verbs.read_bare(PAUSE),
        "the-loop pauses the session; `resume` wakes it",
        "`pause [<work item>]` — the-loop pauses the session; `resume` wakes it.",
    ),
    control(
        RESUME,
        "resume request",
        verbs.read_bare(RESUME),
        "the-loop wakes the paused session",
        "`resume [<work item>]` — the-loop wakes a paused session.",
    ),
    control(
        CONTRIBUTE,
        "contribute request",
        verbs.read_bare(CONTRIBUTE),
        "the-loop joins this work item as a contributor, in its contribution loop",
        "`contribute [<work item>]` — the-loop joins the work item as a contributor.",
    ),
    control(
        DO,
        "ad-hoc task",
        verbs.read_said(DO, "task"),
        "the-loop works the task in its ad-hoc loop until you say it is done",
        "`do [<work item>] <task>` — the-loop works an ad-hoc task.",
        addressed_only=True,
    ),
    control(
        REVIEW,
        "review request",
        verbs.read_said(REVIEW, "brief"),
        "the-loop reviews the pull request against the brief and changes no code",
        "`review [<work item>] <brief>` — the-loop reviews the pull request against a brief.",
        addressed_only=True,
    ),
    control(
        CLEANUP,
        "cleanup request",
        verbs.read_bare(CLEANUP),
        "the-loop reclaims this work item's local sessions and checkout",
        "`cleanup [<work item>]` — the-loop reclaims the work item's local resources.",
        change=changes.END,
    ),
    control(
        ADD_COLLABORATOR,
        "collaborator grant",
        subjects.read_collaborators(ADD_COLLABORATOR),
        "they may reply and add context on this work item; deciding stays with you",
        "`add-collaborator @someone` — they may reply and add context on this work item.",
        about=True,
        change=changes.GRANT,
    ),
    control(
        REMOVE_COLLABORATOR,
        "collaborator removal",
        subjects.read_collaborators(REMOVE_COLLABORATOR),
        "they no longer give input on this work item",
        "`remove-collaborator @someone` — they no longer give input on this work item.",
        about=True,
        change=changes.REVOKE,
    ),
    control(
        ADD_CHANNEL,
        "collaboration channel",
        subjects.read_channel(ADD_CHANNEL, listen=True),
        "this work item's updates go to that room, and decisions typed there count",
        "`add-channel #room [--listen all]` — this work item's conversation moves to that "
        "room (`--listen all`: any message there counts, no mention needed).",
        about=True,
        change=changes.MOVE,
    ),
    control(
        REMOVE_CHANNEL,
        "channel removal",
        subjects.read_channel(REMOVE_CHANNEL, optional=True),
        "this work item's updates go back to its configured room",
        "`remove-channel [#room]` — this work item goes back to its configured room.",
        about=True,
        change=changes.MOVE_BACK,
    ),
    # An operator's own command word: read with the deployment's keywords (``read``).
    DecisionKind(
        OWN,
        label="command",
        form=forms.OWN_COMMAND,
        act=grants.CONTROL,
        typed=checks.typed_control,
        after="the-loop arms this work item on the loop that word names",
    ),
    # An answer has no verb: it is the words said in an open ask's thread, or the
    # "Defaults are fine" press.
    DecisionKind(
        ANSWER,
        label="answer",
        form=forms.REPLY,
        act=grants.REPLY,
        settles=ASK,
        typed=checks.typed_answer,
        button=buttons.DEFAULT,
        pressed=checks.pressed_default,
    ),
    # A reply has no verb either: it is words addressed to the bot (``looproom.decide.talk``).
    DecisionKind(
        REPLY,
        label="reply",
        form=standing.REPLY_FORM,
        act=grants.REPLY,
        typed=checks.typed_reply,
        receipt="✅ The reply of {who} is on the work item, and the agent has it.",
    ),
    DecisionKind(
        CONTEXT,
        label="context",
        form=records.CONTEXT_FORM,
        act=grants.CONTEXT,
        verb=RECORD_CONTEXT,
        read=talk.read_record_context,
        typed=checks.typed_context,
        receipt="📎 {count} message(s) of this thread went to the work item and the agent as "
        "context, recorded by {who}.",
        usage="`record-context` — this thread since its last record, to the work item and agent.",
    ),
    DecisionKind(
        DECISION,
        label="decision",
        form=records.DECISION_FORM,
        act=grants.DECISION_RECORD,
        verb=RECORD_DECISION,
        read=talk.read_record_decision,
        typed=checks.typed_decision,
        receipt="📌 The decision of {who} is on the work item, and the agent has it.",
        usage="`record-decision [product|design|tech:] <what> [— why: …]` — on record.",
    ),
    DecisionKind(
        REFUSED_SELECTION,
        label="refused phase selection",
        form=records.REFUSAL_FORM,
        act=grants.CONTROL,
        receipt="⚠️ Why the phase selection of {who} was refused is on the work item too, "
        "for whoever reads it there.",
    ),
)


def settled(verdict: Verdict) -> Verdict:
    """An admitted verdict names the open question its decision's row settles, and its
    decision carries what the room will be told of it; any other verdict as it is."""
    if verdict.status != ADMITTED or verdict.decision is None:
        return verdict
    decision = stamped(verdict.decision)
    return replace(verdict, decision=decision, settles=settles(decision.kind))


def stamped(decision: Decision) -> Decision:
    """``decision`` carrying its row's words for the room — its label, what follows once
    it landed, its receipt — so the relay tells of it without knowing any kind."""
    row = BY_NAME[decision.kind]
    return replace(decision, label=row.label, after=row.after, receipt=row.receipt)


def restamped(decision: Decision) -> Decision:
    """``decision`` stamped as :func:`stamped` does when it was stored before decisions
    carried their words (it has no label) and its kind is still a row; else as it is."""
    if decision.label or decision.kind not in BY_NAME:
        return decision
    return stamped(decision)


BY_NAME: Mapping[str, DecisionKind] = {kind.name: kind for kind in KINDS}
BY_VERB: Mapping[str, DecisionKind] = {kind.verb: kind for kind in KINDS if kind.verb}
#: Every typed verb and phrase → its kind.
BY_WORD: Mapping[str, DecisionKind] = {
    word: kind for kind in KINDS if kind.verb for word in (kind.verb, *kind.phrases)
}
BY_BUTTON: Mapping[str, DecisionKind] = {kind.button: kind for kind in KINDS if kind.button}
#: The typed verbs, which the adapter reads without a `!` too.
VERBS: tuple[str, ...] = tuple(BY_VERB)
#: The rows that are an Errbot ``!verb`` command, which the adapter registers.
COMMANDS: tuple[DecisionKind, ...] = tuple(kind for kind in KINDS if kind.usage)
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
    if said is None or not said.enabled:
        return grammar.parse(text, READERS, own_id)
    own: dict[str, grammar.Reader] = {}
    for word, keyword in said.custom.items():
        for typed in (word, keyword.split()[-1].lower()):
            if typed not in READERS and said.own(typed) == word:
                own[typed] = verbs.read_own(keyword)
    plain = grammar.parse(text, {**own, **READERS}, own_id)
    last = _last_words(said)
    if not last or not isinstance(plain, grammar.Text):
        return plain
    # A renamed keyword's last word is read only after the mention, as the-loop reads
    # it: in a thread, ``go`` said to the people there is not ``loop go``.
    heard = grammar.parse(text, {**last, **own, **READERS}, own_id)
    return heard if not isinstance(heard, grammar.Text) and heard.addressed else plain


def _last_words(said: keywords.Keywords) -> dict[str, grammar.Reader]:
    """Each renamed keyword's last word → its command's reader (``go`` for ``loop go``)."""
    words = {keyword.split()[-1].lower() for keyword in said.words.values() if keyword}
    return {
        word: READERS[said.by_last_word(word)]
        for word in words
        if word not in READERS and said.by_last_word(word)
    }


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


def act(kind: str) -> str:
    """What a member must be granted to make a decision of ``kind``."""
    return BY_NAME[kind].act


def label(kind: str) -> str:
    """What the room's replies call a decision of ``kind``."""
    return BY_NAME[kind].label


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
