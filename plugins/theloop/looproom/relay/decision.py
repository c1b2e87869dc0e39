"""A decision a member made, as it is recorded and relayed.

Made by the desk (``looproom.decide``), which stamps on it all the room will be told of
it; stored with its target in the relay's queue; read back by the relay, which needs
nothing else to carry it and say how it went.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any


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
    #: What the room is told of it, carried with it (the relay knows no decision kinds):
    #: what the replies call it ("approval"), what happens once it landed, and the
    #: receipt said instead of "recorded — moving on" (``{who}``, ``{count}`` filled in).
    label: str = ""
    after: str = ""
    receipt: str = ""

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
