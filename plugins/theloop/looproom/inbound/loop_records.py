"""the-loop's event-log records → the room's events.

The asks (``session.awaiting_input``), the collaborators it grants (``control.command``)
and a few other records never pass through a graph hook, so the hook cannot send them;
the-loop's event log (its stream, followed by :mod:`looproom.inbound.stream`) carries
them. :func:`to_event` maps one record to our
:class:`~looproom.events.Event`, or ``None`` for the many records the room does
not show. The id is a digest of the record, so the same record read twice (a reconnect, a
replay) is one inbox key: posted once.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

from looproom.events import ASK, COLLABORATOR_ADDED, COLLABORATOR_REMOVED, Event, SchemaError
from looproom.people import is_member_id

log = logging.getLogger(__name__)


def _ask(record: Mapping[str, Any]) -> dict[str, Any]:
    detail = {"actor": str(record.get("actor") or "")}
    return {
        "eventType": ASK,
        "text": str(record.get("question") or ""),
        "url": str(record.get("comment_url") or ""),
        "detail": {k: v for k, v in detail.items() if v},
    }


def _agent_comment(record: Mapping[str, Any]) -> dict[str, Any] | None:
    # The log keeps ids and links, never a comment's words: the room gets the link.
    if not record.get("comment_posted") or not record.get("comment_url"):
        return None
    ref = record.get("work_item")
    return {
        "eventType": "comment.agent",
        "text": f"the-loop: the agent commented on {ref}.",
        "url": str(record["comment_url"]),
    }


def _closed(record: Mapping[str, Any]) -> dict[str, Any]:
    state = str(record.get("state") or "closed")
    kind = "pull request" if record.get("kind") == "pull-request" else "issue"
    who = f" by {record['actor']}" if record.get("actor") else ""
    keys = ("state", "kind", "reason", "outcome", "source", "actor")
    return {
        "eventType": "work-item.closed",
        "text": f"the-loop: {record.get('work_item')} is {state} — its {kind} was {state}{who}.",
        "detail": {key: str(record[key]) for key in keys if record.get(key)},
    }


#: A ``control.command`` record's command and effect → our event type: only a roster
#: that changed (``already-granted`` and ``not-a-collaborator`` changed nothing).
_ROSTER_CHANGES = {
    ("add-collaborator", "granted"): COLLABORATOR_ADDED,
    ("remove-collaborator", "revoked"): COLLABORATOR_REMOVED,
}


def _collaborator(record: Mapping[str, Any]) -> dict[str, Any] | None:
    # the-loop logs each grant it applied — from a ticket comment or its CLI — with the
    # member id and/or the login; the room's roster follows it (``decide/effects``).
    kind = _ROSTER_CHANGES.get((str(record.get("command")), str(record.get("effect"))))
    member, login = str(record.get("slack") or ""), str(record.get("collaborator") or "")
    if kind is None or not (is_member_id(member) or login):
        return None
    who = f"slack:{member}" if is_member_id(member) else f"@{login}"
    said = "may now reply and add context on" if kind == COLLABORATOR_ADDED else "is off"
    detail = {
        "member": member if is_member_id(member) else "",
        "login": login,
        "source": str(record.get("source") or ""),
        "actor": str(record.get("actor") or ""),
    }
    return {
        "eventType": kind,
        "text": f"the-loop: {who} {said} {record.get('work_item')}.",
        "detail": {k: v for k, v in detail.items() if v},
    }


#: Event-log record type → its mapping. Only records no graph hook carries: the graph's
#: own notifications and phases reach us through ``theloop_hook`` with their text.
MAPPED: Mapping[str, Callable[[Mapping[str, Any]], dict[str, Any] | None]] = {
    "session.awaiting_input": _ask,
    "work_item.commented": _agent_comment,
    "work_item.ended": _closed,
    "control.command": _collaborator,
}


def record_id(record: Mapping[str, Any]) -> str:
    """A stable id for one event-log record: the same line read twice is one key."""
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "loop-log:" + hashlib.sha256(canonical.encode()).hexdigest()[:40]


def to_event(record: Any) -> Event | None:
    """The room's event for one the-loop event-log record; ``None`` for the rest.

    A record of a mapped type that does not make a valid event (no work item, say) is
    logged and skipped: the stream must not stall on one bad line.
    """
    if not isinstance(record, Mapping) or record.get("event") not in MAPPED:
        return None
    mapped = MAPPED[str(record["event"])](record)
    if mapped is None:
        return None
    wire = {
        "id": record_id(record),
        "workItem": record.get("work_item"),
        "source": "loop",
        "ts": str(record.get("ts") or ""),
        **mapped,
    }
    try:
        return Event.from_wire(wire)
    except SchemaError as exc:
        log.warning("loop stream: skipped a %s record: %s", record.get("event"), exc)
        return None
