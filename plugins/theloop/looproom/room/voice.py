"""How the room speaks: one emoji and a first-person line per kind of moment.

A person on a phone reads the first line of each message and nothing else, so that line
says what happened the way a colleague would ("📋 The requirements are ready for your
review"), never the machine's own names (``phase-approval-pending``, ``requirements-
approval``). Each kind's emoji and line are its row in :mod:`looproom.room.event_types`;
node and phase slugs become the words a person uses for them; a slug the table does not
know is spelled with spaces.
The parent message's state line is drawn from the same words.
"""

from __future__ import annotations

from collections.abc import Mapping

from looproom.events import Event
from looproom.room import event_types

#: How the room says a kind the table does not know: named as sent.
UNKNOWN = event_types.UNKNOWN.wording

#: Node and phase slugs in the words a person uses; others are spelled with spaces.
WORDS: Mapping[str, str] = {
    "phase-selection": "the phase selection",
    "brainstorming": "the brainstorm",
    "brainstorm-approval": "the brainstorm",
    "requirements-definition": "the requirements",
    "requirements-approval": "the requirements",
    "design": "the design",
    "design-approval": "the design",
    "test-planning": "the test plan",
    "tasks-breakdown": "the task breakdown",
    "tasks-approval": "the task breakdown",
    "implementation": "the implementation",
    "needs-review": "the review",
    "self-review": "my own review",
    "critic-review": "the critic's review",
    "human-approval": "the pull request",
    "spec-quiz": "the spec quiz",
    "plan-approval": "the plan",
    "scoped-plan": "the plan",
    "complete": "the wrap-up",
    "escalated": "the escalation",
}
#: Words that read as plural ("The requirements are …", not "is").
_PLURAL = ("requirements",)


def words(slug: str) -> str:
    """A node or phase as a person says it: ``requirements-approval`` → "the requirements"."""
    slug = slug.strip()
    return WORDS.get(slug) or slug.replace("-", " ").replace("_", " ")


def subject(event: Event) -> str:
    """The slug a line is about: the phase of a lifecycle event, the node of a gate."""
    detail = event.detail
    first, second = (
        ("phase", "node") if event.event_type.startswith("phase.") else ("node", "phase")
    )
    return str(detail.get(first) or detail.get(second) or "").strip()[:80]


def line(event: Event) -> str:
    """The first-person line, emoji first, plain words (the caller escapes it)."""
    row = event_types.of(event)
    what = words(subject(event))
    if row is event_types.UNKNOWN:
        return f"{UNKNOWN.emoji} " + UNKNOWN.says.format(what=event.event_type)
    wording = row.wording
    text = _fill(wording.says, what or "this step")
    if "{by}" in text:
        actor = str(event.detail.get("actor") or "").strip()[:60]
        text = text.replace("{by}", f" by {actor}" if actor else "")
    if row.step == event_types.PROGRESS:
        text += _step(event)
    if row.step == event_types.COMPLETED:
        text += _outcome(event)
    return f"{wording.emoji} {text}"


def state(event: Event) -> str:
    """The parent's state line after ``event``; ``""`` when the event changes nothing."""
    said = event_types.of(event).wording.state
    if not said:
        return ""
    return _fill(said, words(subject(event)) or "the next step")


def _fill(template: str, what: str) -> str:
    verb = "are" if what.endswith(_PLURAL) else "is"
    capital = what[:1].upper() + what[1:]
    filled = template.replace("{What} ready", f"{capital} {verb} ready")
    return filled.replace("{What}", capital).replace("{what}", what)


def _step(event: Event) -> str:
    """ " — step 3 of 5" when the-loop counts steps, else where the phase reached."""
    step, steps = str(event.detail.get("step") or ""), str(event.detail.get("steps") or "")
    if step and steps:
        return f" — step {step} of {steps}"
    reached = str(event.detail.get("to") or event.detail.get("node") or "")
    if reached and reached != subject(event):
        return f" — now at {reached.replace('-', ' ')}"
    return ""


def _outcome(event: Event) -> str:
    outcome = str(event.detail.get("outcome") or "").strip()
    return f" ({outcome})" if outcome and outcome not in ("pass", "done") else ""
