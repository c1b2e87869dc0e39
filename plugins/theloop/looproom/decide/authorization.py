"""Who may decide, and the order a typed message is judged in (seed 004 D6, issue 4).

Map → drop own → authorize → validate → (the caller records, then relays). The order is
load-bearing: a message that belongs to no work item is never read; the bot's own
messages and other bots' are never input; an unauthorized member's words are never
validated, recorded or relayed — they get a refusal naming the remedy. The allow-list is
``slack.authorizedUsers`` (Slack member ids, never names: names are attacker-chosen) and
an empty list denies everyone (fail closed, seed 004 R5.1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from looproom import workitem
from looproom.decide import grammar
from looproom.relay import forms
from looproom.relay.forms import Decision, Sinks
from looproom.room import checklist as checklists
from looproom.room.memory import Asked, ItemState

IGNORED, REFUSED, ADMITTED = "ignored", "refused", "admitted"
#: Slack message subtypes that are not a new message: an edit, a deletion.
NOT_NEW = frozenset({"message_changed", "message_deleted"})


@dataclass(frozen=True)
class Said:
    """One message as the adapter received it.

    ``addressed`` marks an explicit command (``!execute …``): it is always answered, even
    where it maps to no work item. ``ts`` is the message's own id in its channel.
    ``subtype`` is Slack's message subtype (``message_changed`` for an edit).
    """

    member: str
    text: str
    channel: str
    ts: str
    thread_ts: str = ""
    is_bot: bool = False
    addressed: bool = False
    subtype: str = ""


@dataclass(frozen=True)
class Where:
    """What the room knows about where it was said: the work item its thread (or the
    room it is bound to) belongs to, the room's one repository (for ``#7``), and whether
    the message's thread is the work item's own (where any reply may answer an ask)."""

    work_item: str = ""
    repository: str = ""
    thread_bound: bool = False


@dataclass(frozen=True)
class Policy:
    """The rules in force: the bot's own id, the allow-list, people → GitHub logins,
    and which relay sinks are configured."""

    own_id: str
    authorized: frozenset[str]
    people: Mapping[str, str] = field(default_factory=dict)
    sinks: Sinks = field(default_factory=Sinks)


@dataclass(frozen=True)
class Verdict:
    """What to do with a message: ignore it, refuse it (``text`` says why), or record
    ``decision``. ``reason`` is the label the log line carries; ``settles`` names the
    question the decision answers (``gate``/``ask``/``selection``)."""

    status: str
    reason: str
    text: str = ""
    decision: Decision | None = None
    settles: str = ""


def may_decide(member: str, authorized: frozenset[str]) -> bool:
    """Fail closed: only a listed Slack member id decides; an empty list denies all."""
    return bool(member) and member in authorized


def unauthorized_text(member: str, authorized: frozenset[str]) -> str:
    """The refusal an unauthorized member sees, naming the remedy (issue 4)."""
    nobody = " (the list is empty, so nobody may)" if not authorized else ""
    return (
        f"Only members listed in `slack.authorizedUsers` may decide for the-loop{nobody}, "
        f"and your member id `{member or 'unknown'}` is not there — nothing was relayed. "
        "Ask an operator to add it to `slack.authorizedUsers` in theloop.yaml."
    )


def already_answered(asked: Asked, what: str) -> Verdict:
    """The refusal for a question someone has answered already, naming who and when."""
    return Verdict(
        REFUSED,
        "already-answered",
        f"{what} was already answered by <@{asked.answered_by}> at {asked.answered_at}, "
        "so nothing was relayed.",
    )


def judge(
    said: Said, where: Where, state_of: Callable[[str], ItemState], policy: Policy, now: str
) -> Verdict:
    """The D6 pipeline for one typed message, without I/O (seed 004 D6)."""
    if said.subtype in NOT_NEW:
        # An edit re-sends the whole message under a new ts: read as new, a decision would
        # be taken twice, or a word changed after the fact would decide anew.
        return Verdict(IGNORED, "edited")
    parsed = grammar.parse(said.text)
    work_item, problem = _map(parsed, where)
    if not work_item:
        if said.addressed and not (said.member == policy.own_id or said.is_bot):
            return Verdict(REFUSED, "unmapped", problem)
        return Verdict(IGNORED, "unmapped")
    if said.is_bot or (policy.own_id and said.member == policy.own_id):
        return Verdict(IGNORED, "self-authored")
    state = state_of(work_item)
    if isinstance(parsed, grammar.Text) and not _awaited(said, where, state):
        return Verdict(IGNORED, "conversation")
    if not may_decide(said.member, policy.authorized):
        return Verdict(REFUSED, "unauthorized", unauthorized_text(said.member, policy.authorized))
    if isinstance(parsed, grammar.Refusal):
        return Verdict(REFUSED, parsed.reason, parsed.text)
    base = Decision(
        kind="",
        work_item=work_item,
        member=said.member,
        origin=f"{said.channel}:{said.ts}",
        at=now,
        channel=said.channel,
        ts=said.ts,
        login=policy.people.get(said.member, ""),
    )
    if isinstance(parsed, grammar.Text):
        return _text(said, where, parsed, state, base)
    return _COMMANDS[parsed.verb](parsed, state, base, policy.sinks)


def _map(parsed: grammar.Parsed, where: Where) -> tuple[str, str]:
    """(work item, why none) — a typed reference wins over the thread or the room."""
    ref = "" if isinstance(parsed, grammar.Text) else parsed.ref
    if not ref:
        if where.work_item:
            return where.work_item, ""
        return "", (
            "This room is not bound to one work item, so say which: "
            "`execute github:owner/repo#7`, or `#7` in a room with one repository."
        )
    if ref.startswith("#") and not where.repository:
        return "", (
            f"`{ref}` needs a repository, and this room has no single one — say "
            f"`github:owner/repo{ref}`."
        )
    named = workitem.resolve_typed(ref, where.repository)
    if named is None:
        return "", f"`{ref}` is not a work item ref like `github:owner/repo#7`."
    return str(named), ""


def _after(ts: str, than: str) -> bool:
    try:
        return float(ts) > float(than)
    except ValueError:
        return False


def _answers(said: Said, where: Where, ask: Asked | None) -> bool:
    """Whether a plain message answers the open ask: a reply in the ask's thread, or in
    the work item's own thread after the ask was posted (R12)."""
    if ask is None or ask.answered_by or not said.thread_ts:
        return False
    return said.thread_ts == ask.ts or (where.thread_bound and _after(said.ts, ask.ts))


