"""A decision a member made, the verdict on what they said, and the open-question check.

Typed messages and presses end the same way: a :class:`Verdict` that ignores, refuses
(saying why) or admits a :class:`Decision`; and both ask of the question they answer the
same thing before anything is recorded — is it still open, or has someone answered it?
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from looproom.room.memory import Asked

IGNORED, REFUSED, ADMITTED = "ignored", "refused", "admitted"


@dataclass(frozen=True)
class Decision:
    """One decision a member made in the room, ready to be stored and relayed.

    ``origin`` says where it was made — ``<channel>:<ts>`` for a typed message,
    ``<channel>:<ts>:<action>`` for a press — so a redelivered message or a second press
    of the same button yields the same :attr:`key`. ``channel``/``ts`` is the message to
    acknowledge on, ``thread`` the gate or ask message the threaded reply goes under.
    """

    kind: str
    work_item: str
    member: str
    origin: str
    at: str
    words: str = ""
    rows: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    gate: str = ""
    channel: str = ""
    ts: str = ""
    thread: str = ""
    login: str = ""
    #: A record's facts beside its words: how many messages a context holds, the Slack
    #: link of the thread, a decision's kind (product, design, tech) and its rationale.
    count: int = 0
    link: str = ""
    topic: str = ""
    why: str = ""
    #: Whom or what a collaborator or channel command is about, as the-loop reads them:
    #: ``slack:U…``, ``@login``, ``slack@C…``.
    subjects: tuple[str, ...] = ()
    #: The files attached to a reply, as Slack described them (``looproom.attach``): the
    #: relay fetches them for the session. Their private URLs stay in the bot's queue.
    files: tuple[dict[str, Any], ...] = ()

    @property
    def key(self) -> str:
        """The idempotency key: one per decision, the same for every retry of it."""
        raw = f"{self.kind}|{self.work_item}|{self.origin}"
        return "relay:" + hashlib.sha256(raw.encode()).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        raw = asdict(self)
        raw["rows"], raw["nodes"] = list(self.rows), list(self.nodes)
        raw["subjects"] = list(self.subjects)
        raw["files"] = [dict(attached) for attached in self.files]
        return raw

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Decision:
        fields = {
            **raw,
            "rows": tuple(raw.get("rows", ())),
            "nodes": tuple(raw.get("nodes", ())),
            "subjects": tuple(raw.get("subjects", ())),
        }
        fields["files"] = tuple(dict(attached) for attached in raw.get("files", ()))
        return cls(**fields)


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
