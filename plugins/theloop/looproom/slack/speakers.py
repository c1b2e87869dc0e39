"""The rooms' voices the desk, the relay and the kickoff speak through: Slack's, or a plain
chat's (Text, Test) where there are no reactions, threads or edits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from looproom.slack import marks
from looproom.slack.transport import SlackTransport

#: ``say(to, text)``: one plain line to a room or a person, through the chat backend.
Say = Callable[[str, str], None]

log = logging.getLogger(__name__)

_GLYPHS = {"eyes": "👀", "white_check_mark": "✅", "warning": "⚠️"}


class SlackPoster:
    """The kickoff's voice on Slack: posts whose ts it needs, found again by their mark
    (:mod:`looproom.slack.marks`) when one may have landed; edits, ephemerals."""

    def __init__(self, transport: SlackTransport) -> None:
        self._slack = transport

    def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]],
        thread_ts: str,
        *,
        key: str = "",
        work_item: str = "",
    ) -> str:
        """Post, marked ``key`` when given; the post's ts, ``""`` when it was not taken."""
        meta = marks.metadata("kickoff", key, work_item) if key else None
        response = self._slack.post_message(
            channel, text=text, blocks=blocks, thread_ts=thread_ts or None, metadata=meta
        )
        if not response.ok:
            log.warning("kickoff: posting in %s failed: %s", channel, response.error)
        return response.ts if response.ok else ""

    def posted(self, channel: str, thread_ts: str, key: str, since: float) -> str | None:
        """The ts of the post marked ``key`` (in the thread, or at the room's top since
        ``since``); ``""`` when there is none; ``None`` when Slack could not be read."""
        return marks.find_marked(self._slack, channel, thread_ts, key, f"{since:.6f}")

    def update(
        self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]], *, key: str = ""
    ) -> None:
        """Edit the post at ``ts``, keeping its mark ``key`` (the room's edits carry theirs)."""
        meta = marks.metadata("kickoff", key, "") if key else None
        self._slack.update_message(channel, ts, text=text, blocks=blocks or None, metadata=meta)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._slack.post_ephemeral(channel, member, text=text, thread_ts=thread_ts or None)


class SlackSpeaker:
    """The desk's and the relay's voice on Slack: reactions, threads, ephemerals, edits."""

    def __init__(self, transport: SlackTransport) -> None:
        self._slack = transport

    def react(self, channel: str, ts: str, name: str) -> None:
        if ts:
            self._slack.add_reaction(channel, ts, name)

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._slack.post_message(channel, text=text, thread_ts=thread_ts or None)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._slack.post_ephemeral(channel, member, text=text, thread_ts=thread_ts or None)

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self._slack.update_message(channel, ts, text=text, blocks=blocks)


class PlainSpeaker:
    """The same on a chat backend without reactions or threads (Text, Test): plain lines."""

    def __init__(self, say: Say) -> None:
        self._say = say

    def react(self, channel: str, ts: str, name: str) -> None:
        self._say(channel, _GLYPHS.get(name, f":{name}:"))

    def reply(self, channel: str, thread_ts: str, text: str) -> None:
        self._say(channel, text)

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self._say(member, text)

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        return  # nothing to edit: a plain backend has no buttons


def view_opener(transport: SlackTransport | None) -> Callable[[str, Mapping[str, Any]], bool]:
    """How a form is opened: now, not through the queue (a trigger is good for three
    seconds); False when it was not (no Slack, or Slack refused — logged)."""

    def open_view(trigger_id: str, view: Mapping[str, Any]) -> bool:
        if transport is None:
            return False
        response = transport.open_view(trigger_id, view)
        if not response.ok:
            log.warning("views.open failed: %s", response.error)
        return response.ok

    return open_view