def _awaited(said: Said, where: Where, state: ItemState) -> bool:
    """Whether plain words are said where an answer is awaited: the ask, or a gate."""
    return _answers(said, where, state.ask) or _in_thread(said, state.gate)


def _in_thread(said: Said, asked: Asked | None) -> bool:
    return asked is not None and bool(said.thread_ts) and said.thread_ts == asked.ts


def _text(
    said: Said, where: Where, parsed: grammar.Text, state: ItemState, base: Decision
) -> Verdict:
    ask = state.ask
    if ask is not None and _answers(said, where, ask):
        decision = _replace(base, forms.ANSWER, words=parsed.text, thread=_ts(ask))
        return Verdict(ADMITTED, "answer", decision=decision, settles="ask")
    # A plain reply at a gate is not an answer to it: the-loop reads "not approved
    # yet" as an approval (DESIGN §5), so only the explicit verbs answer a gate.
    return Verdict(
        REFUSED,
        "not-a-gate-answer",
        "At this gate say `approve [words]` or `changes <why>` — a plain reply is not "
        "taken as an answer, so nothing was relayed.",
    )


def _execute(cmd: grammar.Command, state: ItemState, base: Decision, sinks: Sinks) -> Verdict:
    if state.selection_done:
        return Verdict(
            REFUSED,
            "selection-recorded",
            "This work item's phase selection is already recorded, so there is nothing to "
            "execute — say `skip <phase>` to leave a phase out from here on.",
        )
    if state.selection and state.selection.answered_by:
        return already_answered(state.selection, "The phase selection")
    rows: tuple[str, ...] = ()
    if cmd.without:
        found = checklists.leave_out(state.rows(), cmd.items, grammar.WITHOUT)
        if isinstance(found, checklists.Refused):
            return Verdict(REFUSED, found.reason, found.text)
        rows = checklists.rows(state.rows(), untick=found.tokens)
    decision = _replace(base, forms.EXECUTE, rows=rows, thread=_ts(state.selection))
    return Verdict(ADMITTED, "execute", decision=decision, settles="selection")


def _skip(cmd: grammar.Command, state: ItemState, base: Decision, sinks: Sinks) -> Verdict:
    found = checklists.leave_out(state.rows(), cmd.items, grammar.SKIP)
    if isinstance(found, checklists.Refused):
        return Verdict(REFUSED, found.reason, found.text)
    if not state.selection_done:
        # Before the gate, `skip` is `execute without` (seed 003 R9.3, F1).
        return _execute(
            grammar.Command(grammar.EXECUTE, items=cmd.items, without=True), state, base, sinks
        )
    refusal = forms.skip_refusal(base.work_item, sinks)
    if refusal:
        return Verdict(REFUSED, "no-checkout", refusal)
    decision = _replace(base, forms.SKIP, nodes=found.tokens)
    return Verdict(ADMITTED, "skip", decision=decision)


def _gate(kind: str) -> Callable[[grammar.Command, ItemState, Decision, Sinks], Verdict]:
    def answer(cmd: grammar.Command, state: ItemState, base: Decision, sinks: Sinks) -> Verdict:
        gate = state.gate
        if gate is None:
            return Verdict(
                REFUSED,
                "no-open-gate",
                f"No gate is open on {base.work_item} as far as this room has seen, so "
                "nothing was recorded.",
            )
        if gate.answered_by:
            return already_answered(gate, f"The `{gate.node}` gate")
        refusal = forms.approval_refusal(cmd.words) if kind == forms.APPROVE else ""
        if refusal:
            return Verdict(REFUSED, "approval-reads-as-changes", refusal)
        decision = _replace(base, kind, words=cmd.words, gate=gate.node, thread=_ts(gate))
        return Verdict(ADMITTED, kind, decision=decision, settles="gate")

    return answer


_COMMANDS = {
    grammar.EXECUTE: _execute,
    grammar.SKIP: _skip,
    grammar.APPROVE: _gate(forms.APPROVE),
    grammar.CHANGES: _gate(forms.CHANGES),
}


def _ts(asked: Asked | None) -> str:
    """Where the threaded acknowledgement goes: the question's thread (a reply is never
    a thread's parent in Slack), else the question's own message."""
    return (asked.thread or asked.ts) if asked is not None else ""


def _replace(base: Decision, kind: str, **fields: object) -> Decision:
    return replace(base, kind=kind, **fields)
