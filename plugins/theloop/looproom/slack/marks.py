"""A post's mark: Slack message metadata naming what the bot posted it for.

Every post the bot may have to reconcile carries its key in Slack message metadata
(``theloop_event`` with ``{key, workItem, kind}``), so a post that may have landed — in
flight when the bot was killed, or answered by a 5xx — is looked for before it is posted
again: ``conversations.replies`` of its thread, or ``conversations.history`` of its room,
read with ``include_all_metadata``. The room's outlet (``looproom.room.slack_outlet``) and
the kickoff's lines (:class:`looproom.slack.speakers.SlackPoster`) mark and find their posts
this one way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from looproom.slack.transport import SlackTransport

METADATA_TYPE = "theloop_event"


def metadata(kind: str, key: str, work_item: str) -> dict[str, Any]:
    """The Slack message metadata that lets a restart find a post it is unsure about."""
    payload = {"key": key, "workItem": work_item, "kind": kind}
    return {"event_type": METADATA_TYPE, "event_payload": payload}


def metadata_key(message: Mapping[str, Any]) -> str:
    """The key a message was marked with; ``""`` for a message the bot did not mark."""
    meta = message.get("metadata") or {}
    if not isinstance(meta, Mapping) or meta.get("event_type") != METADATA_TYPE:
        return ""
    payload = meta.get("event_payload") or {}
    return str(payload.get("key") or "") if isinstance(payload, Mapping) else ""


def marked_ts(messages: Iterable[Mapping[str, Any]], key: str) -> str:
    """The ts of the first of ``messages`` marked ``key``; ``""`` when none is."""
    return next((str(m.get("ts") or "") for m in messages if metadata_key(m) == key), "")


def find_marked(
    transport: SlackTransport, channel: str, thread_ts: str, key: str, oldest: str
) -> str | None:
    """The ts of the post marked ``key`` in the thread under ``thread_ts`` — or, for
    ``thread_ts`` ``""``, at the top of ``channel`` after ``oldest``; ``""`` when there is
    none; ``None`` when Slack could not be read (then nobody can tell: never guess)."""
    if thread_ts:
        messages = transport.thread(channel, thread_ts)
    else:
        messages = transport.top_level(channel, oldest)
    return None if messages is None else marked_ts(messages, key)
