"""A loopback fake of Jira's REST API, the part the relay and the-loop's Jira ledger use.

Like Jira: Cloud (REST 3) takes ``Basic base64(email:token)`` and Data Center (REST 2) a
personal access token as ``Bearer``; anything else is 401 with Jira's own shape
(``{"errorMessages": [...], "errors": {}}``). An issue that does not exist is 404. A
comment's ``body`` must be an ADF document on REST 3 (``{"type": "doc", "version": 1,
"content": [...]}``, every text node a non-empty string) and a string on REST 2, else 400
``Comment body is not valid``. Each POST creates a comment — Jira is **not** idempotent —
keeping the ``properties`` it was created with; ``GET …/comment`` lists them oldest first
a page at a time (``startAt``, ``maxResults`` capped at 100, ``total``), with their
``properties`` only under ``expand=properties``. ``GET …/myself`` names the account.
Faults are scripted as for every loopback fake: a 429 with ``Retry-After``, a 5xx, a
dropped connection, or a comment that lands while its answer is lost.
"""

from __future__ import annotations

import base64
import itertools
import re
import threading
from typing import Any

from tests.fakes.loopback import LoopbackServer, Request

EMAIL, TOKEN = "relay@acme.test", "jira-fake-api-token"
ACCOUNT = "5b10ac8d82e05b22cc7d4ef5"
SITE = "acme.atlassian.net"
_PATH = re.compile(r"^/rest/api/(?P<rest>[23])/(?P<rest_of>.+)$")
_COMMENTS = re.compile(r"^issue/(?P<key>[A-Z][A-Z0-9_]+-[0-9]+)/comment$")
_INVALID = {"errorMessages": [], "errors": {"comment": "Comment body is not valid!"}}


class FakeJira(LoopbackServer):
    """Tickets that exist (``OPS-12`` …) on one deployment, and the comments on them."""

    def __init__(self, issues: set[str] | None = None, *, deployment: str = "cloud") -> None:
        super().__init__()
        self.issues = issues if issues is not None else {"OPS-12"}
        self.deployment = deployment
        self.rest = "2" if deployment == "data-center" else "3"
        self.comments: dict[str, list[dict[str, Any]]] = {}
        self._ids = itertools.count(10001)
        self._lock = threading.Lock()

    def posted(self, key: str = "OPS-12") -> list[dict[str, Any]]:
        """The comments on one ticket as stored (body, author, properties), oldest first."""
        with self._lock:
            return list(self.comments.get(key, []))

    def add(self, key: str, body: Any, author: str = "557058:someone-else") -> None:
        """A comment someone else wrote on the ticket."""
        with self._lock:
            self.comments.setdefault(key, []).append(self._comment(body, author, []))

    def route(self, request: Request) -> tuple[int, dict[str, str], Any]:
        said = {name.lower(): value for name, value in request.headers.items()}
        if not self._authorized(said.get("authorization", "")):  # header names: any case
            return 401, {}, {"errorMessages": ["You are not authenticated."], "errors": {}}
        path = _PATH.match(request.path)
        if path is None or path["rest"] != self.rest:
            return 404, {}, {"errorMessages": ["Not found"], "errors": {}}
        if path["rest_of"] == "myself" and request.method == "GET":
            return 200, {}, {"accountId": ACCOUNT, "key": ACCOUNT, "active": True}
        comments = _COMMENTS.match(path["rest_of"])
        if comments is None:
            return 404, {}, {"errorMessages": ["Not found"], "errors": {}}
        key = comments["key"]
        if key not in self.issues:
            missing = "Issue does not exist or you do not have permission to see it."
            return 404, {}, {"errorMessages": [missing], "errors": {}}
        if request.method == "GET":
            return 200, {}, self._page(key, request.query)
        return self._create(key, request.body)

    def _authorized(self, header: str) -> bool:
        if self.deployment == "data-center":
            return header == f"Bearer {TOKEN}"
        return header == "Basic " + base64.b64encode(f"{EMAIL}:{TOKEN}".encode()).decode()

    def _create(self, key: str, request: Any) -> tuple[int, dict[str, str], Any]:
        fields = request if isinstance(request, dict) else {}
        body, properties = fields.get("body"), fields.get("properties", [])
        valid = _adf(body) if self.rest == "3" else isinstance(body, str) and body.strip()
        if not valid or not isinstance(properties, list):
            return 400, {}, _INVALID
        comment = self._comment(body, ACCOUNT, properties)
        with self._lock:
            self.comments.setdefault(key, []).append(comment)
        return 201, {}, {k: v for k, v in comment.items() if k != "properties"}

    def _comment(self, body: Any, author: str, properties: list[Any]) -> dict[str, Any]:
        number = str(next(self._ids))
        return {
            "id": number,
            "self": f"{self.url}/rest/api/{self.rest}/issue/10010/comment/{number}",
            "author": {"accountId": author, "key": author, "displayName": author},
            "body": body,
            "created": "2026-12-03T09:00:00.000+0000",
            "updated": "2026-12-03T09:00:00.000+0000",
            "properties": properties,
        }

    def _page(self, key: str, query: dict[str, str]) -> dict[str, Any]:
        start = max(0, int(query.get("startAt") or 0))
        size = max(1, min(100, int(query.get("maxResults") or 100)))
        expand = "properties" in (query.get("expand") or "").split(",")
        with self._lock:
            every = self.comments.get(key, [])
            page = [
                c if expand else {k: v for k, v in c.items() if k != "properties"}
                for c in every[start : start + size]
            ]
            return {"startAt": start, "maxResults": size, "total": len(every), "comments": page}


def _adf(node: Any) -> bool:
    """Whether ``node`` is an ADF document Jira would take: typed nodes all the way down,
    every text node a non-empty string."""
    if not isinstance(node, dict) or node.get("type") != "doc" or node.get("version") != 1:
        return False
    return isinstance(node.get("content"), list) and all(_node(n) for n in node["content"])


def _node(node: Any) -> bool:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        return False
    if node["type"] == "text":
        return isinstance(node.get("text"), str) and bool(node["text"])
    content = node.get("content", [])
    return isinstance(content, list) and all(_node(n) for n in content)
