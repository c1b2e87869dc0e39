"""The order a typed message or a press is judged in: map → drop own → authorize → bound →
check.

The order is load-bearing, and the same on both paths: what belongs to no work item is
never read; the bot's own messages and other bots' are never input; an unauthorized
member's words are never validated, recorded or relayed — they get a refusal naming the
remedy; a work item that is not the operator's (``looproom.decide.bounds``) is refused,
naming it, whoever names it and however. Only then does the decision's kind
(``looproom.decide.kinds``) check it against what the room was shown. Nothing here does
I/O: the desk records what is admitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from looproom import workitem
from looproom.decide import grammar, kinds, talk
from looproom.decide.authorization import AccessPolicy, may, refusal_text
from looproom.decide.kind_row import DecisionKind
from looproom.decide.presses import Press
from looproom.decide.verdict import IGNORED, REFUSED, Verdict, refuse
from looproom.relay import standing
from looproom.relay.decision import Decision
from looproom.room.memory import Asked, ItemState
from looproom.settings.grants import REPLY, STANDING
from looproom.times import later

#: Why a work item may not be named here, ``""`` when it may (``Bound.refusal``).
Named = Callable[[str], str]
#: Slack message subtypes that are not a new message: an edit, a deletion.
NOT_NEW = frozenset({"message_changed", "message_deleted"})


@dataclass(frozen=True)
class Received:
    """One message as the adapter received it.

    ``addressed`` marks an explicit command (``!execute …``): it is always answered, even
    where it maps to no work item. ``ts`` is the message's own id in its channel.
    ``subtype`` is Slack's message subtype (``message_changed`` for an edit).
    ``to_bot`` marks words addressed to the bot (a mention, or a direct message naming
    a work item): a reply to the session. ``files`` names what was attached, with links;
    ``attached`` is what Slack said of each file, which a reply carries to the relay.
    """

    member: str
    text: str
    channel: str
    ts: str
    thread_ts: str = ""
    is_bot: bool = False
    addressed: bool = False
    subtype: str = ""
    to_bot: bool = False
    files: str = ""
    attached: tuple[dict[str, Any], ...] = ()
    #: Where it was said when there is no message (a slash command's trigger): the key.
    origin: str = ""
    #: Already read (a submitted form says what it is): not parsed from ``text`` again.
    parsed: grammar.Parsed | None = None


@dataclass(frozen=True)
class Where:
    """What the room knows about where it was said: the work item its thread (or the
    room it is bound to) belongs to, the room's one repository (for ``#7``), and whether
    the message's thread is the work item's own (where any reply may answer an ask)."""

    work_item: str = ""
    repository: str = ""
    thread_bound: bool = False


def draft(
    work_item: str,
    member: str,
    policy: AccessPolicy,
    at: str,
    *,
    origin: str,
    channel: str,
    ts: str,
    thread: str = "",
) -> Decision:
    """A decision not yet of any kind: who, on what, where and when — the one builder
    both paths share, so a typed and a pressed decision are told apart only by kind."""
    return Decision(
        kind="",
        work_item=work_item,
        member=member,
        origin=origin,
        at=at,
        channel=channel,
        ts=ts,
        thread=thread,
        login=policy.people.get(member, ""),
    )


def _authorize(member: str, act: str, policy: AccessPolicy) -> Verdict | None:
    """The refusal for a member who may not do ``act`` — ``None`` for one who may. A
    stranger's refusal is ``unauthorized`` (⚠️ and a warning); a member on a list who
    lacks this act is told which act is not theirs."""
    if may(member, act, policy):
        return None
    reason = "unauthorized" if not policy.role(member) else "act-not-granted"
    return refuse(reason, refusal_text(member, act, policy))


# -- typed ----------------------------------------------------------------------------------


def judge_typed(
    said: Received,
    where: Where,
    state_of: Callable[[str], ItemState],
    policy: AccessPolicy,
    now: str,
    *,
    bound: Named,
    spelling: Callable[[str], str] = lambda ref: ref,
) -> Verdict:
    """One typed message through the order, without I/O; ``bound`` says why a work item
    may not be named here (``looproom.decide.bounds.Bound.refusal``); ``spelling`` gives a
    work item named in another letter case or form as the room keeps it."""
    if said.subtype in NOT_NEW:
        # An edit re-sends the whole message under a new ts: read as new, a decision would
        # be taken twice, or a word changed after the fact would decide anew.
        return Verdict(IGNORED, "edited")
    parsed = said.parsed
    if parsed is None:
        parsed = _spoken(kinds.read(said.text, policy.own_id, policy.destinations.keywords), said)
    work_item, problem = _map(parsed, where)
    work_item = spelling(work_item) if work_item else work_item
    if not work_item:
        if said.addressed and not (said.member == policy.own_id or said.is_bot):
            return Verdict(REFUSED, "unmapped", problem)
        return Verdict(IGNORED, "unmapped")
    if said.is_bot or (policy.own_id and said.member == policy.own_id):
        return Verdict(IGNORED, "self-authored")
    policy = policy.on(work_item)  # its own collaborators, on it alone
    state = state_of(work_item)
    answers = _answers(said, where, state.ask)
    replies = isinstance(parsed, grammar.Text) and not answers and said.to_bot
    if isinstance(parsed, grammar.Text) and grammar.to_another(said.text, policy.own_id):
        return Verdict(IGNORED, "conversation")  # "@bob what do you think?" asks Bob
    if isinstance(parsed, grammar.Text) and not (replies or _awaited(said, where, state)):
        return Verdict(IGNORED, "conversation")
    unauthorized = _authorize(said.member, _act(parsed, work_item), policy)
    if unauthorized is not None:
        return unauthorized
    foreign = bound(work_item)
    if foreign:
        return refuse("not-the-operators", foreign)
    if isinstance(parsed, grammar.Refusal):
        return refuse(parsed.reason, parsed.text)
    base = draft(
        work_item,
        said.member,
        policy,
        now,
        origin=said.origin or f"{said.channel}:{said.ts}",
        channel=said.channel,
        ts=said.ts,
        thread=said.thread_ts,  # a reply's ts is no thread: answers go to its thread
    )
    return _as_kind(parsed, said, state, base, policy, replies=replies, answers=answers)


def _as_kind(
    parsed: grammar.Parsed,
    said: Received,
    state: ItemState,
    base: Decision,
    policy: AccessPolicy,
    *,
    replies: bool,
    answers: bool,
) -> Verdict:
    """An authorized member's words as their kind, checked against what the room was shown:
    words to the bot a reply, plain words in an open ask's thread its answer, a verb its
    own kind — unless that kind cannot reach the work item."""
    if replies:
        words = talk.without_mentions_of(said.text, policy.own_id)
        words = "\n\n".join(part for part in (words, said.files) if part)
        reply = grammar.Command(kinds.REPLY, words=words)
        kind = kinds.BY_NAME[kinds.REPLY]
        return _check(kind, reply, state, replace(base, files=said.attached), policy)
    if isinstance(parsed, grammar.Text):
        if not answers:
            # A plain reply at a gate is not an answer to it: the-loop reads "not
            # approved yet" as an approval, so only the explicit verbs answer a gate.
            return refuse(
                "not-a-gate-answer",
                "At this gate say `approve [words]` or `changes <why>` — a plain reply is "
                "not taken as an answer, so nothing was relayed.",
            )
        words = "\n\n".join(part for part in (parsed.text, said.files) if part)
        parsed = grammar.Command(kinds.ANSWER, words=words)
        kind = kinds.BY_NAME[kinds.ANSWER]
    else:
        kind = kinds.kind_of(parsed.verb)
    refusal = kinds.unwritable(kind, base.work_item, policy.destinations)
    if refusal:
        return refuse("unwritable", refusal)
    return _check(kind, parsed, state, base, policy)


def _check(
    kind: DecisionKind,
    parsed: grammar.Parsed,
    state: ItemState,
    base: Decision,
    policy: AccessPolicy,
) -> Verdict:
    """``parsed`` through its kind's check; admitted, it says the question it settles."""
    assert kind.typed is not None  # every kind with a verb, the answer and the reply are typed
    return kinds.settled(kind.typed(parsed, state, base, policy.destinations))


