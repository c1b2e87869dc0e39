"""A loopback fake of GitHub's issue-comments API, as the relay uses it.

Like GitHub: a Bearer token is required (401 ``Bad credentials`` otherwise), an unknown
repository or issue is 404, a body that is not ``{"body": "<non-empty string>"}`` is 422,
a comment is created on every POST — GitHub is **not** idempotent, so a retried POST makes
a second comment — and ``GET …/comments?since=`` lists comments updated at or after
``since``, oldest first, a page at a time (``per_page`` default 30, at most 100; ``page``
from 1) with a ``Link`` header naming the ``next`` and ``last`` pages. Rate limiting is
scripted as GitHub answers it (403 with ``x-ratelimit-remaining: 0``, or 429 with
``Retry-After``). ``GET /user`` names the token's login and ``GET /repos/{owner}/{repo}`` a
repository it can see (``no_issues`` lists those with issues turned off).
``GET /repos/{owner}/{repo}/pulls/{n}`` describes a pull request in ``pulls`` (its title,
additions, deletions and changed_files, as GitHub names them), 404 for any other.
``GET /repos/{owner}/{repo}/issues/{n}`` is an issue in ``issues``, opened by the login
``authors`` names for it (else ``AUTHOR``; one opened through the API, by the token's).
``POST /repos/{owner}/{repo}/issues`` opens an issue (``{"title": "<non-empty>", "body",
"labels": [...]}``; 422 without a title, 410 where issues are turned off) under the next
number, kept in ``opened``; GitHub does not deduplicate these either. ``GET
/repos/{owner}/{repo}/issues`` lists them as GitHub does: ``state`` (``open`` by default,
``closed``, ``all``), ``creator`` (a login), ``since`` (updated at or after), ``sort``
(``created``, ``updated``) and ``direction`` (``desc`` by default), paged like comments.
A repository renamed or transferred (``moved``: old name → new) is redirected as GitHub
does: ``301`` for a GET, ``307`` for any other method (so a client that keeps the method
posts to the new place), ``Location`` naming the same path under the new name.
"""

from __future__ import annotations

import itertools
import re
import threading
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlencode

from tests.fakes.loopback import LoopbackServer, Request

TOKEN = "ghp_fake_relay_token"
LOGIN = "theloop-bot"
#: Who opened an issue the fake was given (not opened through it), unless ``authors`` says.
AUTHOR = "octocat"
_COMMENTS = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
_REPO = re.compile(r"^/repos/([^/]+/[^/]+)$")
_PULL = re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)$")
_ISSUES = re.compile(r"^/repos/([^/]+/[^/]+)/issues$")
_ISSUE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)$")


