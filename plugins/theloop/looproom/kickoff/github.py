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

from dataclasses import dataclass
from typing import Any

from looproom.clients.answers import Read
from looproom.clients.github import GitHub
from looproom.durable.outcome import Failed, RetryLater

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
    """Issues as the bot's login (:class:`~looproom.clients.github.GitHub`)."""

    def __init__(self, api: str, token: str, *, timeout: float = 15.0) -> None:
        self._github = GitHub(api, token, timeout=timeout)
        self._login = ""

    def open(self, repo: str, title: str, body: str, labels: tuple[str, ...]) -> OpenedIssue:
        read = self._github.open_issue(repo, title, body, labels)
        if read.value is None:
            return _not_opened(repo, read)
        return _issue(repo, read.value) or OpenedIssue(
            repo, error="GitHub's answer named no issue number"
        )

    def find(self, repo: str, marker: str, since: str) -> OpenedIssue | None:
        """The issue the bot opened in ``repo`` since ``since`` whose body carries
        ``marker``; None when there is none; an :class:`OpenedIssue` with ``error`` (and
        ``retry``) when GitHub cannot be asked now."""
        login = self._own_login()
        if isinstance(login, OpenedIssue):
            return OpenedIssue(repo, error=login.error, retry=login.retry)
        query = {"state": "all", "creator": login, "since": since}
        query |= {"sort": "created", "direction": "desc"}
        for read in self._github.issue_pages(repo, query, pages=FIND_PAGES):
            if read.value is None:
                return _not_opened(repo, read)
            for issue in read.value:
                if isinstance(issue, dict) and marker in str(issue.get("body") or ""):
                    return _issue(repo, issue)
        return None

    def _own_login(self) -> str | OpenedIssue:
        """The token's login (asked once), or why it cannot be known now."""
        if not self._login:
            read = self._github.user()
            if read.value is None:
                return _not_opened("", read)
            self._login = read.value
        return self._login


def _issue(repo: str, found: Any) -> OpenedIssue | None:
    number = found.get("number") if isinstance(found, dict) else None
    if not isinstance(number, int) or number <= 0:
        return None
    return OpenedIssue(repo, number, str(found.get("html_url") or ""))


def _not_opened(repo: str, read: Read[Any]) -> OpenedIssue:
    """Why GitHub did not do it, and whether it may later (an outage, a rate limit)."""
    outcome = read.outcome()
    retry = isinstance(outcome, RetryLater)
    why = outcome.reason if isinstance(outcome, RetryLater | Failed) else ""
    return OpenedIssue(repo, error=why, retry=retry)
