"""``/the-loop status``: the work items the room follows — where, waiting on what, asking whom.

From the room's own memory (the threads it posted and the questions still open) and, when
``THELOOP_LOOP_API`` is configured, the-loop's ``GET /api/v1/work-items`` (its last
control command per work item). the-loop's answer is a peer's words, made inert before
it is shown; when it cannot be asked in time the room's memory is shown alone, saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from looproom.clients.the_loop import LoopApi
from looproom.decide.authorization import INPUT_ACTS, AccessPolicy
from looproom.room.memory import Asked, ItemState
from looproom.slack.text import escape, neutralise

#: Lines shown at most: an ephemeral answer is read, not scrolled.
MAX_ITEMS = 20
#: A slash command is answered within Slack's 3 s, so the-loop gets less than that.
LOOP_TIMEOUT = 1.5


@dataclass(frozen=True)
class Followed:
    """One work item as the room knows it: its threads, and its open questions."""

    ref: str
    where: tuple[str, ...] = ()  # channel ids the work item has a thread in
    state: ItemState = field(default_factory=ItemState)


def loop_records(api: str, token: str = "") -> tuple[dict[str, Mapping[str, Any]], str]:
    """the-loop's work items by ref, and ``""`` — or nothing and why not. ``token``: the
    bearer token a proxy in front of the-loop may ask."""
    if not api:
        return {}, ""
    read = LoopApi(api, token, timeout=LOOP_TIMEOUT).work_items()
    if read.status != 200:
        return {}, f"the-loop did not answer ({read.answer.error or read.status})"
    records = read.value or []
    found = {str(r.get("ref")): r for r in records if isinstance(r, Mapping) and r.get("ref")}
    return found, ""


def gather(
    items: Iterable[tuple[str, ItemState]], threads: Iterable[tuple[str, str]]
) -> list[Followed]:
    """The room's work items: those it has state for and those it has a thread for."""
    where: dict[str, list[str]] = {}
    for ref, channel in threads:
        where.setdefault(ref, []).append(channel)
    states = dict(items)
    refs = sorted(set(states) | set(where))
    return [Followed(ref, tuple(where.get(ref, ())), states.get(ref, ItemState())) for ref in refs]


def waiting_on(state: ItemState) -> tuple[str, str]:
    """(what the work item waits on from the room, the act that answers it) — ``("", "")``
    when nothing."""
    found = open_questions(state)
    return (found[0][1], found[0][2]) if found else ("", "")


def open_questions(state: ItemState) -> list[tuple[Asked, str, str]]:
    """Each question the work item waits on people for, the one to answer first first:
    (the question as drawn, what it waits on, the act that answers it)."""
    found: list[tuple[Asked, str, str]] = []
    if state.ask is not None and _open(state.ask):
        found.append((state.ask, "an answer to its question", "work-item.reply"))
    if state.gate is not None and _open(state.gate):
        waits = f"the `{state.gate.node or 'open'}` gate: `approve` or `changes <why>`"
        found.append((state.gate, waits, "gate.feedback"))
    if state.selection is not None and _open(state.selection) and state.selection_done is False:
        found.append((state.selection, "the phase selection: `execute`", "control.command"))
    return found


def _open(asked: Asked | None) -> bool:
    return asked is not None and not asked.answered_by


def members_asked(act: str, policy: AccessPolicy) -> tuple[str, ...]:
    """The members who may answer with ``act``: its holders (and, for a reply, the
    collaborators); none when the room is not granted it."""
    if act not in INPUT_ACTS and act not in policy.granted:
        return ()
    members = sorted(policy.authorized)
    if act in INPUT_ACTS:
        members += sorted(policy.collaborators - policy.authorized)
    return tuple(members)


def asked(act: str, policy: AccessPolicy) -> str:
    """Who may answer with ``act``: the members who hold it, or why nobody does."""
    if act not in INPUT_ACTS and act not in policy.granted:
        return "nobody: the room is not granted it (`slack.publish`)"
    members = members_asked(act, policy)
    return ", ".join(f"<@{m}>" for m in members) or "nobody (`slack.authorizedUsers` is empty)"


def line(item: Followed, policy: AccessPolicy, record: Mapping[str, Any] | None) -> str:
    """One work item: where it is, what it waits on and who is asked, and the-loop's view."""
    where = ", ".join(f"<#{channel}>" for channel in item.where) or "no thread here"
    waits, act = waiting_on(item.state)
    said = f"waits on {waits} — asked: {asked(act, policy)}" if waits else "waits on nobody here"
    loop = _loop_line(record) if record is not None else ""
    return f"• `{item.ref}` — in {where}; {said}{loop}"


def _loop_line(record: Mapping[str, Any]) -> str:
    control = record.get("control")
    command = control.get("command") if isinstance(control, Mapping) else ""
    if not command:
        return "; the-loop: no control command yet"
    return f"; the-loop: last command `{escape(neutralise(str(command)))}`"


def status_text(
    followed: list[Followed],
    policy: AccessPolicy,
    records: Mapping[str, Mapping[str, Any]],
    problem: str = "",
    only: str = "",
) -> str:
    """``/the-loop status [<work item>]``'s answer."""
    if only:
        followed = [item for item in followed if item.ref == only] or [Followed(only)]
    if not followed:
        return "The room follows no work item yet: the-loop has posted nothing here."
    shown = followed[:MAX_ITEMS]
    lines = [f"*Work items the room follows* ({len(followed)}):"]
    lines += [line(item, policy, records.get(item.ref)) for item in shown]
    if len(followed) > len(shown):
        lines.append(f"… and {len(followed) - len(shown)} more — `/the-loop status <work item>`")
    if problem:
        lines.append(f"_{problem}: shown from the room's memory alone._")
    return "\n".join(lines)
