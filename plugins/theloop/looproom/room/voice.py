"""How the room speaks: one emoji and a first-person line per kind of moment.

A person on a phone reads the first line of each message and nothing else, so that line
says what happened the way a colleague would ("📋 The requirements are ready for your
review"), never the machine's own names (``phase-approval-pending``, ``requirements-
approval``). One table holds every kind's emoji and line; node and phase slugs become the
words a person uses for them; a slug the table does not know is spelled with spaces.
The parent message's state line is drawn from the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from looproom.events import Event
from looproom.room import checklist as checklists

#: The confirmation the-loop posts on the ticket once a selection is frozen.
RECORDED_MARK = "**phase selection recorded**"


@dataclass(frozen=True)
class Line:
    """One kind's voice: the emoji, the line for a message, the line for the parent."""

    emoji: str
    says: str  # ``{what}`` = the node or phase in words
    state: str = ""  # ``""`` = the parent's state is left as it was


#: Event kind → its voice. The seed's palette: kickoff 🚀, question 🤔, artifact ready 📋,
#: locked ✅, progress 🔨, PR ready 👀, done 🎉, warning ⚠️.
VOICE: Mapping[str, Line] = {
    "selection": Line("🚀", "Which phases does this work item need?", "🚀 Choosing the phases"),
    "selection-recorded": Line("✅", "The phase selection is locked in", "✅ Phases chosen"),
    "standing.started": Line("🚀", "I'm up and listening", "🚀 Listening"),
    "session.awaiting_input": Line("🤔", "I have a question for you", "🤔 Waiting for your answer"),
    "decision-pending": Line(
        "🤔", "I need your decision on {what}", "🤔 Waiting for your decision"
    ),
    "phase-approval-pending": Line(
        "📋", "{What} ready for your review", "📋 Waiting for your review of {what}"
    ),
    "security-sign-off-pending": Line(
        "📋", "The security review is ready for your sign-off", "📋 Waiting for security sign-off"
    ),
    "pr-review-pending": Line(
        "👀", "The pull request is ready for your review", "👀 Waiting for your review of the PR"
    ),
    "phase.started": Line("🔨", "Working on {what}", "🔨 Working on {what}"),
    "phase.progress": Line("🔨", "Working on {what}", "🔨 Working on {what}"),
    "phase.completed": Line("✅", "Finished {what}", "✅ Finished {what}"),
    "gate.acknowledged": Line("✅", "Got it — {what} is locked in"),
    "conflict-escalated": Line("⚠️", "I'm stuck and need a person to step in", "⚠️ Needs a person"),
    "work-item-complete": Line("🎉", "Done — everything is through", "🎉 Done"),
    "work-item.closed": Line("🎉", "Closed{by}", "🎉 Closed"),
    "comment.agent": Line("💬", "I wrote on the ticket"),
    "comment.human": Line("💬", "New comment on the ticket"),
    "control.rejected": Line("⚠️", "That did not go through"),
}
#: An event kind the table does not know: named as sent, since no better word exists.
UNKNOWN = Line("💬", "Update ({what})")

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


def kind_of(event: Event) -> str:
    """The voice's kind: the event type, or the selection checklist and its confirmation."""
    if event.event_type == "comment.agent":
        if checklists.is_checklist(event.text):
            return "selection"
        if RECORDED_MARK in event.text:
            return "selection-recorded"
    return event.event_type


def subject(event: Event) -> str:
    """The slug a line is about: the phase of a lifecycle event, the node of a gate."""
    detail = event.detail
    first, second = (
        ("phase", "node") if event.event_type.startswith("phase.") else ("node", "phase")
    )
    return str(detail.get(first) or detail.get(second) or "").strip()[:80]


def line(event: Event) -> str:
    """The first-person line, emoji first, plain words (the caller escapes it)."""
    kind = kind_of(event)
    voice = VOICE.get(kind)
    what = words(subject(event))
    if voice is None:
        return f"{UNKNOWN.emoji} " + UNKNOWN.says.format(what=event.event_type)
    text = _fill(voice.says, what or "this step")
    if "{by}" in text:
        actor = str(event.detail.get("actor") or "").strip()[:60]
        text = text.replace("{by}", f" by {actor}" if actor else "")
    if kind == "phase.progress":
        text += _step(event)
    if kind == "phase.completed":
        text += _outcome(event)
    return f"{voice.emoji} {text}"


def state(event: Event) -> str:
    """The parent's state line after ``event``; ``""`` when the event changes nothing."""
    voice = VOICE.get(kind_of(event))
    if voice is None or not voice.state:
        return ""
    return _fill(voice.state, words(subject(event)) or "the next step")


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
