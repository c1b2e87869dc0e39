"""One work item's story in the soak: the-loop's real events, and a person's two decisions.

Every work item tells the same story from the-loop's real messages (``tests/data/messages``):
the phase selection starts (waiting on a person), requirements start, progress reaches the
approval gate, the gate asks — **a person approves** (typed ``approve …`` in the thread, or
the gate's Approve button pressed) — the phase completes, the agent asks a question — **a
person answers** (typed in the thread, or the question's default pressed) — the work item
is complete, and closed. the-loop moves on only as it would: a decision is made once its
question is in the room and the bot has settled it, and the next event after a decision is
sent once the decision reached GitHub or the-loop.

What each accepted event must do in the room is not written here: :func:`expected` asks
the bot's own delivery policy (``looproom.room.policy``), event by event in the order the
webhook accepted them, as the bot's outlet does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from looproom.events import Event
from looproom.room import policy
from tests.support import messages

APPROVE, ANSWER = "approve", "answer"
#: The story: corpus stems, and the two decisions where a person acts.
STORY = ("03", "04", "05", "06", APPROVE, "07", "15", ANSWER, "13", "14")
#: The event each decision answers.
ANSWERS = {APPROVE: "06", ANSWER: "15"}


@dataclass
class Decision:
    """A person's decision: ``via`` typing or pressing; ``tried`` once attempted,
    ``admitted`` once the bot has it (typed: in Slack, which the bot reads back after any
    outage; pressed: the bot answered the signed press 200, or acknowledged the press's
    Socket Mode envelope)."""

    kind: str
    via: str
    text: str = ""
    tried: bool = False
    admitted: bool = False


@dataclass
class Item:
    """A work item ``github:acme/soak<room>#<number>`` and how far its story went."""

    room: int
    number: int
    step: int = 0
    due: float = 0.0  # monotonic time its next step may be tried
    #: The accepted events, in the order the webhook accepted them: (event, accepted at).
    accepted: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    #: Each event's first send (monotonic), by id: how long the sender held it is the
    #: time from there to its acceptance.
    first_tried: dict[str, float] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return f"github:acme/soak{self.room}#{self.number}"

    @property
    def repo(self) -> str:
        return f"acme/soak{self.room}"

    @property
    def done(self) -> bool:
        return self.step >= len(STORY)

    @property
    def next(self) -> str:
        return STORY[self.step]

    def event(self, stem: str) -> dict[str, Any]:
        """The corpus message ``stem`` as the-loop sends it for this work item."""
        url = f"https://github.com/{self.repo}/issues/{self.number}"
        return messages.event(
            stem, id=f"soak-{self.room}-{self.number}-{stem}", workItem=self.ref, url=url
        )


@dataclass(frozen=True)
class Expected:
    """What one accepted event must do: ``action`` is ``post`` (a new message in the work
    item's thread: a post or a reply), ``edit`` (drawn over the message ``over`` — the key
    of the event that posted it) or ``none`` (the policy drops it); ``rule`` says why."""

    key: str
    action: str
    rule: str
    over: str = ""


def expected(accepted: list[dict[str, Any]]) -> list[Expected]:
    """Each accepted event's outcome, by the bot's policy over the events before it."""
    told, found, posted_by = policy.Told(), [], {}
    for wire in accepted:
        event = Event.from_wire(wire)
        decision = policy.decide(event, told)
        key = event.delivery_key
        if isinstance(decision, policy.Drop):
            found.append(Expected(key, "none", decision.rule))
            told = policy.remember(told, event, decision, "")
        elif isinstance(decision, policy.Edit):
            found.append(Expected(key, "edit", decision.rule, posted_by[decision.ts]))
            told = policy.remember(told, event, decision, decision.ts)
        else:
            ts = f"ts-of-{key}"  # stands for the message's ts: only its identity matters
            posted_by[ts] = key
            found.append(Expected(key, "post", decision.rule))
            told = policy.remember(told, event, decision, ts)
    return found
