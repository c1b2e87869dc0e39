"""Opening one GitHub issue once: ``POST /repos/{owner}/{repo}/issues`` with the bot's token,
and finding it again before another try.

GitHub does not deduplicate issue creation. Each kickoff's issue carries a hidden marker
naming its Slack message (``looproom.kickoff.body.marker``); before any attempt after the
first — a timeout, a 5xx, a bot killed mid-request — the repository's issues the bot's own
login opened since the request are listed (``GET /repos/{repo}/issues?creator=…&since=…``,
read from GitHub's database, not its search index, so an issue created a moment ago is
there) and the marker looked for: found, it is that issue; not found, it is created.
"""

from __future__ import annotations

import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from looproom.durable.outcome import Failed, RetryLater
from looproom.http.client import USER_AGENT, HttpResult, http, outcome_of

#: Pages of 100 issues read when looking for one: far more than a bot opens in the window.
FIND_PAGES = 5


@dataclass(frozen=True)
class OpenedIssue:
    """The issue opened (``number`` > 0), or why not."""

    repo: str
    number: int = 0
    url: str = ""
    error: str = ""
    #: Not opened now, and it may be later: a peer's outage, not a refusal.
    retry: bool = False

    @property
    def ref(self) -> str:
        return f"github:{self.repo}#{self.number}" if self.number else ""


class IssueMaker:
    """Issues as the bot's login; the API base is configurable for GitHub Enterprise."""

    def __init__(self, api: str, token: str, *, timeout: float = 15.0) -> None:
        self._api, self._token, self._timeout = api.rstrip("/"), token, timeout
        self._login = ""

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "User-Agent": USER_AGENT,
        }

    def open(self, repo: str, title: str, body: str, labels: tuple[str, ...]) -> OpenedIssue:
        data = {"title": title, "body": body, "labels": list(labels)}
        url = f"{self._api}/repos/{repo}/issues"
        answer = http("POST", url, self._headers(), data, self._timeout)
        if answer.status != 201:
            return _not_opened(repo, answer)
        return _issue(repo, answer.json()) or OpenedIssue(
            repo, error="GitHub's answer named no issue number"
        )

    def find(self, repo: str, marker: str, since: str) -> OpenedIssue | None:
        """The issue the bot opened in ``repo`` since ``since`` whose body carries
        ``marker``; None when there is none; an :class:`OpenedIssue` with ``error`` (and
        ``retry``) when GitHub cannot be asked now."""
        login = self._own_login()
        if isinstance(login, OpenedIssue):
            return OpenedIssue(repo, error=login.error, retry=login.retry)
        query = {"state": "all", "creator": login, "since": since, "per_page": 100}
        query |= {"sort": "created", "direction": "desc"}
        page: str | None = f"{self._api}/repos/{repo}/issues?{urllib.parse.urlencode(query)}"
        for _ in range(FIND_PAGES):
            if page is None:
                return None
            answer = http("GET", page, self._headers(), None, self._timeout)
            if answer.status != 200:
                return _not_opened(repo, answer)
            listed = answer.json()
            for issue in listed if isinstance(listed, list) else []:
                if isinstance(issue, dict) and marker in str(issue.get("body") or ""):
                    return _issue(repo, issue)
            page = answer.next_page(self._api)
        return None

    def _own_login(self) -> str | OpenedIssue:
        """The token's login (asked once), or why it cannot be known now."""
        if not self._login:
            answer = http("GET", f"{self._api}/user", self._headers(), None, self._timeout)
            me = answer.json() if answer.status == 200 else None
            login = str(me.get("login") or "") if isinstance(me, dict) else ""
            if not login:
                return _not_opened("", answer)
            self._login = login
        return self._login


def _issue(repo: str, found: Any) -> OpenedIssue | None:
    number = found.get("number") if isinstance(found, dict) else None
    if not isinstance(number, int) or number <= 0:
        return None
    return OpenedIssue(repo, number, str(found.get("html_url") or ""))


def _not_opened(repo: str, answer: HttpResult) -> OpenedIssue:
    """Why GitHub did not do it, and whether it may later (an outage, a rate limit)."""
    outcome = outcome_of(answer, "GitHub", time.time())
    if outcome is None:  # a 2xx that is not what was asked for
        return OpenedIssue(repo, error=f"GitHub answered {answer.status}")
    retry = isinstance(outcome, RetryLater)
    why = outcome.reason if isinstance(outcome, RetryLater | Failed) else ""
    return OpenedIssue(repo, error=why, retry=retry)