def _act(parsed: grammar.Parsed, work_item: str) -> str:
    """The act what was typed is; words to a standing session steer it, which is a
    ``standing.command`` — it belongs to no work item, so no collaborator has a say."""
    act = kinds.act_of(parsed)
    return STANDING if act == REPLY and standing.name_of(work_item) else act


def _spoken(parsed: grammar.Parsed, said: Received) -> grammar.Parsed:
    """Ordinary words stay words: a verb that opens sentences too (``do``), or a bare verb
    followed by words (``stop that``), is a command only when addressed to the bot."""
    if isinstance(parsed, grammar.Text) or said.addressed or parsed.addressed:
        return parsed
    if isinstance(parsed, grammar.Refusal) and parsed.prose:
        return grammar.Text(said.text)
    if isinstance(parsed, grammar.Command) and kinds.kind_of(parsed.verb).addressed_only:
        return grammar.Text(said.text)
    return parsed


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


def _answers(said: Received, where: Where, ask: Asked | None) -> bool:
    """Whether a plain message answers the open ask: a reply in the ask's thread, or in
    the work item's own thread after the ask was posted."""
    if ask is None or ask.answered_by or not said.thread_ts:
        return False
    return said.thread_ts == ask.ts or (where.thread_bound and later(said.ts, ask.ts))


def _awaited(said: Received, where: Where, state: ItemState) -> bool:
    """Whether plain words are said where an answer is awaited: the ask, or a gate."""
    return _answers(said, where, state.ask) or _in_thread(said, state.gate)


def _in_thread(said: Received, asked: Asked | None) -> bool:
    return asked is not None and bool(said.thread_ts) and said.thread_ts == asked.ts


# -- pressed --------------------------------------------------------------------------------


def judge_press(
    press: Press,
    locate: Callable[[str, str], str],
    state_of: Callable[[str], ItemState],
    policy: AccessPolicy,
    now: str,
    *,
    bound: Named,
) -> Verdict:
    """One press through the order: map (from the pressed message itself, so a top-level
    room message resolves too) → drop own → authorize → still open as drawn? → decide."""
    kind = kinds.BY_BUTTON.get(press.action_id)
    if kind is None or kind.pressed is None:
        return Verdict(IGNORED, "not-a-decision")  # a box ticked, a link opened
    work_item = locate(press.channel, press.ts) or (
        locate(press.channel, press.thread_ts) if press.thread_ts else ""
    )
    if not work_item:
        return refuse("unmapped", "This message is not one of the-loop's questions any more.")
    if press.member == policy.own_id:
        return Verdict(IGNORED, "self-authored")
    policy = policy.on(work_item)
    unauthorized = _authorize(press.member, kind.act, policy)
    if unauthorized is not None:
        return unauthorized
    foreign = bound(work_item)
    if foreign:
        return refuse("not-the-operators", foreign)
    refusal = kinds.unwritable(kind, work_item, policy.destinations)
    if refusal:
        return refuse("unwritable", refusal)
    base = draft(
        work_item,
        press.member,
        policy,
        now,
        origin=f"{press.channel}:{press.ts}:{press.action_id}",
        channel=press.channel,
        ts=press.ts,
        thread=press.thread_ts or press.ts,
    )
    return kinds.settled(kind.pressed(press, state_of(work_item), base))
