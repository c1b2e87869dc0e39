"""``POST /theloop/events`` with many instances: which one signed, and is the work item its.

The same checks in the same order as the single-secret webhook
(:mod:`looproom.inbound.webhook`), with the instance told apart before anything else is
read: ``X-TheLoop-Key-Id`` names it and only its secrets are tried; without the header
every instance's are, and the one that verifies names it (no two instances share a
secret). A verified event about a work item another instance owns is refused, 403, naming
the owner — before it is stored, so it is never posted. One that would be a new learned
claim when the claims are full and all in use is refused 503: nothing is taken from the
instance that owns a live work item.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence

from looproom.events import Event
from looproom.inbound import webhook as ingress
from looproom.inbound.signing import SignatureError, verify
from looproom.instances.owners import ClaimsFull, Owners
from looproom.settings.instances import Instance

log = logging.getLogger(__name__)

KEY_ID_HEADER = "X-TheLoop-Key-Id"
#: Seconds a sender is asked to wait when its new work item finds the claims full.
CLAIMS_RETRY_AFTER = 300


def identify(
    instances: Sequence[Instance], headers: Mapping[str, str], body: bytes, now: float
) -> Instance:
    """The instance whose secret signed ``body``; :class:`SignatureError` when none did."""
    lowered = {name.lower(): value for name, value in headers.items()}
    key_id = lowered.get(KEY_ID_HEADER.lower(), "").strip()
    if key_id:
        named = [instance for instance in instances if instance.key_id == key_id]
        if not named:
            raise SignatureError(f"unknown {KEY_ID_HEADER}")
        candidates: Sequence[Instance] = named
    else:
        candidates = instances
    problem = SignatureError("bad signature")
    for instance in candidates:
        for secret in instance.secrets:
            try:
                verify(secret, headers, body, now)
            except SignatureError as exc:
                problem = exc
                continue
            return instance
    raise problem


class Ingress:
    """The webhook of a bot with ``instances:``; ``seen(name)`` hears of each event stored
    or found a duplicate, by the instance that sent it."""

    def __init__(
        self,
        instances: Sequence[Instance],
        owners: Owners,
        inbox: ingress.Inbox,
        seen: Callable[[str], None] = lambda _name: None,
        answered: Callable[[str, int], None] = lambda _name, _status: None,
    ) -> None:
        """``answered(name, status)`` hears each answer, by the instance it was for: the
        one that signed, or the one a badly signed request's key id names (``""``: none)."""
        self._instances, self._owners, self._inbox, self._seen = instances, owners, inbox, seen
        self._answered = answered

    def handle(self, request: ingress.Request, now: float | None = None) -> ingress.Answer:
        if request.method.upper() != "POST":
            return ingress.Answer(405, {"error": "method not allowed: POST only"})
        if ingress.body_too_large(request.content_length) or (
            len(request.body) > ingress.MAX_BODY_BYTES
        ):
            return ingress.Answer(413, {"error": f"body over {ingress.MAX_BODY_BYTES} bytes"})
        try:
            sender = identify(
                self._instances, request.headers, request.body, time.time() if now is None else now
            )
        except SignatureError as exc:
            log.warning("webhook refused: %s", exc.reason)
            self._answered(self._named(request.headers), 401)
            return ingress.Answer(401, {"error": exc.reason})
        answer = ingress.accept(request.body, self._inbox, lambda event: self.gate(sender, event))
        if answer.status in (200, 202):
            self._seen(sender.name)
        self._answered(sender.name, answer.status)
        return answer

    def _named(self, headers: Mapping[str, str]) -> str:
        """The instance a request's key id names (``""``: no key id, or no such one)."""
        lowered = {name.lower(): value for name, value in headers.items()}
        key_id = lowered.get(KEY_ID_HEADER.lower(), "").strip()
        return next((i.name for i in self._instances if key_id and i.key_id == key_id), "")

    def gate(self, sender: Instance, event: Event) -> ingress.Answer | None:
        """403 unless ``event``'s work item is ``sender``'s (claimed now if nobody's); 503
        with ``Retry-After`` when it would be a new claim and the learned claims are at
        their cap, all in use: the sender keeps the event and tries again."""
        try:
            owner = self._owners.claim(sender, event.work_item)
        except ClaimsFull as full:
            log.warning("webhook refused an event of instance %s: %s", sender.name, full)
            return ingress.Answer(
                503,
                {"error": str(full), "instance": sender.name},
                {"Retry-After": str(CLAIMS_RETRY_AFTER)},
            )
        if owner is not None and owner.name == sender.name:
            return None
        if owner is None:
            reason = (
                f"work item {event.work_item} is not instance {sender.name}'s: no repository "
                "or prefix of its workItems matches, and it does not learn"
            )
        else:
            reason = f"work item {event.work_item} belongs to instance {owner.name}"
        log.warning("webhook refused an event of instance %s: %s", sender.name, reason)
        return ingress.Answer(403, {"error": reason, "instance": sender.name})
