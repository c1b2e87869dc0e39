"""``@theloop help`` (and ``help public``): the grammar of the room it is asked in.

What may be typed differs from room to room: a work item's thread needs no ref, a room
with one repository takes ``#7``, a kickoff room opens work items, ``slack.publish``
grants some acts and not others, and a deployment may have renamed the keywords or added
its own command words. So the answer is built from the room it is asked in — only to
the member who asked, or with ``help public`` as a reply everyone in the thread sees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from looproom import verb_names
from looproom.decide import kinds
from looproom.decide.authorization import ACT_WORDS, INPUT_ACTS, AccessPolicy, room_grants
from looproom.decide.kind_row import DecisionKind
from looproom.settings import keywords

HELP, PUBLIC = "help", "public"
_MENTION = re.compile(r"^\s*<@([UW][A-Z0-9]+)(?:\|[^>]*)?>[\s:,]*")


@dataclass(frozen=True)
class AskedIn:
    """What the room a question was asked in is: the work item its thread (or the room)
    belongs to, its one repository, and the repositories its kickoff opens work items in."""

    work_item: str = ""
    thread_bound: bool = False
    repository: str = ""
    kickoff: tuple[str, ...] = ()


def asked(text: str, own_id: str) -> str:
    """``"private"`` or ``"public"`` when ``text`` is ``@bot help [public]``, else ``""``."""
    found = _MENTION.match(text or "")
    if found is None or not own_id or found[1] != own_id:
        return ""
    words = (text or "")[found.end() :].split("\n", 1)[0].split()
    if not words or words[0].lower().rstrip("?!.") != HELP:
        return ""
    return "public" if len(words) > 1 and words[1].lower() == PUBLIC else "private"


def text(room: AskedIn, policy: AccessPolicy) -> str:
    """The grammar as it holds in ``room`` for ``policy``."""
    said = policy.destinations.keywords
    lines = [f"*What you can say here* — {_where(room)}"]
    for kind in kinds.KINDS:
        if not kind.verb or kind.verb in (verb_names.RECORD_CONTEXT, verb_names.RECORD_DECISION):
            continue
        lines.append(_verb_line(kind, room, policy))
    for word, keyword in sorted(said.custom.items()):
        lines.append(f"• `{word}`{_ref_hint(room)} — relayed as `{keyword}` (the operator's own)")
    lines.append(
        "• `@theloop <words>` — to the agent, on the record; `record-context` — this thread "
        "as context; `record-decision <what> [— why: <why>]` — a decision on record"
    )
    if room.kickoff:
        repos = ", ".join(f"`{repo}`" for repo in room.kickoff)
        prefix = " (`<repo>: <title>` picks one)" if len(room.kickoff) > 1 else ""
        lines.append(
            f"• `@theloop <title>` as a new message — opens a work item in {repos}{prefix}"
        )
    lines.append("• `/the-loop help` — the slash command, from any room")
    granted = [act for act in sorted(ACT_WORDS) if room_grants(act, policy)]
    lines.append("Granted here: " + ", ".join(f"`{act}`" for act in granted))
    lines.append(
        "Deciding and steering are for deciders (`slack.authorizedUsers`); collaborators "
        f"may {' and '.join(sorted(ACT_WORDS[act] for act in INPUT_ACTS))}."
    )
    return "\n".join(lines)


def _where(room: AskedIn) -> str:
    if room.work_item and room.thread_bound:
        return f"in this thread, about `{room.work_item}`; no ref is needed."
    if room.work_item:
        return f"this room is bound to `{room.work_item}`; no ref is needed."
    if room.repository:
        return f"name the work item after the verb: `#7` means `{room.repository}#7`."
    return "name the work item after the verb: `github:owner/repo#7`, or paste its link."


def _ref_hint(room: AskedIn) -> str:
    return "" if room.work_item else " <work item>"


def _verb_line(kind: DecisionKind, room: AskedIn, policy: AccessPolicy) -> str:
    said = policy.destinations.keywords
    keyword = said.of(kind.verb)
    relayed = f" — relayed as `{keyword}`" if keyword and keyword != f"the-loop {kind.verb}" else ""
    last = keyword.split()[-1].lower() if keyword else ""
    if relayed and last not in kinds.READERS and said.by_last_word(last) == kind.verb:
        relayed += f"; after a mention, `{last}` too"
    if kind.verb in keywords.COMMANDS and not keyword:
        relayed = " (switched off in this deployment)"
    off = "" if room_grants(kind.act, policy) else f" (not granted here: `{kind.act}`)"
    bang = "!" if kind.addressed_only else ""
    return f"• `{bang}{kind.verb}`{_ref_hint(room)}{relayed}{off}"
