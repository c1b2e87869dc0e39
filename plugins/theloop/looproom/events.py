"""The event the-loop sends us, and the strict schema that admits it (docs/webhook.md).

The webhook body has the fields of the-loop's ``Event`` in its outbox JSON form. Every
field is checked and every problem is named, so a producer's typo is loud (422) rather
than a silently empty message. Unknown event *types* are admitted: a custom graph fires
custom ``notify`` events, and the-loop itself warns rather than refuses those.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: The-loop's catalog of events a channel may subscribe to (``the_loop.channels.events``).
ASK = "session.awaiting_input"
NOTIFICATION_EVENTS = (
    "decision-pending",
    "phase-approval-pending",
    "pr-review-pending",
    "security-sign-off-pending",
    "conflict-escalated",
    "work-item-complete",
)
LIFECYCLE_EVENTS = (
    "phase.started",
    "phase.completed",
    "phase.progress",
    "work-item.closed",
    "standing.started",
)
MIRROR_EVENTS = ("comment.agent", "comment.human")
KNOWN_EVENTS = (ASK, *NOTIFICATION_EVENTS, *LIFECYCLE_EVENTS, *MIRROR_EVENTS)
#: Ours, read from the-loop's event log: a collaborator it granted or revoked on a work
#: item (on the ticket or with its CLI), so the room's roster follows the-loop's.
COLLABORATOR_ADDED, COLLABORATOR_REMOVED = "collaborator.added", "collaborator.removed"

_STRING_FIELDS = ("id", "text", "url", "source", "summary", "ts")
_FIELDS = ("eventType", "workItem", "detail", "actor", *_STRING_FIELDS)
#: Generous bounds: the webhook's body limit is the real guard; these keep one field
#: from being the whole body's worth of something that should be short.
_MAX_ID = 200
_MAX_TYPE = 100
_MAX_WORK_ITEM = 300


class SchemaError(ValueError):
    """The body is JSON but not an event; ``errors`` names each offending field."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class Event:
    """One event from the-loop, validated."""

    event_type: str
    work_item: str
    id: str = ""
    text: str = ""
    url: str = ""
    detail: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    summary: str = ""
    actor: Mapping[str, Any] = field(default_factory=dict)
    ts: str = ""

    @property
    def known(self) -> bool:
        """Whether the type is in the-loop's catalog (unknown ones are kept, with a warning)."""
        return self.event_type in KNOWN_EVENTS

    @property
    def delivery_key(self) -> str:
        """The idempotency key: the producer's id, else a digest of the content.

        A retried delivery without an id is the same bytes, so it maps to the same key.
        """
        if self.id:
            return self.id
        return "sha256:" + hashlib.sha256(self.to_json().encode()).hexdigest()

    def to_json(self) -> str:
        """The wire form (camelCase keys), stable so it can be stored and compared."""
        return json.dumps(self.to_wire(), sort_keys=True, ensure_ascii=False)

    def to_wire(self) -> dict[str, Any]:
        """The event as the-loop's outbox writes it."""
        raw = asdict(self)
        raw["detail"] = dict(self.detail)
        raw["actor"] = dict(self.actor)
        raw["eventType"] = raw.pop("event_type")
        raw["workItem"] = raw.pop("work_item")
        return raw

    @classmethod
    def from_wire(cls, body: Any) -> Event:
        """Validate a decoded JSON body; raise :class:`SchemaError` naming every bad field."""
        if not isinstance(body, dict):
            raise SchemaError([f"body: expected a JSON object, got {_kind(body)}"])
        errors = _check(body)
        if errors:
            raise SchemaError(errors)
        return cls(
            event_type=body["eventType"],
            work_item=body["workItem"],
            detail=dict(body.get("detail") or {}),
            actor=dict(body.get("actor") or {}),
            **{name: body.get(name) or "" for name in _STRING_FIELDS},
        )


def _check(body: dict[str, Any]) -> list[str]:
    """Every problem with the body, one message per field."""
    errors = [f"{key}: unknown field" for key in body if key not in _FIELDS]
    errors += _required(body, "eventType", _MAX_TYPE)
    errors += _required(body, "workItem", _MAX_WORK_ITEM)
    for name in _STRING_FIELDS:
        if body.get(name) is not None and not isinstance(body[name], str):
            errors.append(f"{name}: expected a string, got {_kind(body[name])}")
    if isinstance(body.get("id"), str) and len(body["id"]) > _MAX_ID:
        errors.append(f"id: longer than {_MAX_ID} characters")
    errors += _string_map(body.get("detail"), "detail")
    if body.get("actor") is not None and not isinstance(body["actor"], dict):
        errors.append(f"actor: expected an object, got {_kind(body['actor'])}")
    return errors


def _required(body: dict[str, Any], name: str, limit: int) -> list[str]:
    value = body.get(name)
    if value is None:
        return [f"{name}: required"]
    if not isinstance(value, str):
        return [f"{name}: expected a string, got {_kind(value)}"]
    if not value.strip():
        return [f"{name}: must not be empty"]
    if len(value) > limit:
        return [f"{name}: longer than {limit} characters"]
    return []


def _string_map(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [f"{name}: expected an object of strings, got {_kind(value)}"]
    return [
        f"{name}.{key}: expected a string, got {_kind(item)}"
        for key, item in value.items()
        if not isinstance(item, str)
    ]


def _kind(value: Any) -> str:
    """A JSON type name for an error message (never the value: it may be large or secret)."""
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}.get(
        type(value), "object"
    )
