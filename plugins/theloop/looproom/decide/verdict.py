"""The verdict on what a member said or pressed, and the open-question check.

Typed messages and presses end the same way: a :class:`Verdict` that ignores, refuses
(saying why) or admits a :class:`~looproom.relay.decision.Decision`; and both ask of the
question they answer the same thing before anything is recorded — is it still open, or
has someone answered it?
"""

from __future__ import annotations

from dataclasses import dataclass

from looproom.relay.decision import Decision
from looproom.room.memory import Asked

IGNORED, REFUSED, ADMITTED = "ignored", "refused", "admitted"


@dataclass(frozen=True)
class Verdict:
    """What to do with a message or a press: ignore it, refuse it (``text`` says why), or
    record ``decision``. ``reason`` is the label the log line carries; ``settles`` names the
    question the decision answers (``gate``/``ask``/``selection``)."""

    status: str
    reason: str
    text: str = ""
    decision: Decision | None = None
    settles: str = ""


def refuse(reason: str, text: str) -> Verdict:
    return Verdict(REFUSED, reason, text)


def already_answered(asked: Asked, what: str) -> Verdict:
    """The refusal for a question someone has answered already, naming who and when."""
    return refuse(
        "already-answered",
        f"{what} was already answered by <@{asked.answered_by}> at {asked.answered_at}, "
        "so nothing was relayed.",
    )


def unanswered(
    asked: Asked | None, what: str, *, missing: Verdict | None = None, shown: str = ""
) -> Verdict | None:
    """Why ``asked`` is not an open question a decision may answer — ``None`` when it is.

    ``missing`` is the refusal when there is no such question (``None``: none is needed);
    ``shown`` is the message a press was made on, which must be the question's own: a
    press on an older drawing answers nothing.
    """
    if asked is None or (shown and asked.ts != shown):
        return missing
    if asked.answered_by:
        return already_answered(asked, what)
    return None
