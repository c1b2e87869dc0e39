"""The checks of a decision kind: a typed one against what the room was shown, a press
against the message it was made on.

Each check reads the command (or the press), the work item's state as the room last saw
it and the decision so far, and returns the verdict: refused, with the words that say why,
or admitted as a decision of some kind (:func:`admit`). Which open question an admitted
decision settles is its kind's row (:mod:`looproom.decide.kinds`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from looproom.decide import grammar, subjects
from looproom.decide.presses import Press, ticked
from looproom.decide.verbs import ANSWER, CONTEXT, DECISION, REPLY
from looproom.decide.verdict import ADMITTED, Verdict, refuse, unanswered
from looproom.relay import forms
from looproom.relay.decision import Decision
from looproom.room import buttons
from looproom.room import checklist as checklists
from looproom.room.memory import Asked, ItemState
from looproom.verb_names import APPROVE, CHANGES, EXECUTE, REMOVE_CHANNEL, SKIP

#: A typed decision's check: the command, the work item's state, the decision so far, and
#: the configured destinations → the verdict.
TypedCheck = Callable[[grammar.Command, ItemState, Decision, forms.Destinations], Verdict]
#: A press's check: the press, the work item's state, the decision so far → the verdict.
PressCheck = Callable[[Press, ItemState, Decision], Verdict]


def admit(kind: str, base: Decision, **fields: Any) -> Verdict:
    """The verdict that records ``base`` as a decision of ``kind`` with ``fields`` (the
    table adds the question it settles)."""
    return Verdict(ADMITTED, kind, decision=replace(base, kind=kind, **fields))


def _where(asked: Asked | None) -> str:
    """Where the threaded acknowledgement goes: the question's thread (a reply is never
    a thread's parent in Slack), else the question's own message."""
    return (asked.thread or asked.ts) if asked is not None else ""


# -- the checks of a typed decision ---------------------------------------------------------


def typed_control(
    cmd: grammar.Command, state: ItemState, base: Decision, destinations: forms.Destinations
) -> Verdict:
    """A session command: the-loop judges it against the work item (the judging checked
    that the work item takes comments and the keyword is not switched off)."""
    return admit(cmd.verb, base, words=cmd.words)


def typed_about(
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
    refused = _jira_channel_refusal(named, destinations)
    if refused:
        return refuse("jira-channel", refused)
    return admit(cmd.verb, base, subjects=named, thread=base.thread or base.ts)


def _jira_channel_refusal(named: tuple[str, ...], destinations: forms.Destinations) -> str:
    """A Jira ticket as the work item's channel, refused where the-loop would refuse it:
    no Jira integration, a project it does not list, or a ``--listen`` (a ticket hears
    nothing)."""
    key = subjects.jira_key(named)
    if not key:
        return ""
    jira = destinations.jira
    if jira is None:
        return (
            f"`jira@{key}` needs the-loop's Jira integration, which is not configured here "
            "(`integrations.jira`); nothing was recorded."
        )
    project = key.rsplit("-", 1)[0]
    if project not in jira.projects:
        return (
            f"`jira@{key}`: project {project} is not one of the-loop's Jira projects "
            f"({', '.join(jira.projects) or 'none'}); nothing was recorded."
        )
    if subjects.listen_of(named):
        return f"`jira@{key}` is a ticket, not a room: `--listen` is for a Slack room."
    return ""


def typed_execute(
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


def typed_skip(
    cmd: grammar.Command, state: ItemState, base: Decision, destinations: forms.Destinations
) -> Verdict:
    found = checklists.leave_out(state.rows(), cmd.items, SKIP)
    if isinstance(found, checklists.Refused):
        return refuse(found.reason, found.text)
    if not state.selection_done:
        # Before the gate, `skip` is `execute without`: the checklist is still open.
        instead = grammar.Command(EXECUTE, items=cmd.items, without=True)
        return typed_execute(instead, state, base, destinations)
    refusal = forms.skip_refusal(base.work_item, destinations)
    if refusal:
        return refuse("no-checkout", refusal)
    return admit(SKIP, base, nodes=found.tokens)


def typed_gate(kind: str) -> TypedCheck:
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


def typed_answer(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    """Words said where the open ask awaits them (the judging checked where)."""
    return admit(ANSWER, base, words=cmd.words, thread=_where(state.ask))


def typed_reply(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    """Words addressed to the bot: a reply to the session, open question or not."""
    if not cmd.words.strip():
        return refuse("empty-reply", "There is nothing to send the agent besides the mention.")
    return admit(REPLY, base, words=cmd.words, thread=base.thread or base.ts)


def typed_context(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    """The thread as context: the desk reads the thread, since the last record, after this."""
    return admit(CONTEXT, base, thread=base.thread or base.ts)


def typed_decision(
    cmd: grammar.Command, state: ItemState, base: Decision, _destinations: forms.Destinations
) -> Verdict:
    topic, why = cmd.items
    return admit(DECISION, base, words=cmd.words, topic=topic, why=why, thread=base.thread)


# -- the checks of a press ------------------------------------------------------------------


def pressed_gate(kind: str) -> PressCheck:
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


def pressed_default(press: Press, state: ItemState, base: Decision) -> Verdict:
    stale = refuse("stale", "This question is no longer open, so nothing was relayed.")
    closed = unanswered(state.ask, "This question", missing=stale, shown=press.ts)
    if closed is not None:
        return closed
    default = state.ask.default if state.ask else ""
    if not default:
        return refuse("no-default", "This question states no default to accept.")
    return admit(ANSWER, base, words=default)


def pressed_control(press: Press, state: ItemState, base: Decision) -> Verdict:
    """A control verb's button: the-loop judges it against the work item."""
    return admit(press.action_id.removeprefix(buttons.PREFIX), base)


def pressed_execute(press: Press, state: ItemState, base: Decision) -> Verdict:
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