class FakeGitHub(LoopbackServer):
    """Issues that exist (``repo`` → numbers), and the comments posted on them."""

    def __init__(self, issues: dict[str, set[int]] | None = None) -> None:
        super().__init__()
        self.issues = issues if issues is not None else {"acme/api": {7}}
        self.comments: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.no_issues: set[str] = set()
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        #: Who opened each issue given in ``issues`` (repo, number) → login.
        self.authors: dict[tuple[str, int], str] = {}
        #: Repositories renamed or transferred: old ``owner/repo`` → new.
        self.moved: dict[str, str] = {}
        #: Issues opened through the API: (repo, number, title, body, labels), in order.
        self.opened: list[tuple[str, int, str, str, list[str]]] = []
        #: The same issues as GitHub shows them, by repository, oldest first.
        self.issue_objects: dict[str, list[dict[str, Any]]] = {}
        self._ids = itertools.count(1001)
        self._lock = threading.Lock()

    def posted(self, repo: str = "acme/api", number: int = 7) -> list[str]:
        """The bodies of the comments on one issue, oldest first."""
        with self._lock:
            return [c["body"] for c in self.comments.get((repo, number), [])]

    def route(self, request: Request) -> tuple[int, dict[str, str], Any]:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {}, {"message": "Bad credentials"}
        moved = self._moved(request)
        if moved is not None:
            return moved
        if request.method == "GET" and request.path == "/user":
            return 200, {}, {"login": LOGIN}
        pull = _PULL.match(request.path)
        if request.method == "GET" and pull:
            found = self.pulls.get((pull[1], int(pull[2])))
            return (200, {}, {"number": int(pull[2]), **found}) if found else (404, {}, {})
        issue = _ISSUE.match(request.path)
        if request.method == "GET" and issue:
            return self._issue(issue[1], int(issue[2]))
        repo = _REPO.match(request.path)
        if request.method == "GET" and repo:
            return self._repository(repo[1])
        issues = _ISSUES.match(request.path)
        if request.method == "POST" and issues:
            return self._open(issues[1], request.body)
        if request.method == "GET" and issues:
            if issues[1] not in self.issues:
                return 404, {}, {"message": "Not Found"}
            return self._page(request, self._issues_listed(issues[1], request.query))
        match = _COMMENTS.match(request.path)
        if not match or int(match[2]) not in self.issues.get(match[1], set()):
            return 404, {}, {"message": "Not Found"}
        key = (match[1], int(match[2]))
        if request.method == "GET":
            return self._page(request, self._listed(key, request.query.get("since", "")))
        body = request.body.get("body") if isinstance(request.body, dict) else None
        if not isinstance(body, str) or not body.strip():
            return 422, {}, {"message": "Validation Failed"}
        return 201, {}, self._create(key, body)

    def _moved(self, request: Request) -> tuple[int, dict[str, str], Any] | None:
        for old, new in self.moved.items():
            if request.path == f"/repos/{old}" or request.path.startswith(f"/repos/{old}/"):
                path = f"/repos/{new}" + request.path.removeprefix(f"/repos/{old}")
                query = f"?{urlencode(request.query)}" if request.query else ""
                status = 301 if request.method == "GET" else 307
                return status, {"Location": self.url + path + query}, {"message": "Moved"}
        return None

    def _open(self, repo: str, body: Any) -> tuple[int, dict[str, str], Any]:
        if repo not in self.issues:
            return 404, {}, {"message": "Not Found"}
        if repo in self.no_issues:
            return 410, {}, {"message": "Issues are disabled for this repo"}
        fields = body if isinstance(body, dict) else {}
        title, text = fields.get("title"), fields.get("body", "")
        labels = fields.get("labels", [])
        if not isinstance(title, str) or not title.strip() or not isinstance(text, str):
            return 422, {}, {"message": "Validation Failed"}
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            return 422, {}, {"message": "Validation Failed"}
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self._lock:
            number = max(self.issues[repo], default=0) + 1
            self.issues[repo].add(number)
            self.opened.append((repo, number, title, text, labels))
            url = f"https://github.com/{repo}/issues/{number}"
            issue = {
                "number": number,
                "html_url": url,
                "title": title,
                "body": text,
                "state": "open",
                "labels": [{"name": label} for label in labels],
                "user": {"login": LOGIN},
                "created_at": now,
                "updated_at": now,
            }
            self.issue_objects.setdefault(repo, []).append(issue)
        return 201, {}, issue

    def _issue(self, repo: str, number: int) -> tuple[int, dict[str, str], Any]:
        with self._lock:
            made = [i for i in self.issue_objects.get(repo, []) if i["number"] == number]
            if made:
                return 200, {}, made[0]
            if number not in self.issues.get(repo, set()):
                return 404, {}, {"message": "Not Found"}
            login = self.authors.get((repo, number), AUTHOR)
        url = f"https://github.com/{repo}/issues/{number}"
        return 200, {}, {"number": number, "html_url": url, "user": {"login": login}}

    def _issues_listed(self, repo: str, query: dict[str, str]) -> list[dict[str, Any]]:
        state = query.get("state", "open")
        creator, since = query.get("creator", ""), query.get("since", "")
        with self._lock:
            found = [
                issue
                for issue in self.issue_objects.get(repo, [])
                if (state == "all" or issue["state"] == state)
                and (not creator or issue["user"]["login"] == creator)
                and issue["updated_at"] >= since
            ]
        field = "updated_at" if query.get("sort") == "updated" else "created_at"
        found.sort(key=lambda issue: (issue[field], issue["number"]))
        return found if query.get("direction") == "asc" else found[::-1]

    def _repository(self, repo: str) -> tuple[int, dict[str, str], Any]:
        if repo not in self.issues:
            return 404, {}, {"message": "Not Found"}
        permissions = {"admin": False, "push": True, "pull": True}
        body = {"full_name": repo, "has_issues": repo not in self.no_issues}
        return 200, {}, {**body, "permissions": permissions}

    def _create(self, key: tuple[str, int], body: str) -> dict[str, Any]:
        number = next(self._ids)
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        comment = {
            "id": number,
            "body": body,
            "user": {"login": LOGIN},
            "created_at": now,
            "updated_at": now,
            "html_url": f"https://github.com/{key[0]}/issues/{key[1]}#issuecomment-{number}",
        }
        with self._lock:
            self.comments.setdefault(key, []).append(comment)
        return comment

    def _page(
        self, request: Request, comments: list[dict[str, Any]]
    ) -> tuple[int, dict[str, str], Any]:
        per_page = max(1, min(100, int(request.query.get("per_page") or 30)))
        page = max(1, int(request.query.get("page") or 1))
        last = max(1, -(-len(comments) // per_page))
        links = [(page + 1, "next")] if page < last else []
        links += [(last, "last")] if page < last else []
        header = ", ".join(
            f'<{self.url}{request.path}?{urlencode({**request.query, "page": n})}>; rel="{rel}"'
            for n, rel in links
        )
        body = comments[(page - 1) * per_page : page * per_page]
        return 200, ({"Link": header} if header else {}), body

    def _listed(self, key: tuple[str, int], since: str) -> list[dict[str, Any]]:
        with self._lock:
            return [c for c in self.comments.get(key, []) if c["updated_at"] >= since]
