"""A reply in a standing session's thread goes to that session, not to a work item.

the-loop names its standing sessions ``standing:<name>`` — named harness sessions that
belong to no work item — and posts their events into their own thread. Words addressed to
the bot there are the session's input: ``POST /api/v1/standing-sessions/say`` ``{name,
text, actor}``, as the-loop's own room delivers them. There is no ticket to mirror a
record on, so nothing is. Everywhere else a reply is the work item's record and its
session's input (``looproom.relay.records``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looproom.clients.the_loop import SAY_PATH
from looproom.relay import forms, records
from looproom.relay.decision import Decision

PREFIX = "standing:"
#: the-loop's standing-session name: lowercase letters, digits, hyphens, up to 40.
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")


def name_of(work_item: str) -> str:
    """The standing session ``work_item`` names, ``""`` when it is not one."""
    name = work_item.removeprefix(PREFIX) if work_item.startswith(PREFIX) else ""
    return name if _NAME.match(name) else ""


def say_request(decision: Decision, repos: Mapping[str, str]) -> dict[str, Any]:
    del repos
    return {
        "name": name_of(decision.work_item),
        "text": forms.clean_words(decision.words),
        "actor": f"slack:{decision.member}",
    }


SAY = forms.LoopCall(SAY_PATH, say_request)


@dataclass(frozen=True)
class StandingReply:
    """A reply: to a standing session when said in its thread, else on the record."""

    talk: records.Talk

    def target(self, decision: Decision, destinations: forms.Destinations) -> dict[str, Any]:
        if name_of(decision.work_item):
            return SAY.target(decision, destinations)
        return self.talk.target(decision, destinations)


REPLY_FORM = StandingReply(records.REPLY_FORM)
