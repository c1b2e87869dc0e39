"""GitHub's REST API as the bundle uses it: one method per endpoint.

The only place that builds a GitHub URL or its bearer header, follows its ``Link:
rel="next"`` pages (only under the configured API base: the token goes with each), and
reads its answers (:class:`~looproom.clients.answers.Read`). The base is configurable for
GitHub Enterprise and for tests; the timeout is each caller's, given at construction.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from looproom.clients.answers import Read, read_list, read_object
from looproom.clients.service import Service
from looproom.http.client import HttpResult, bearer

PEER = "GitHub"
#: GitHub's largest page.
PER_PAGE = 100


class GitHub(Service):
    """GitHub as one token's login."""

    @property
    def has_token(self) -> bool:
        return bool(self._token)

    # -- the endpoints -----------------------------------------------------------------

    def user(self) -> Read[str]:
        """``GET /user``: the token's login (its classic scopes: ``answer``'s
        ``x-oauth-scopes``)."""
        read = read_object(self._get("/user"), PEER, "the token's login", status=200)
        login = str(read.value.get("login") or "") if read.value is not None else ""
        return Read(login or None, read.answer, PEER, read.what)

    def repository(self, repo: str) -> Read[dict[str, Any]]:
        """``GET /repos/{repo}``."""
        return read_object(self._get(f"/repos/{repo}"), PEER, "the repository", status=200)

    def pull(self, repo: str, number: int) -> Read[dict[str, Any]]:
        """``GET /repos/{repo}/pulls/{number}``: its title and diffstat."""
        answer = self._get(f"/repos/{repo}/pulls/{int(number)}")
        return read_object(answer, PEER, "the pull request", status=200)

    def issue(self, repo: str, number: int) -> Read[dict[str, Any]]:
        """``GET /repos/{repo}/issues/{number}`` (a pull request's number too): its author
        is ``user.login``."""
        answer = self._get(f"/repos/{repo}/issues/{int(number)}")
        return read_object(answer, PEER, "the issue", status=200)

    def post_comment(self, repo: str, number: int, body: str) -> Read[dict[str, Any]]:
        """``POST /repos/{repo}/issues/{number}/comments``: the comment made."""
        answer = self._call("POST", self._comments(repo, number), {"body": body})
        return read_object(answer, PEER, "the comment")

    def comment_pages(
        self, repo: str, number: int, *, pages: int, since: str = ""
    ) -> Iterator[Read[list[Any]]]:
        """``GET /repos/{repo}/issues/{number}/comments`` (``since``: updated at or after),
        oldest first, a page at a time, at most ``pages`` pages."""
        query: dict[str, Any] = {"since": since} if since else {}
        return self._pages(self._comments(repo, number), {**query, "per_page": PER_PAGE}, pages)

    def open_issue(
        self, repo: str, title: str, body: str, labels: Sequence[str]
    ) -> Read[dict[str, Any]]:
        """``POST /repos/{repo}/issues``: the issue opened (201)."""
        data = {"title": title, "body": body, "labels": list(labels)}
        answer = self._call("POST", f"{self.api}/repos/{repo}/issues", data)
        return read_object(answer, PEER, "the issue opened", status=201)

    def issue_pages(
        self, repo: str, query: Mapping[str, Any], *, pages: int
    ) -> Iterator[Read[list[Any]]]:
        """``GET /repos/{repo}/issues`` with ``query`` (``state``, ``creator``, ``since``,
        ``sort``, ``direction``), a page at a time, at most ``pages`` pages."""
        url = f"{self.api}/repos/{repo}/issues"
        return self._pages(url, {**query, "per_page": PER_PAGE}, pages)

    # -- how every call is made --------------------------------------------------------

    def _comments(self, repo: str, number: int) -> str:
        return f"{self.api}/repos/{repo}/issues/{int(number)}/comments"

    def _pages(self, url: str, query: Mapping[str, Any], pages: int) -> Iterator[Read[list[Any]]]:
        """Each page as read, until one fails, none is next, or ``pages`` were read;
        the next page is followed only under :attr:`api`."""
        page: str | None = f"{url}?{urllib.parse.urlencode(query)}"
        for _ in range(pages):
            if page is None:
                return
            answer = self._get_url(page)
            read = read_list(answer, PEER, "a list")
            page = answer.next_page(self.api) if read.ok else None
            yield Read(read.value, answer, PEER, read.what, more=page is not None)
            if not read.ok:
                return

    def _headers(self) -> dict[str, str]:
        return {
            "Accept": "application/vnd.github+json",
            "User-Agent": self._agent,
            **bearer(self._token),
        }

    def _get(self, path: str) -> HttpResult:
        return self._get_url(self.api + path)

    def _get_url(self, url: str) -> HttpResult:
        return self._call("GET", url, None)

    def _call(self, method: str, url: str, data: Any) -> HttpResult:
        return self._send(method, url, self._headers(), data)
