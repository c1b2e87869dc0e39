"""A room a channel command names as people know it, resolved to its id before it is recorded.

People type a room's name (``#Eng-Room``, ``eng-room``) or link it (``<#C0123|eng-room>``);
the-loop routes on the id, and so do the room's own bindings, listen modes and the one
work item a room may back. So ``add-channel`` and ``remove-channel`` relay the id, never
the name (kept in the decision's words, for the people reading it), and a name the bot
cannot find — no such room, a room it cannot see, a listing it may not read or could not
read to the end — is refused with what to do, before anything is recorded: a room
accepted on a name would fail only at its first post.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from looproom.decide import kinds, subjects
from looproom.relay.decision import Decision
from looproom.slack.responses import is_channel_id

#: ``room`` (a name, ``#`` optional) → its id, or ``""`` and why not (Slack's error).
Find = Callable[[str], tuple[str, str]]


def names_a_room(decision: Decision | None) -> bool:
    """Whether ``decision`` is a channel command naming its room by name, not by id."""
    if decision is None or decision.kind not in (kinds.ADD_CHANNEL, kinds.REMOVE_CHANNEL):
        return False
    room = subjects.slack_room(decision.subjects)
    return bool(room) and not is_channel_id(room)


def resolved(decision: Decision, find: Find) -> Decision | str:
    """``decision`` naming its room by id (the name kept in its words), or why not."""
    name = subjects.room_of(decision.subjects[0])
    found, error = find(name)
    if not found:
        return refusal(name, error)
    token = subjects.CHANNEL_PREFIX + found
    return replace(decision, subjects=(token, *decision.subjects[1:]), words=name)


def refusal(name: str, error: str) -> str:
    """What the member is told when ``name`` names no room the bot can find."""
    shown = "#" + name.lstrip("#")
    how = "link it instead (type `#` and pick the room), which always works"
    if error == "listing_truncated":
        why = f"Slack's list of rooms ended before I found `{shown}`"
        how = "invite me to it (then I find it among my own rooms), or " + how
    elif error in ("missing_scope", "not_allowed_token_type", "invalid_auth"):
        why = f"I may not list this workspace's rooms ({error}) to find `{shown}`"
        how = "an admin adds `channels:read` and `groups:read` to the app, or " + how
    elif error and error != "channel_not_found":
        why = f"Slack did not answer my look-up of `{shown}` ({error})"
        how = "try again shortly, or " + how
    else:
        why = f"I see no room called `{shown}`"
        how = "check the spelling, invite me if it is private, or " + how
    return f"{why} — {how}. Nothing was recorded."
