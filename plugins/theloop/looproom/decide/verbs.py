"""The verbs a member types, and how each verb's words are read.

The names of the decision kinds (:mod:`looproom.decide.kinds` holds their rows) and, for
each typed verb, the reader of what follows it: ``execute without 2, 5``, ``changes <why>``,
``do <task>``. A reader only reads; what is checked against the room is the kind's check
(:mod:`looproom.decide.kind_checks`). the-loop's control commands are named where its
keywords are (:mod:`looproom.settings.keywords`, the one table of its default keywords).
"""

from __future__ import annotations

import re

from looproom.decide import grammar
from looproom.verb_names import APPROVE, CHANGES, EXECUTE, SKIP

#: An answer has no verb: it is what is said in an open ask's thread, or its button.
ANSWER = "answer"
#: One of the operator's own command words (``routing.control.commands``).
OWN = "own-command"
#: What a member says to the agent, on the record: a reply, the thread as context, a decision.
REPLY, CONTEXT, DECISION = "reply", "context", "decision"
#: The open questions a decision settles (see ``looproom.room.memory.Memory.settle``).
SELECTION, GATE, ASK = "selection", "gate", "ask"


def read_execute(ref: str, tail: str, words: str) -> grammar.Parsed:
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


def read_skip(ref: str, tail: str, words: str) -> grammar.Parsed:
    return grammar.Command(SKIP, ref, grammar.items(tail))


def read_approve(ref: str, tail: str, words: str) -> grammar.Parsed:
    return grammar.Command(APPROVE, ref, words=words)


def read_changes(ref: str, tail: str, words: str) -> grammar.Parsed:
    if not words:
        return grammar.Refusal(
            "changes-without-reason",
            "`changes` needs the reason — say `changes <what should change>`; "
            "nothing was recorded.",
            ref,
        )
    return grammar.Command(CHANGES, ref, words=words)


#: the-loop's instance address, ``instance:<name>``: which instance takes a work item
#: where the-loop's instances run in its ``addressed`` scope mode (its name's grammar).
_ADDRESS = re.compile(r"^instance:[a-z0-9][a-z0-9-]{0,39}$", re.IGNORECASE)


def read_bare(verb: str) -> grammar.Reader:
    """A control verb that takes no words: words after it make the message conversation
    (a refusal only when it was addressed to the bot). One word may follow: the-loop's
    instance address (``start instance:team-b``), relayed on the keyword's line."""

    def read(ref: str, tail: str, words: str) -> grammar.Parsed:
        if _ADDRESS.match(words.strip()):
            return grammar.Command(verb, ref, words="instance:" + words.strip()[9:].lower())
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


def read_said(verb: str, what: str) -> grammar.Reader:
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


def read_own(keyword: str) -> grammar.Reader:
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
