"""The room's records in the-loop's own words: its ``channel.*`` event names and fields.

Each is what the-loop's own Slack channel writes for the same moment (its event-log
catalog names the fields): ``channel.posted`` when an event reached its thread,
``channel.post_failed`` when it never will, ``channel.undelivered`` when it waits to be
tried again and ``channel.delivered_late`` when it got there after all;
``channel.reply_received`` for a member's decision taken and ``channel.dropped`` for one
refused. ``channel`` is ``slack``, as the-loop names its Slack channel; ``channel_id`` the
room. Ids and counts only: never a message's words. Each record's id is its cause's (the
event's delivery key, the decision's key, the message refused), so it is kept once.

Who reads a record, with ``instances:``: a work item's records go to the instance that owns
it; a record of no work item is the room's own (a catch-up, a split check, a kickoff's
question, a refusal before anything was resolved) and goes to every instance — unless it
names the instance it was about (a ``/the-loop`` control command), then to that one only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from looproom.loop_log.book import Record, RoomRecords, stamp

CHANNEL = "slack"
POSTED, POST_FAILED = "channel.posted", "channel.post_failed"
UNDELIVERED, DELIVERED_LATE = "channel.undelivered", "channel.delivered_late"
REPLY_RECEIVED, DROPPED = "channel.reply_received", "channel.dropped"
CONTEXT_RECORDED, DECISION_RECORDED = "channel.context_recorded", "channel.decision_recorded"
THREAD_OPENED, CREATED, KICKOFF_ASKED = (
    "channel.thread_opened",
    "channel.created",
    "channel.kickoff_asked",
)
CAUGHT_UP = "channel.caught_up"
SHORTCUT_RECEIVED, VIEW_SUBMITTED = "channel.shortcut_received", "channel.view_submitted"
ATTACHMENTS, SNAPSHOT_EMPTY = "channel.attachments", "channel.snapshot_empty"
#: Our refusal the-loop does not count as a drop but writes as a record of its own.
NOTHING_NEW = "no-new-context"
SPLIT_SUSPECTED, SPLIT_CLEARED = "channel.split_suspected", "channel.split_cleared"
COMMAND_RECEIVED, COMMAND_COMPLETED = "channel.command_received", "channel.command_completed"
#: Our refusals the-loop has a word of its own for; the others keep ours.
PEER_REASONS = {"unauthorized": "unauthorized-actor"}
#: The stored audience of a record about one instance: ``@`` and its name (a work item's
#: ref never starts so).
INSTANCE_AUDIENCE = "@"
#: A field is an id, a count or a reason: a longer text (an error from a peer) is cut.
FIELD_MAX = 300


class ChannelLog:
    """Writes the room's records into ``records`` (None: nowhere, as without a store)."""

    def __init__(self, records: RoomRecords | None, clock: Callable[[], float] = time.time) -> None:
        self._records, self._clock = records, clock

    def posted(self, key: str, work_item: str, event_type: str, room: str, thread: str) -> None:
        """An event reached its thread (``thread``: the parent's ts, the-loop's handle)."""
        fields = {"event_type": event_type, "channel_id": room, "thread": thread}
        self._add(f"posted:{key}", POSTED, work_item, "info", fields)

    def post_failed(self, key: str, work_item: str, event_type: str, error: str) -> None:
        """An event will not be posted: parked for an admin."""
        fields = {"event_type": event_type, "error": error}
        self._add(f"post_failed:{key}", POST_FAILED, work_item, "warning", fields)

    def undelivered(self, key: str, work_item: str, event_type: str, error: str) -> None:
        """An event's first attempt did not land: it waits in the inbox to be tried again."""
        fields = {"event_type": event_type, "channels": [CHANNEL], "error": error}
        self._add(f"undelivered:{key}", UNDELIVERED, work_item, "warning", fields, channel=False)

    def waited(self, key: str) -> bool:
        """Whether the event of ``key`` was recorded as waiting to be tried again."""
        return self._records is not None and self._records.has(f"undelivered:{key}")

    def delivered_late(
        self, key: str, work_item: str, event_type: str, attempts: int, waited: float
    ) -> None:
        """An event that waited was delivered on a later attempt."""
        fields = {"event_type": event_type, "attempts": attempts, "waited_seconds": round(waited)}
        self._add(f"late:{key}", DELIVERED_LATE, work_item, "info", fields, channel=False)

    def reply_received(
        self, key: str, work_item: str, actor: str, kind: str, gate: str, room: str
    ) -> None:
        """A member's decision was taken: stored to be relayed (``gate``: open | none)."""
        fields = {"actor": actor, "kind": kind, "gate": gate, "channel_id": room}
        self._add(f"reply:{key}", REPLY_RECEIVED, work_item, "info", fields)

    def dropped(
        self, cause: str, reason: str, actor: str, work_item: str, room: str, thread: str
    ) -> None:
        """A member's message or press was refused (``cause``: the message, the press)."""
        if reason == NOTHING_NEW:  # a record-context with nothing new since the last
            fields = {"thread": thread, "channel_id": room}
            self._add(f"snapshot_empty:{cause}", SNAPSHOT_EMPTY, work_item, "info", fields)
            return
        peer = PEER_REASONS.get(reason, reason)
        level = "warning" if peer == "unauthorized-actor" else "info"
        fields = {"reason": peer, "actor": actor, "channel_id": room, "thread": thread}
        self._add(f"dropped:{cause}:{reason}", DROPPED, work_item, level, fields)

    def context_recorded(
        self, key: str, work_item: str, actor: str, thread: str, count: int, room: str
    ) -> None:
        """A ``record-context`` landed on the ticket: ``count`` messages of the thread."""
        fields = {"actor": actor, "thread": thread, "count": count, "channel_id": room}
        self._add(f"recorded:{key}", CONTEXT_RECORDED, work_item, "info", fields)

    def decision_recorded(
        self, key: str, work_item: str, actor: str, thread: str, kind: str, room: str
    ) -> None:
        """A ``record-decision`` landed on the ticket (``kind``: its topic, if one was named)."""
        fields = {"actor": actor, "thread": thread, "kind": kind, "channel_id": room}
        self._add(f"recorded:{key}", DECISION_RECORDED, work_item, "info", fields)

    def thread_opened(self, work_item: str, room: str, thread: str, origin: str) -> None:
        """A work item's conversation was opened: its parent posted in ``room`` at ``thread``."""
        fields = {"thread": thread, "channel_id": room, "origin": origin}
        self._add(f"opened:{room}:{thread}", THREAD_OPENED, work_item, "info", fields)

    def created(self, key: str, work_item: str, actor: str, room: str, thread: str) -> None:
        """A kickoff opened ``work_item``, asked for by ``actor`` (``thread``: its conversation)."""
        fields = {"actor": actor, "thread": thread, "channel_id": room}
        self._add(f"created:{key}", CREATED, work_item, "info", fields)

    def kickoff_asked(
        self, key: str, actor: str, room: str, thread: str, kind: str, count: int
    ) -> None:
        """A kickoff named no repository of several: ``count`` were offered to pick from."""
        fields = {"actor": actor, "thread": thread, "kind": kind, "count": count}
        self._add(f"asked:{key}", KICKOFF_ASKED, "", "info", {**fields, "channel_id": room})

    def caught_up(self, run: str, replies: int, processed: int) -> None:
        """A catch-up after a (re)connect read what was missed: ``replies`` in threads,
        ``processed`` in all (the rooms' top-level messages too); each message's own
        record says what it became."""
        fields = {"replies": replies, "processed": processed}
        self._add(f"caught_up:{run}", CAUGHT_UP, "", "info", fields)

    def split_suspected(
        self,
        check: str,
        room: str,
        beats: int,
        echoed: int,
        window: float,
        consecutive: int,
        remedy: str,
    ) -> None:
        """The split check heard back fewer heartbeats than it posted (``consecutive``:
        how many checks in a row now; ``remedy``: what to do, in the doctor's words)."""
        fields: dict[str, Any] = {"channel_id": room, "beats": beats, "echoed": echoed}
        fields |= {"window_seconds": window, "consecutive": consecutive, "remedy": remedy}
        self._add(f"split:{check}", SPLIT_SUSPECTED, "", "warning", fields)

    def split_cleared(self, check: str, room: str, beats: int, echoed: int, after: int) -> None:
        """A clean split check after ``after`` short ones."""
        fields = {"channel_id": room, "beats": beats, "echoed": echoed, "after": after}
        self._add(f"split:{check}", SPLIT_CLEARED, "", "info", fields)

    def attachments(self, key: str, work_item: str, actor: str, count: int, fetched: int) -> None:
        """A reply's files were fetched for its session: ``fetched`` of ``count`` (no name,
        no path), once per reply however often its relay is tried."""
        fields = {"actor": actor, "count": count, "fetched": fetched}
        self._add(f"attachments:{key}", ATTACHMENTS, work_item, "info", fields)

    def shortcut_received(self, trigger: str, work_item: str, actor: str, shortcut: str) -> None:
        """A message shortcut arrived (``shortcut``: its callback id), once per trigger."""
        fields = {"actor": actor, "shortcut": shortcut}
        self._add(f"shortcut:{trigger}", SHORTCUT_RECEIVED, work_item, "info", fields)

    def view_submitted(self, view: str, work_item: str, actor: str, kind: str) -> None:
        """A form was submitted (``kind``: the decision's topic, or ``changes``), once per
        view."""
        fields = {"actor": actor, "kind": kind}
        self._add(f"view:{view}", VIEW_SUBMITTED, work_item, "info", fields)

    def command_received(
        self, cause: str, actor: str, family: str, verb: str, target: dict[str, str]
    ) -> None:
        """A granted member's ``/the-loop`` control command (``family``: instance | standing;
        ``target``: the instance and the standing session it names)."""
        fields = {"actor": actor, "family": family, "verb": verb, **target}
        self._add(f"command:{cause}", COMMAND_RECEIVED, "", "info", fields)

    def command_completed(
        self, cause: str, actor: str, family: str, verb: str, target: dict[str, str], ok: bool
    ) -> None:
        """What the-loop answered it: ``outcome`` ok, or failed."""
        outcome = "ok" if ok else "failed"
        fields = {"actor": actor, "family": family, "verb": verb, **target, "outcome": outcome}
        level = "info" if ok else "warning"
        self._add(f"completed:{cause}", COMMAND_COMPLETED, "", level, fields)

    def _add(
        self,
        rid: str,
        event: str,
        work_item: str,
        level: str,
        fields: dict[str, Any],
        *,
        channel: bool = True,
    ) -> None:
        if self._records is None:
            return
        named = {"channel": CHANNEL} if channel else {}
        kept = {**named, "work_item": work_item or None, **fields}
        kept = {name: _short(value) for name, value in kept.items() if value not in (None, "")}
        record = Record(rid, event, stamp(self._clock()), level, kept)
        self._records.add(record, work_item or audience_of(fields))


def audience_of(fields: dict[str, Any]) -> str:
    """Who reads a record of no work item: the instance it names, or (``""``) every one."""
    instance = fields.get("instance")
    return f"{INSTANCE_AUDIENCE}{instance}" if isinstance(instance, str) and instance else ""


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > FIELD_MAX:
        return value[: FIELD_MAX - 1] + "…"
    return value
