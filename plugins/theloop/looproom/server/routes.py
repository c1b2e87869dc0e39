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
from looproom.durable.sqlite import StorageError
from looproom.durable.worker import Worker
from looproom.from_slack import slash
from looproom.from_slack.slash_desk import SlashDesk
from looproom.inbound import slack_events
from looproom.inbound import webhook as ingress
from looproom.inbound.recent import Recent
from looproom.instances.fleet import Fleet
from looproom.metrics import Metrics
from looproom.relay.relay import Relay
from looproom.server.app import Mount, WsgiApp
from looproom.stores import Stores

log = logging.getLogger(__name__)


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
        stores: Stores,
        metrics: Metrics,
        slash_desk: SlashDesk,
        pressed: Callable[[Mapping[str, Any]], None],
        fleet: Fleet | None = None,
        answered: Recent | None = None,
        files: FileStore | None = None,
    ) -> None:
        """``secret``: the-loop's webhook secret (without ``fleet``, whose instances each
        have one); ``signing_secret``: Slack's; ``pressed`` takes a verified press;
        ``answered`` keeps the webhook's last answers for the doctor; ``files`` serves the
        links to attached files."""
        self._secret, self._signing_secret = secret, signing_secret
        self._inbox, self._worker, self._relay, self._stores = inbox, worker, relay, stores
        self._metrics, self._slash, self._pressed = metrics, slash_desk, pressed
        self._fleet, self._files = fleet, files
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
        self._pressed(checked.payload)
        return ingress.Answer(200, {})

    def events_api(self, app: WsgiApp) -> Mount:
        """``POST /slack/events`` in HTTP mode, answered by ``app`` (the chat backend's own
        view of Slack's Events API), which is handed only what Slack signed, as strict JSON."""
        secret = self._signing_secret
        return Mount(
            app, lambda headers, body: slack_events.admit(headers, body, secret, time.time())
        )

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
        """``GET /theloop/health``: 200 when storage takes writes and both workers run."""
        problems = [problem for problem in (self._inbox.writable(),) if problem]
        if not self._worker.alive:
            problems.append("the delivery worker is not running")
        if not self._relay.alive:
            problems.append("the relay worker is not running")
        shared = self._shared_health()
        if problems:
            return ingress.Answer(503, {"status": "failing", "problems": problems, **shared})
        return ingress.Answer(200, {"status": "ok", **shared})

    def _shared_health(self) -> dict[str, Any]:
        """In the shared mode, the database and the replicas seen recently."""
        if self._stores.heartbeat is None:
            return {}
        try:
            seen = [replica.name for replica in self._stores.replicas()]
        except StorageError:
            seen = []  # the database's failure is the problem already named
        return {"store": self._stores.where, "replica": self._stores.replica, "replicas": seen}

    def metrics_text(self) -> tuple[bytes, str]:
        """``GET /theloop/metrics``: the Prometheus text exposition."""
        return self._metrics.render()
