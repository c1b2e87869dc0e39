"""Every word a member types or presses to decide, written once.

The decision verbs, the-loop's control commands and the on-the-record verbs. How each is
read is :mod:`looproom.decide.verbs`; the keyword the-loop reads for a control command is
:mod:`looproom.settings.keywords`; a button's action id is the verb behind
:data:`looproom.room.buttons.PREFIX`. Action ids ride on messages already in Slack, so a
name here never changes once shipped.
"""

from __future__ import annotations

#: Answers to the-loop's phase-selection checklist and its gates.
EXECUTE, SKIP, APPROVE, CHANGES = "execute", "skip", "approve", "changes"
#: the-loop's session and graph commands a member may type here, in its documented order.
START, STOP, PAUSE, RESUME = "start", "stop", "pause", "resume"
CONTRIBUTE, CLEANUP, DO, REVIEW = "contribute", "cleanup", "do", "review"
#: The commands that take an argument: a work item's collaborators and its channel.
ADD_COLLABORATOR, REMOVE_COLLABORATOR = "add-collaborator", "remove-collaborator"
ADD_CHANNEL, REMOVE_CHANNEL = "add-channel", "remove-channel"
#: The thread, or a decision, put on the work item's record.
RECORD_CONTEXT, RECORD_DECISION = "record-context", "record-decision"
