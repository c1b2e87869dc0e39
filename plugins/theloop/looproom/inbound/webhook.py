"""The webhook ``POST /theloop/events`` as a pure function of the request (docs/webhook.md).

Checks run cheapest-and-safest first, so an unauthenticated caller learns nothing and
costs little: 503 no secret (fail closed) → 413 too large (before reading, when the length
is declared) → 401 signature/timestamp → 400 not JSON → 422 schema → store → 202, or 200 for
an id already stored (a retried delivery posts nothing new). The event is stored durably
before the 202 is returned. "Not JSON" is strict (:mod:`looproom.strict_json`): what would
fail only when stored or posted is refused here, naming the field. Storage that cannot be
written (disk full, read-only) is 503 with ``Retry-After``: the sender keeps the event.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from looproom import strict_json
from looproom.durable.sqlite import StorageError
from looproom.events import Event, SchemaError
from looproom.http.rules import MAX_BODY_BYTES
from looproom.inbound.signing import SignatureError, verify

log = logging.getLogger(__name__)

SECRET_ENV = "THELOOP_WEBHOOK_SECRET"
#: Seconds a sender is asked to wait when the bot cannot store its event.
STORAGE_RETRY_AFTER = 30


class Inbox(Protocol):
    """Where accepted events go: ``put`` stores durably, False for a known key."""

    def put(self, key: str, payload: str, group: str = "") -> bool: ...


def admit(inbox: Inbox, event: Event) -> bool:
    """Store ``event`` once, keyed for idempotency and ordered within its work item."""
    return inbox.put(event.delivery_key, event.to_json(), group=event.work_item)


@dataclass(frozen=True)
class Request:
    """What the webhook needs of an HTTP request; ``body`` is at most limit + 1 bytes."""

    method: str
    headers: Mapping[str, str]
    body: bytes
    content_length: int | None = None


@dataclass(frozen=True)
class Answer:
    """The HTTP answer: a status, a JSON body and any extra headers."""

    status: int
    body: dict[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)

    def json(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)


def body_too_large(content_length: int | None) -> bool:
    """Whether a declared length is over the limit, so the body need not be read at all."""
    return content_length is not None and content_length > MAX_BODY_BYTES


def handle(request: Request, *, secret: str, inbox: Inbox, now: float | None = None) -> Answer:
    """Answer one webhook request; stores the event before answering 202."""
    if request.method.upper() != "POST":
        return Answer(405, {"error": "method not allowed: POST only"})
    if not secret:
        log.error("webhook refused: no secret configured — set %s (fail closed)", SECRET_ENV)
        return Answer(503, {"error": "webhook not configured"})
    if body_too_large(request.content_length) or len(request.body) > MAX_BODY_BYTES:
        return Answer(413, {"error": f"body over {MAX_BODY_BYTES} bytes"})
    try:
        verify(secret, request.headers, request.body, time.time() if now is None else now)
    except SignatureError as exc:
        log.warning("webhook refused: %s", exc.reason)
        return Answer(401, {"error": exc.reason})
    return accept(request.body, inbox)


#: ``gate(event)``: an answer refusing a verified event before it is stored, or None.
Gate = Callable[[Event], "Answer | None"]


def accept(body: bytes, inbox: Inbox, gate: Gate | None = None) -> Answer:
    """A verified body: 400 not JSON → 422 not an event → ``gate``'s refusal → store."""
    try:
        wire = strict_json.loads(body)
    except strict_json.StrictJSONError as exc:
        return Answer(400, {"error": "body is not JSON", "errors": exc.errors})
    try:
        event = Event.from_wire(wire)
    except SchemaError as exc:
        return Answer(422, {"error": "not an event", "errors": exc.errors})
    refused = gate(event) if gate is not None else None
    if refused is not None:
        return refused
    warnings = [] if event.known else [_unknown_type(event.event_type)]
    if warnings:
        log.warning("webhook: %s", warnings[0])
    key = event.delivery_key
    try:
        stored = admit(inbox, event)
    except StorageError as exc:
        log.error("webhook: event %s not stored, answering 503: %s", key, exc)
        return Answer(
            503,
            {"error": "storage unavailable; retry later"},
            {"Retry-After": str(STORAGE_RETRY_AFTER)},
        )
    if not stored:
        return Answer(200, {"status": "duplicate", "id": key})
    return Answer(
        202, {"status": "accepted", "id": key, **({"warnings": warnings} if warnings else {})}
    )


def _unknown_type(event_type: str) -> str:
    return f"eventType {event_type!r} is not in the-loop's catalog; accepted as a custom event"
