"""``POST /theloop/room-records``: the room's records past a cursor, for loopside to append.

Signed as the webhook is, with the same secret (with ``instances:``, any instance's, the
key id naming which), over a body that says where to read from::

    {"after": <the last seq read, 0 at first>, "limit": <1..500, default 500>}

Checks run before anything is read: 405 → 503 no secret (fail closed) → 413 → 401 → 400;
a store that cannot be read is 503 with ``Retry-After``.
The answer is ``{"records": [...], "next": <cursor>, "missed": <n>, "more": <bool>}``; each
record ``{"seq", "id", "event", "ts", "level", "fields"}``. An instance is shown only the
records of the work items it owns, and the room's own records of no work item: those
naming an instance (a ``/the-loop`` control command sent to it) to that instance alone,
the rest (a catch-up, a split check, a kickoff's question, a refusal) to every instance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from looproom import strict_json
from looproom.durable.sqlite import StorageError
from looproom.inbound.signing import SignatureError, verify
from looproom.inbound.webhook import SECRET_ENV, Answer, Request, body_too_large
from looproom.instances.fleet import Fleet
from looproom.instances.webhook import identify
from looproom.loop_log.book import PAGE_MAX, RoomRecords
from looproom.loop_log.channel import INSTANCE_AUDIENCE

log = logging.getLogger(__name__)


def answer(
    request: Request,
    *,
    secret: str,
    records: RoomRecords | None,
    fleet: Fleet | None = None,
    now: float | None = None,
) -> Answer:
    """Answer one read; nothing is read before the signature holds."""
    if request.method.upper() != "POST":
        return Answer(405, {"error": "method not allowed: POST only"})
    if fleet is None and not secret:
        log.error("room records refused: no secret configured — set %s (fail closed)", SECRET_ENV)
        return Answer(503, {"error": "not configured"})
    if body_too_large(request.content_length) or len(request.body) > 4096:
        return Answer(413, {"error": "body over 4096 bytes"})
    at = time.time() if now is None else now
    try:
        visible = _signer(request, secret, fleet, at)
    except SignatureError as exc:
        log.warning("room records refused: %s", exc.reason)
        return Answer(401, {"error": exc.reason})
    try:
        after, limit = _cursor(request.body)
    except ValueError as exc:
        return Answer(400, {"error": str(exc)})
    if records is None:
        return Answer(503, {"error": "this bot keeps no records for the-loop's event log"})
    try:
        page = records.since(after, limit, visible)
    except StorageError as exc:
        log.error("room records: not read, answering 503: %s", exc)
        return Answer(503, {"error": "storage unavailable; retry later"}, {"Retry-After": "30"})
    return Answer(
        200,
        {"records": page.records, "next": page.next, "missed": page.missed, "more": page.more},
    )


def _signer(
    request: Request, secret: str, fleet: Fleet | None, at: float
) -> Callable[[str], bool] | None:
    """Which work items' records the signer may read (None: all); raises when none signed."""
    if fleet is None:
        verify(secret, request.headers, request.body, at)
        return None
    sender = identify(fleet.instances, request.headers, request.body, at)

    def owned(work_item: str) -> bool:
        if not work_item:
            return True  # the room's own: every instance shares the room
        if work_item.startswith(INSTANCE_AUDIENCE):
            return work_item.removeprefix(INSTANCE_AUDIENCE) == sender.name
        owner = fleet.owners.owner(work_item)
        return owner is not None and owner.name == sender.name

    return owned


def _cursor(body: bytes) -> tuple[int, int]:
    """``after`` and ``limit`` from the body, each checked; ValueError names what is wrong."""
    try:
        wire: Any = strict_json.loads(body or b"{}")
    except strict_json.StrictJSONError as exc:
        raise ValueError(f"body is not JSON: {exc}") from exc
    if not isinstance(wire, dict):
        raise ValueError("body must be a JSON object")
    after, limit = wire.get("after", 0), wire.get("limit", PAGE_MAX)
    if isinstance(after, bool) or not isinstance(after, int) or after < 0:
        raise ValueError("after: expected the last seq read, an integer ≥ 0")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= PAGE_MAX:
        raise ValueError(f"limit: expected an integer from 1 to {PAGE_MAX}")
    return after, limit
