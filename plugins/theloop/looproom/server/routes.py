"""What each of theloop's HTTP routes answers (the :class:`~looproom.server.app.Service`).

``POST /theloop/events`` stores the-loop's signed event before answering; the Slack
routes take a slash command or a press only once Slack's signature holds; health says
whether storage takes writes and both workers run; metrics is the Prometheus text; a file
link is answered with the file only when its signature holds and it has not expired.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from looproom.attach import serving
from looproom.attach.links import Refused
from looproom.attach.serving import Served
from looproom.attach.slack_files import FileStore
from looproom.decide import presses
from looproom.durable.contract import WorkQueue
from looproom.durable.worker import Worker
from looproom.from_slack import slash
from looproom.from_slack.slash_desk import SlashDesk
from looproom.inbound import slack_events
from looproom.inbound import webhook as ingress
from looproom.inbound.recent import Recent
from looproom.instances.fleet import Fleet
from looproom.loop_log.book import RoomRecords
from looproom.metrics import Metrics
from looproom.relay.relay import Relay
from looproom.server import room_records
from looproom.server.answer_first import Handler, until_taken
from looproom.server.app import Mount, WsgiApp

log = logging.getLogger(__name__)
_OK, _DEGRADED = "ok", "degraded"


class Routes:
    """One activation's answers to its HTTP routes."""

    def __init__(
        self,
        *,
        secret: str,
        signing_secret: str,
        inbox: WorkQueue,
        worker: Worker,
        relay: Relay,
        metrics: Metrics,
        slash_desk: SlashDesk,
        pressed: Handler,
        fleet: Fleet | None = None,
        answered: Recent | None = None,
        files: FileStore | None = None,
        heard: Callable[[Mapping[str, Any]], None] | None = None,
        records: RoomRecords | None = None,
    ) -> None:
        """``secret``: the-loop's webhook secret (without ``fleet``, whose instances each
        have one); ``signing_secret``: Slack's; ``pressed`` takes a verified press;
        ``answered`` keeps the webhook's last answers for the doctor; ``files`` serves the
        links to attached files; ``heard`` takes the Slack events the backend leaves
        unread (``slack_events.OURS``: the Home tab opened); ``records`` the room's records
        for the-loop's event log, read signed by loopside."""
        self._secret, self._signing_secret = secret, signing_secret
        self._inbox, self._worker, self._relay = inbox, worker, relay
        self._metrics, self._slash, self._pressed = metrics, slash_desk, pressed
        self._fleet, self._files, self._heard = fleet, files, heard
        self._records = records
        self._told: list[str] = []  # the problems last logged, so a poll logs a change once
        self.answered = answered if answered is not None else Recent()

    def receive(self, request: ingress.Request) -> ingress.Answer:
        """``POST /theloop/events``: the-loop's signed events, stored before the answer."""
        if self._fleet is not None:
            answer = self._fleet.receive(request)
        else:
            answer = ingress.handle(request, secret=self._secret, inbox=self._inbox)
        self._metrics.answered(answer.status)
        self.answered.note(answer.status)
        return answer

    def room_records(self, request: ingress.Request) -> ingress.Answer:
        """``POST /theloop/room-records``: the room's records past a cursor, read signed."""
        return room_records.answer(
            request, secret=self._secret, records=self._records, fleet=self._fleet
        )

    def command(self, headers: Mapping[str, str], body: bytes) -> ingress.Answer:
        """``POST /theloop/slack/commands``: ``/the-loop``, answered only if Slack signed it."""
        checked = slash.verify(headers, body, self._signing_secret, time.time())
        if checked.status != 200 or checked.payload is None:
            log.warning("slash command refused: %s", checked.error)
            return ingress.Answer(checked.status, {"error": checked.error})
        answer = self._slash.answer(checked.payload)
        if answer is None:
            return ingress.Answer(400, {"error": f"not a {slash.COMMAND} command"})
        return ingress.Answer(200, answer)

    def press(self, headers: Mapping[str, str], body: bytes) -> ingress.Answer:
        """``POST /theloop/slack/interactive``: a press, taken only if Slack signed it."""
        checked = presses.verify(headers, body, self._signing_secret, time.time())
        if checked.status != 200 or checked.payload is None:
            log.warning("interactive request refused: %s", checked.error)
            return ingress.Answer(checked.status, {"error": checked.error})
        until_taken(self._pressed, checked.payload)  # answered once stored (Slack waits 3 s)
        return ingress.Answer(200, {})

    def events_api(self, app: WsgiApp) -> Mount:
        """``POST /slack/events`` in HTTP mode, answered by ``app`` (the chat backend's own
        view of Slack's Events API), which is handed only what Slack signed, as strict JSON."""
        secret = self._signing_secret

        def admit(headers: Mapping[str, str], body: bytes) -> ingress.Answer | None:
            refused = slack_events.admit(headers, body, secret, time.time())
            if refused is not None:
                return refused
            event = slack_events.ours(body)
            if event is None or self._heard is None:
                return None
            self._heard(event)
            return ingress.Answer(200, {"ok": True})

        return Mount(app, admit)

    def file(self, query: str) -> Served | ingress.Answer:
        """``GET /theloop/files``: an attached file, for a link the relay handed out."""
        if self._files is None:
            return ingress.Answer(404, {"error": "this bot hands out no file links"})
        found = serving.served(self._files, query)
        if isinstance(found, Refused):
            log.warning("file link refused: %s", found.error)
            return ingress.Answer(found.status, {"error": found.error})
        return found

    def health(self) -> ingress.Answer:
        """``GET /theloop/health``, unauthenticated: ``200 ok`` when storage takes writes and
        both workers run, else ``503 degraded`` — and nothing more. What is wrong names the
        database's host, the data file, the replicas: it goes to the log, and to an admin in
        ``!theloop status`` and the doctor, never to whoever can reach the port."""
        problems = self.problems()
        if problems != self._told:
            self._told = problems
            if problems:
                log.warning("health: degraded: %s", "; ".join(problems))
            else:
                log.info("health: ok")
        return ingress.Answer(503 if problems else 200, {"status": _DEGRADED if problems else _OK})

    def problems(self) -> list[str]:
        """What keeps the room from taking and delivering events, each in a sentence."""
        return problems(self._inbox, self._worker, self._relay)

    def metrics_text(self) -> tuple[bytes, str]:
        """``GET /theloop/metrics``: the Prometheus text exposition."""
        return self._metrics.render()


def problems(inbox: WorkQueue, worker: Worker, relay: Relay) -> list[str]:
    """What keeps the room from taking and delivering events: the store refusing writes
    (named), a worker stopped — for the log, ``!theloop status`` and the doctor."""
    found = [problem for problem in (inbox.writable(),) if problem]
    if not worker.alive:
        found.append("the delivery worker is not running")
    if not relay.alive:
        found.append("the relay worker is not running")
    return found
