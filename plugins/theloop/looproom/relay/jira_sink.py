"""Jira work items: a relayed decision or record as a comment on the ticket, once.

the-loop's Jira ledger reads a work item's comments through Jira's REST API; the relay
writes them there the same way (``POST /rest/api/{3|2}/issue/{key}/comment``) in the form
:mod:`looproom.relay.jira_body` gives. Jira is not idempotent, so each comment carries the
relay's key as a comment property (``theloop.relay``, Jira's own place for an app's data
on a comment): after an attempt that may have landed, the ticket's comments are read
(every page, with their properties) and the comment is posted again only when none
carries the key. A rate limit (429 and its ``Retry-After``) and a 5xx are waited out; a
4xx is said with Jira's own words (``errorMessages``, ``errors``), never a header.
"""

from __future__ import annotations

import logging
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.http.client import USER_AGENT, HttpResult, http, outcome_of
from looproom.relay import jira_body
from looproom.settings.jira_config import JiraConfigError, JiraSite

log = logging.getLogger(__name__)

JIRA = "jira"
PROPERTY = "theloop.relay"
PAGE = 100
#: How many pages of comments the duplicate check and the records reader read at most.
MOST_PAGES = 50
_MAX_ERROR = 200


class JiraSink:
    """Comments on the tickets of one Jira site, as the configured account."""

    def __init__(
        self, site: JiraSite, *, timeout: float = 15.0, env: Mapping[str, str] | None = None
    ) -> None:
        self.site, self._timeout, self._env = site, timeout, env

    def send(self, target: Mapping[str, Any], *, key: str, unsure: bool) -> Outcome:
        """Post the comment — after looking for it first when an earlier try may have landed."""
        issue = str(target["key"])
        if unsure:
            found = self._find(issue, key)
            if found is not None:
                return found
        markdown = jira_body.jira_markdown(
            str(target["body"]), relayed=target.get("as") != "record"
        )
        request = {
            "body": jira_body.to_jira(markdown, self.site.rest),
            "properties": [{"key": PROPERTY, "value": {"key": key}}],
        }
        answer = self._call("POST", f"issue/{issue}/comment", request)
        if isinstance(answer, Outcome):
            return answer
        data = answer.json() if isinstance(answer.json(), dict) else {}
        return Delivered(self._url(issue, str(data.get("id", ""))))

    def comments(self, issue: str) -> list[dict[str, Any]] | str:
        """Every comment on ``issue``, oldest first, each with its properties, its author's
        id and its link; a sentence saying why not when Jira cannot be read."""
        return self.comments_read(issue)[0]

    def comments_read(self, issue: str) -> tuple[list[dict[str, Any]] | str, bool]:
        """:meth:`comments` (up to :data:`MOST_PAGES` pages), and whether more were left."""
        found: list[dict[str, Any]] = []
        start = 0
        for _ in range(MOST_PAGES):
            query = urllib.parse.urlencode(
                {"startAt": start, "maxResults": PAGE, "expand": "properties"}
            )
            answer = self._call("GET", f"issue/{issue}/comment?{query}", None)
            if isinstance(answer, Outcome):
                return getattr(answer, "reason", "") or "Jira could not be read", False
            page = answer.json() if isinstance(answer.json(), dict) else {}
            comments = [c for c in page.get("comments") or [] if isinstance(c, dict)]
            found += [{**c, "url": self._url(issue, str(c.get("id", "")))} for c in comments]
            start += len(comments)
            if not comments or start >= int(page.get("total") or 0):
                return found, False
        log.warning("jira: more than %d pages of comments on %s", MOST_PAGES, issue)
        return found, True

    def missing(self) -> str:
        """What is missing of the credential, naming the variables; ``""`` when it is set."""
        try:
            self.site.authorization(self._env)
        except JiraConfigError as exc:
            return str(exc)
        return ""

    def myself(self) -> str:
        """The account the relay writes as (``accountId`` on Cloud, ``key`` on Data
        Center); ``""`` when Jira cannot say."""
        answer = self._call("GET", "myself", None)
        data = answer.json() if isinstance(answer, HttpResult) else None
        if not isinstance(data, dict):
            return ""
        return str(data.get("accountId") or data.get("key") or "")

    def _find(self, issue: str, key: str) -> Outcome | None:
        """``Delivered`` when a comment carries ``key``; a retry when Jira cannot say."""
        comments = self.comments(issue)
        if isinstance(comments, str):
            return RetryLater(f"could not look for the comment on Jira ({comments})")
        for comment in comments:
            if relay_key(comment) == key:
                return Delivered(str(comment["url"]))
        return None

    def _call(self, method: str, path: str, data: Any) -> HttpResult | Outcome:
        try:
            authorization = self.site.authorization(self._env)
        except JiraConfigError as exc:  # set it, and the next attempt goes
            return RetryLater(str(exc))
        headers = {
            "Authorization": authorization,
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }
        url = f"{self.site.base}/rest/api/{self.site.rest}/{path}"
        answer = http(method, url, headers, data, self._timeout)
        failed = outcome_of(answer, "Jira", time.time())
        if isinstance(failed, Failed):
            return Failed(f"Jira refused it ({answer.status}{_said(answer)})")
        return failed if failed is not None else answer

    def _url(self, issue: str, comment: str) -> str:
        page = self.site.browse(issue)
        return f"{page}?focusedCommentId={comment}" if comment else page


def relay_key(comment: Mapping[str, Any]) -> str:
    """The relay key a comment carries in its ``theloop.relay`` property; ``""`` for none."""
    for prop in comment.get("properties") or []:
        if isinstance(prop, dict) and prop.get("key") == PROPERTY:
            value = prop.get("value")
            return str(value.get("key", "")) if isinstance(value, dict) else ""
    return ""


def _said(answer: HttpResult) -> str:
    """Jira's own words for an error (``errorMessages`` and ``errors``), short."""
    data = answer.json()
    if not isinstance(data, dict):
        return ""
    words = [str(m) for m in data.get("errorMessages") or []]
    errors = data.get("errors")
    if isinstance(errors, dict):
        words += [f"{field}: {why}" for field, why in errors.items()]
    text = " ".join(" ".join(words).split())[:_MAX_ERROR]
    return f": {text}" if text else ""
