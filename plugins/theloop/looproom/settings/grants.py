"""The acts a member may be granted (``slack.publish`` and the member lists), by name.

Values only: who may do which act is decided in ``looproom.decide.authorization``; the
settings read ``slack.publish`` against these names.
"""

from __future__ import annotations

#: The acts a member may be granted, named as the-loop names the records they leave. Every
#: path that acts for a member asks ``may`` about one of these, so a grant means the same
#: thing wherever it is used.
REPLY = "work-item.reply"
GATE_FEEDBACK = "gate.feedback"
CONTROL = "control.command"
CONTEXT = "context.added"
DECISION_RECORD = "decision.recorded"
CREATE = "work-item.create"
INSTANCE = "instance.command"
STANDING = "standing.command"
ACTS = (REPLY, GATE_FEEDBACK, CONTROL, CONTEXT, DECISION_RECORD, CREATE, INSTANCE, STANDING)
#: The acts ``slack.publish`` may grant: everything beyond a reply, which is always granted.
GRANTABLE = tuple(act for act in ACTS if act != REPLY)
#: Granted only when ``slack.publish`` names them: they act on the-loop itself.
OPT_IN = frozenset({INSTANCE, STANDING})
#: What the room grants when ``slack.publish`` is not set.
DEFAULT_GRANTS = frozenset(act for act in GRANTABLE if act not in OPT_IN)
