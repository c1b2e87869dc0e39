"""the-loop's control plane (``/api/v1``) as the bundle uses it: one method per path.

The only place that builds a the-loop API URL or its bearer header (a proxy in front of
the-loop may ask one) and reads its answers (:class:`~looproom.clients.answers.Read`).
The event stream keeps its own streaming reader (:mod:`looproom.inbound.stream`) but
takes its address and headers from :class:`EventStream` here. The timeout is each
caller's, given at construction: a slash command's answer has Slack's 3 s, the relay more.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Any

from looproom.clients.answers import Read, read_list, read_object
from looproom.clients.service import Service
from looproom.http.client import USER_AGENT, HttpResult, bearer, http

PEER = "the-loop"
HEALTH_PATH = "/api/v1/health"
REPLY_PATH = "/api/v1/sessions/reply"
SKIP_PATH = "/api/v1/graph/skip"
EVENTS_PATH = "/api/v1/events"
WORK_ITEMS_PATH = "/api/v1/work-items"
DAEMONS_PATH = "/api/v1/daemons"
INSTANCE_PATH, RESTART_PATH = "/api/v1/instance", "/api/v1/restart"
STANDING_PATH = "/api/v1/standing-sessions"
STANDING_CONTROL_PATH = "/api/v1/standing-sessions/control"
SAY_PATH = "/api/v1/standing-sessions/say"
STREAM_PATH = "/api/v1/stream"
#: The calls a relay item may store (``target["path"]``), each a method below.
RELAY_PATHS = frozenset({REPLY_PATH, SKIP_PATH, SAY_PATH})


class LoopApi(Service):
    """One the-loop instance's control plane at ``api`` (its base URL)."""

    # -- the paths -----------------------------------------------------------------------

    def health(self) -> Read[dict[str, Any]]:
        """``GET /api/v1/health``."""
        return read_object(self._call("GET", HEALTH_PATH), PEER, "its health", status=200)

    def daemons(self) -> Read[list[Any]]:
        """``GET /api/v1/daemons``: each daemon's pid and last cycle."""
        return read_list(self._call("GET", DAEMONS_PATH), PEER, "its daemons")

    def instance(self) -> Read[dict[str, Any]]:
        """``GET /api/v1/instance``: its name, scope and the work items it manages."""
        return read_object(self._call("GET", INSTANCE_PATH), PEER, "the instance", status=200)

    def restart(self, *, upgrade: bool) -> Read[dict[str, Any]]:
        """``POST /api/v1/restart {withUpgrade}``: it schedules its own restart."""
        answer = self._call("POST", RESTART_PATH, {"withUpgrade": upgrade})
        return read_object(answer, PEER, "the restart scheduled")

    def standing_sessions(self) -> Read[list[Any]]:
        """``GET /api/v1/standing-sessions``: a row per session."""
        return read_list(self._call("GET", STANDING_PATH), PEER, "the standing sessions")

    def standing_control(self, name: str, verb: str) -> Read[dict[str, Any]]:
        """``POST /api/v1/standing-sessions/control {name, verb}``."""
        answer = self._call("POST", STANDING_CONTROL_PATH, {"name": name, "verb": verb})
        return read_object(answer, PEER, "the sessions changed")

    def say(self, request: Mapping[str, Any], *, key: str = "") -> HttpResult:
        """``POST /api/v1/standing-sessions/say {name, text, actor}``."""
        return self._call("POST", SAY_PATH, request, key=key)

    def reply(self, request: Mapping[str, Any], *, key: str = "") -> HttpResult:
        """``POST /api/v1/sessions/reply {ref, text, actor}`` (``key``: its
        ``Idempotency-Key``; the raw answer, since a 5xx may have delivered it)."""
        return self._call("POST", REPLY_PATH, request, key=key)

    def skip(self, request: Mapping[str, Any], *, key: str = "") -> HttpResult:
        """``POST /api/v1/graph/skip {repo, workItem, nodes, reason}``."""
        return self._call("POST", SKIP_PATH, request, key=key)

    def events(self, query: Mapping[str, Any]) -> Read[list[Any]]:
        """``GET /api/v1/events?type=&workItem=&since=&limit=``: its event log's records."""
        path = f"{EVENTS_PATH}?{urllib.parse.urlencode(query)}"
        return read_list(self._call("GET", path), PEER, "its event log")

    def work_items(self) -> Read[list[Any]]:
        """``GET /api/v1/work-items``: each work item's portable record."""
        return read_list(self._call("GET", WORK_ITEMS_PATH), PEER, "its work items")

    def post(self, path: str, request: Mapping[str, Any], *, key: str = "") -> HttpResult:
        """A stored relay call (``target["path"]``, one of :data:`RELAY_PATHS`)."""
        calls = {REPLY_PATH: self.reply, SKIP_PATH: self.skip, SAY_PATH: self.say}
        return calls[path](request, key=key)

    # -- how every call is made ----------------------------------------------------------

    def _call(self, method: str, path: str, data: Any = None, *, key: str = "") -> HttpResult:
        headers = {"User-Agent": self._agent, **bearer(self._token)}
        if key:
            headers["Idempotency-Key"] = key
        return self._send(method, self.api + path, headers, data)


def stream_url(url: str) -> str:
    """The stream URL; a bare control-plane base URL gets ``/api/v1/stream``."""
    parts = urllib.parse.urlsplit(url)
    return parts._replace(path=STREAM_PATH).geturl() if parts.path in ("", "/") else url


class EventStream:
    """Where the-loop's event stream is and how it is asked: the URL (:func:`stream_url`)
    and the headers of each connection."""

    def __init__(self, url: str, token: str = "", *, user_agent: str = USER_AGENT) -> None:
        self.url = stream_url(url)
        self._token, self._agent = token, user_agent

    def headers(self, last_id: str = "") -> dict[str, str]:
        """One connection's headers, resuming after ``last_id`` when there is one."""
        headers = {
            "Accept": "text/event-stream",
            "Cache-Control": "no-cache",
            "User-Agent": self._agent,
            **bearer(self._token),
        }
        if last_id:
            headers["Last-Event-ID"] = last_id
        return headers

    def opens(self, timeout: float) -> HttpResult:
        """Whether it opens: the status and headers of one connection, no event read."""
        return http("GET", self.url, self.headers(), None, timeout, read_body=False)
