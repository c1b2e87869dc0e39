"""One whole work item as the-loop tells its room, in order: what the room policy is
measured and tested on.

Built from the real messages (``tests/data/messages``) wherever the-loop sent one; the
steps the corpus lacks are the-loop's own templates filled in the same way: the lifecycle
lines its runtime writes, the "**node** is ready for review" comment its gate hook posts on
the ticket (mirrored into the room), and its session announcement with the tmux
cheat-sheet. Every event has an id of its own, as the-loop's outbox gives it.
"""

from __future__ import annotations

from typing import Any

from tests.support import messages

ITEM = "github:MadaraUchiha-314/the-loop#260"
ISSUE = "https://github.com/MadaraUchiha-314/the-loop/issues/260"
PR_URL = "https://github.com/MadaraUchiha-314/the-loop/pull/263"
SELF = "\n\n<!-- the-loop:agent-comment -->"


def _real(stem: str, name: str, **fields: Any) -> dict[str, Any]:
    return messages.event(stem, id=f"tl-{name}", **fields)


def _lifecycle(kind: str, name: str, phase: str, node: str, **detail: str) -> dict[str, Any]:
    verb = {"phase.started": "started phase", "phase.completed": "completed phase"}.get(kind, "")
    text = (
        f"the-loop: issue-260 {verb} *{phase}* ({node})."
        if verb
        else f"the-loop: issue-260 — *{phase}* reached {node}."
    )
    return {
        "id": f"tl-{name}",
        "eventType": kind,
        "workItem": ITEM,
        "text": text,
        "url": ISSUE,
        "detail": {"node": node, "phase": phase, "loop": "pdlc-work-item-loop", **detail},
    }


def _gate(stem: str, name: str, node: str, artifact: str) -> dict[str, Any]:
    """A phase-approval gate like the real one, for another node."""
    wire = messages.event(stem, id=f"tl-{name}")
    wire["text"] = f"the-loop: issue-260 is at *{node}* (phase-approval-pending)."
    wire["detail"] = {**wire["detail"], "node": node, "artifact": artifact}
    return wire


def _ready_for_review(name: str, node: str) -> dict[str, Any]:
    """The gate hook's "ready for review" comment, as the ticket mirror sends it."""
    text = (
        f"🤖 _the-loop_ — **{node}** is ready for review.\n\n"
        "Work item `issue-260` has reached a human gate. Reply with an approval, an approval "
        f"with comments, or the changes you want.{SELF}"
    )
    return {
        "id": f"tl-{name}",
        "eventType": "comment.agent",
        "workItem": ITEM,
        "text": text,
        "url": f"{ISSUE}#issuecomment-{name}",
        "detail": {"author": "the-loop-bot"},
    }


def _tmux(name: str) -> dict[str, Any]:
    """The session announcement: operator documentation, mirrored from the ticket."""
    text = (
        "🖥️ **the-loop** started an interactive session for `github:MadaraUchiha-314/the-loop#260`."
        "\n\n| | |\n|---|---|\n| tmux session | `the-loop-issue-260` |\n| harness | `claude` |\n\n"
        "Attach from the machine running the-loop:\n\n```sh\ntmux attach -t the-loop-issue-260\n"
        "# or, without a keyboard:\nthe-loop sessions attach --work-item "
        "github:MadaraUchiha-314/the-loop#260 --read-only\n```\n\n"
        f"The session is kept after the work completes.{SELF}"
    )
    return {
        "id": f"tl-{name}",
        "eventType": "comment.agent",
        "workItem": ITEM,
        "text": text,
        "url": f"{ISSUE}#issuecomment-tmux",
        "detail": {"author": "the-loop-bot"},
    }


def work_item() -> list[dict[str, Any]]:
    """The timeline: selection, four phases with their progress, two approval gates (the
    first re-sent while open), their mirrored "ready for review" comments, the tmux
    announcement, a question, the PR gate, done and closed."""
    return [
        _real("03", "selection-started"),
        _real("01", "checklist"),
        _real("02", "selection-recorded"),
        _lifecycle("phase.completed", "selection-done", "phase-selection", "phase-selection"),
        _real("04", "requirements-started"),
        _lifecycle(
            "phase.progress",
            "requirements-draft",
            "requirements-definition",
            "requirements-draft",
            step="1",
            steps="2",
        ),
        _real("05", "requirements-at-gate"),
        _real("06", "requirements-gate"),
        _ready_for_review("requirements-ready", "requirements-approval"),
        _real("06", "requirements-gate-again"),
        _real("07", "requirements-done"),
        _lifecycle("phase.started", "design-started", "design", "design"),
        _lifecycle("phase.progress", "design-step", "design", "design-approval"),
        _gate("06", "design-gate", "design-approval", "design.md"),
        _ready_for_review("design-ready", "design-approval"),
        _lifecycle(
            "phase.completed", "design-done", "design", "design-approval", outcome="approved"
        ),
        _tmux("tmux"),
        _lifecycle("phase.started", "implementation-started", "implementation", "implementation"),
        _real("15", "question"),
        _lifecycle("phase.progress", "implementation-step-1", "implementation", "verification"),
        _lifecycle("phase.progress", "implementation-step-2", "implementation", "self-review"),
        _lifecycle("phase.completed", "implementation-done", "implementation", "self-review"),
        _lifecycle("phase.started", "review-started", "needs-review", "self-review"),
        _real("09", "review-step"),
        _real("10", "pr-gate"),
        _ready_for_review("pr-ready", "human-approval"),
        _lifecycle("phase.progress", "pr-at-gate", "needs-review", "human-approval"),
        _lifecycle("phase.completed", "review-done", "needs-review", "human-approval"),
        _lifecycle("phase.started", "complete-started", "complete", "complete"),
        _real("13", "complete"),
        _lifecycle("phase.completed", "complete-done", "complete", "complete"),
        _real("14", "closed"),
    ]


#: What must stay visible in the thread: every question a person answers, and each phase.
GATES = ("tl-requirements-gate", "tl-design-gate", "tl-pr-gate", "tl-question", "tl-checklist")
PHASES = ("requirements-definition", "design", "implementation", "needs-review")
