"""Opening one GitHub issue: ``POST /repos/{owner}/{repo}/issues`` with the bot's token.

GitHub does not deduplicate issue creation, so a create is tried once: the message's
key is claimed before it (``looproom.kickoff.opener``), and a failure is said, never
retried on its own — a timeout may have opened the issue already.
"""

from __future__ import annotations

from dataclasses import dataclass

from looproom.http.client import USER_AGENT, http


@dataclass(frozen=True)
class OpenedIssue:
    """The issue opened (``number`` > 0), or why not."""

    repo: str
    number: int = 0
    url: str = ""
    error: str = ""

    @property
    def ref(self) -> str:
        return f"github:{self.repo}#{self.number}" if self.number else ""


class IssueMaker:
    """Issues as the bot's login; the API base is configurable for GitHub Enterprise."""

    def __init__(self, api: str, token: str, *, timeout: float = 15.0) -> None:
        self._api, self._token, self._timeout = api.rstrip("/"), token, timeout

    def open(self, repo: str, title: str, body: str, labels: tuple[str, ...]) -> OpenedIssue:
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/vnd.github+json",
            "User-Agent": USER_AGENT,
        }
        data = {"title": title, "body": body, "labels": list(labels)}
        answer = http("POST", f"{self._api}/repos/{repo}/issues", headers, data, self._timeout)
        if answer.status != 201:
            why = answer.error or f"GitHub answered {answer.status}"
            return OpenedIssue(repo, error=why)
        found = answer.json()
        number = found.get("number") if isinstance(found, dict) else None
        if not isinstance(number, int) or number <= 0:
            return OpenedIssue(repo, error="GitHub's answer named no issue number")
        return OpenedIssue(repo, number, str(found.get("html_url") or ""))
