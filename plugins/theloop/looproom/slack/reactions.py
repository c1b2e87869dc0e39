"""The reactions an accepted message gets, as ``slack.reactions`` configures them.

Three moments, the-loop's own (``channels.slack.reactions``): ``received`` once a decision
is stored, then ``completed`` when it landed or ``error`` when it did not (and when a
member's words were refused as unauthorized). The desk and the relay name each moment
by its default emoji; :class:`Reacting` puts the configured name in its place before the
call reaches the room, so nothing else changes when a workspace picks its own palette.
``""`` skips a moment; ``enabled: false`` skips all three.

A name is checked against Slack's emoji-name grammar before it can reach an API call;
surrounding colons (``:eyes:``, as Slack shows a name) are taken off first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from looproom.slack.queued_speaker import Speaker

#: Each moment, named by its default emoji (the-loop's defaults for Slack).
RECEIVED, COMPLETED, ERROR = "eyes", "white_check_mark", "warning"
#: the-loop's key for each moment under ``slack.reactions``.
STATES = {"received": RECEIVED, "completed": COMPLETED, "error": ERROR}
_EMOJI_NAME = re.compile(r"[a-z0-9_+'-]{1,100}")


def _defaults() -> Mapping[str, str]:
    return MappingProxyType({moment: moment for moment in STATES.values()})


@dataclass(frozen=True)
class Reactions:
    """Moment (its default emoji) → the emoji the room gets; ``""``: none."""

    enabled: bool = True
    names: Mapping[str, str] = field(default_factory=_defaults, hash=False)

    def name_of(self, moment: str) -> str:
        """The configured emoji for ``moment``; a name that is no moment passes as is."""
        if not self.enabled:
            return ""
        return self.names.get(moment, moment)

    def describe(self) -> str:
        """``!theloop status``'s line: each moment and its emoji."""
        if not self.enabled:
            return "reactions: off (slack.reactions.enabled: false)"
        shown = ", ".join(
            f"{state} → :{self.names[moment]}:" if self.names[moment] else f"{state} → none"
            for state, moment in STATES.items()
        )
        return f"reactions: {shown}"


def parse(raw: Any, errors: list[str]) -> Reactions:
    """``slack.reactions``: ``{enabled, received, completed, error}``; each bad key named."""
    if raw is None:
        return Reactions()
    if not isinstance(raw, Mapping):
        errors.append("slack.reactions: expected a mapping of received/completed/error")
        return Reactions()
    for key in raw:
        if key not in (*STATES, "enabled"):
            known = ", ".join(sorted((*STATES, "enabled")))
            errors.append(f"slack.reactions.{key}: unknown key (known: {known})")
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        errors.append(f"slack.reactions.enabled: expected true or false, got {enabled!r}")
        enabled = True
    names = dict(_defaults())
    for state, moment in STATES.items():
        value = raw.get(state, moment)
        name = str(value if value is not None else "").strip().strip(":")
        if not isinstance(value, str | type(None)) or (name and not _EMOJI_NAME.fullmatch(name)):
            errors.append(
                f"slack.reactions.{state}: {value!r} is not a Slack emoji name "
                "(lowercase letters, digits, _ + - ', like eyes or :white_check_mark:)"
            )
            continue
        names[moment] = name
    return Reactions(enabled, MappingProxyType(names))


class Reacting:
    """``room`` with each reaction's moment put in the configured emoji (none: no call)."""

    def __init__(self, room: Speaker, reactions: Reactions) -> None:
        self._room, self._reactions = room, reactions

    def react(self, channel: str, ts: str, name: str) -> None:
        emoji = self._reactions.name_of(name)
        if emoji:
            self._room.react(channel, ts, emoji)

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._room.reply(channel, thread_ts, text)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._room.tell(channel, member, text, thread_ts)

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self._room.update(channel, ts, text, blocks)
