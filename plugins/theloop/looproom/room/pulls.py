"""The pull-request gate's card: the PR's number, title and size, read from GitHub.

"👀 PR #42 is ready: *Add retry to the uploader* (+120 −30 in 4 files)" tells a reviewer on
a phone what they are about to open; "PR #42 is ready" alone does not. GitHub's pulls API
answers with the title and the diffstat, read with the bot's token when one is configured.
Without a token, or when GitHub does not answer in time, the card is the number and the
link alone: a gate is never held back for a nicety.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from looproom import workitem
from looproom.clients.github import GitHub
from looproom.events import Event

log = logging.getLogger(__name__)

TIMEOUT = 5.0
TITLE_LIMIT = 120
#: ``https://github.com/owner/repo/pull/42`` — where the-loop links a PR gate.
_PULL_URL = re.compile(r"^https://[^/\s]+/([^/\s]+/[^/\s]+)/pull/(\d+)(?:[/?#].*)?$")


@dataclass(frozen=True)
class PullRequest:
    """What the card shows: always the number; the rest when GitHub said."""

    number: int
    title: str = ""
    additions: int | None = None
    deletions: int | None = None
    files: int | None = None


def pull_of(event: Event) -> tuple[str, int] | None:
    """The repository and number a PR gate is about: from its link, else its work item's
    repository and ``detail.pullRequest``."""
    match = _PULL_URL.match(event.url or "")
    if match:
        return match[1], int(match[2])
    number = str(event.detail.get("pullRequest") or "").lstrip("#")
    ref = workitem.parse(event.work_item)
    if number.isdigit() and ref is not None and ref.repository:
        return ref.repository, int(number)
    return None


class PullReader:
    """Reads a PR's title and diffstat from GitHub's REST API with the bot's token."""

    def __init__(self, api: str, token: str) -> None:
        self._github = GitHub(api, token, timeout=TIMEOUT)

    def read(self, event: Event) -> PullRequest | None:
        """The card for ``event``'s PR; the number alone when GitHub does not say more."""
        found = pull_of(event)
        if found is None:
            return None
        repository, number = found
        if not self._github.has_token:
            return PullRequest(number)
        read = self._github.pull(repository, number)
        body = read.value
        if body is None:
            log.info(
                "GitHub did not describe PR #%s (%s): the card shows the link", number, read.status
            )
            return PullRequest(number)
        return PullRequest(
            number,
            title=str(body.get("title") or "")[:TITLE_LIMIT],
            additions=_count(body.get("additions")),
            deletions=_count(body.get("deletions")),
            files=_count(body.get("changed_files")),
        )


def line(event: Event, pull: PullRequest | None) -> str:
    """The gate's first line: "👀 PR #42 is ready: Add retry (+120 −30 in 4 files)"."""
    if pull is None:
        found = pull_of(event)
        pull = PullRequest(found[1]) if found else None
    if pull is None:
        return "👀 The pull request is ready for your review"
    said = f"👀 PR #{pull.number} is ready"
    if pull.title:
        said += f": {pull.title}"
    else:
        said += " for your review"
    if None not in (pull.additions, pull.deletions, pull.files):
        files = "file" if pull.files == 1 else "files"
        said += f" (+{pull.additions} −{pull.deletions} in {pull.files} {files})"
    return said


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
