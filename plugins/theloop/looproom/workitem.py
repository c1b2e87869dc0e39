"""A work item reference (``github:acme/api#7``), read once for every part of the bot.

Routing, the parent message's title and link, the relay's GitHub target, the skip's
checkout lookup, typed commands and the admin's ``bind`` all ask the same questions of a
ref — is it GitHub, which repository, which issue — so they get one answer here.

The GitHub form follows the-loop's own grammar, because the-loop writes the refs we read
and reads the ones we relay: ``github:[host/]owner/repo#N``, the host written only when it
is not github.com, and recognisable as a host (dotted, or with a port) so that
``github:octo/repo/sub#7`` is not quietly read as a repository on a host called "octo".
The room also accepts the repository alone (``github:owner/repo``), which the-loop does
not send but an admin may type. Any other tracker's ref (``jira:KEY-1``) is kept as
written: the bot routes and shows it, and relays it to the ledger or the-loop only.

:func:`canonical` is the one spelling of a work item for comparing and keying: GitHub
reads owner, repository and host in any case, and a Jira site's host in any case, so
``github:ACME/api#7``, ``github:acme/api#7`` and its page's address are one work item.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

GITHUB = "github"
DEFAULT_HOST = "github.com"

#: the-loop's host shape: dotted with an optional port, or a bare name with a port.
_HOST = r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::[0-9]+)?|[A-Za-z0-9-]+:[0-9]+"
#: GitHub's owner (a login) and repository name shapes.
_OWNER = r"[A-Za-z0-9][A-Za-z0-9-]*"
_REPO = r"[A-Za-z0-9._-]+"
_GITHUB_REF = re.compile(
    rf"^github:(?:(?P<host>{_HOST})/)?(?P<owner>{_OWNER})/(?P<repo>{_REPO})"
    r"(?:#(?P<number>[0-9]{1,9}))?$"
)
_REPOSITORY = re.compile(rf"^{_OWNER}/{_REPO}$")
#: Any tracker's ref: a lowercase tracker name, a colon, then no space or Slack markup.
_OTHER_REF = re.compile(r"^(?P<tracker>[a-z][a-z0-9-]*):(?P<path>[^\s<>|]{1,290})$")
#: What a member may type after a verb to name a work item: a full GitHub ref,
#: ``owner/repo#7``, or ``#7`` (in a room with one repository). Only the shape is checked
#: here, so a malformed ref is refused by :func:`resolve_typed` rather than read as words.
_TYPED = re.compile(r"^(?:github:[^\s#]+|[^\s/#:]+/[^\s#]+)?#[0-9]{1,9}$")
#: A GitHub issue or pull request as people paste it — its page's address, bare or as
#: Slack writes a link (``<https://…>``, ``<https://…|label>``), a tab of it included.
_URL = re.compile(
    rf"^<?https?://(?P<host>{_HOST}|[A-Za-z0-9-]+)/(?P<owner>{_OWNER})/(?P<repo>{_REPO})"
    r"/(?:issues|pull)/(?P<number>[0-9]{1,9})(?:[/?#][^\s|>]*)?(?:\|[^>]*)?>?$"
)


@dataclass(frozen=True)
class WorkItemRef:
    """One work item ref, parsed: its tracker and, for GitHub, host, owner, repo, number.

    For another tracker only ``tracker`` and ``path`` (what follows the colon) are set.
    """

    tracker: str
    path: str = ""
    host: str = ""
    owner: str = ""
    repo: str = ""
    number: int | None = None

    @property
    def is_github(self) -> bool:
        return self.tracker == GITHUB and bool(self.owner and self.repo)

    @property
    def repository(self) -> str:
        """``owner/repo`` for a GitHub ref, ``""`` for any other."""
        return f"{self.owner}/{self.repo}" if self.is_github else ""

    @property
    def label(self) -> str:
        """How the room names it: ``owner/repo#7`` for GitHub, the ref itself otherwise."""
        if not self.is_github:
            return str(self)
        return self.repository + (f"#{self.number}" if self.number is not None else "")

    @property
    def issue_url(self) -> str:
        """The issue's page (GitHub redirects a pull request's number), ``""`` without one."""
        if not self.is_github or self.number is None:
            return ""
        return f"https://{self.host}/{self.repository}/issues/{self.number}"

    def __str__(self) -> str:
        """The ref as the-loop writes it (the host only when it is not github.com)."""
        if not self.is_github:
            return f"{self.tracker}:{self.path}"
        host = "" if self.host == DEFAULT_HOST else f"{self.host}/"
        number = "" if self.number is None else f"#{self.number}"
        return f"{GITHUB}:{host}{self.repository}{number}"


def parse(text: str) -> WorkItemRef | None:
    """``text`` as a work item ref; ``None`` when it is not one.

    A ``github:`` ref that does not follow GitHub's form is not a ref at all: read as
    another tracker's, it would be routed and relayed as something GitHub never heard of.
    """
    text = (text or "").strip()
    github = _GITHUB_REF.match(text)
    if github:
        if github["repo"] in (".", ".."):
            return None  # a path segment, not a repository: it would move a URL
        number = github["number"]
        return WorkItemRef(
            tracker=GITHUB,
            path=text.removeprefix("github:").split("#", 1)[0],
            host=github["host"] or DEFAULT_HOST,
            owner=github["owner"],
            repo=github["repo"],
            number=None if number is None else int(number),
        )
    other = _OTHER_REF.match(text)
    if other is None or other["tracker"] == GITHUB:
        return None
    return WorkItemRef(tracker=other["tracker"], path=other["path"])


#: A Jira ticket as the-loop writes it (``jira:<site>/<KEY>-<n>``) or as its page is linked.
_JIRA_REF = re.compile(rf"^jira:(?P<site>{_HOST})/(?P<key>[A-Za-z][A-Za-z0-9_]*-[0-9]{{1,10}})$")
_JIRA_URL = re.compile(
    rf"^<?https?://(?P<site>{_HOST})/browse/(?P<key>[A-Za-z][A-Za-z0-9_]*-[0-9]{{1,10}})"
    r"(?:[/?#][^\s|>]*)?(?:\|[^>]*)?>?$"
)


@functools.lru_cache(maxsize=8192)  # asked for each binding a book reads: a pure function
def canonical(text: str) -> str:
    """The one spelling of the work item ``text`` names, to compare and key it by: a GitHub
    ref, short form or page address as ``github:[host/]owner/repo#N`` in lower case (the
    host only when it is not github.com); a Jira ref or page as ``jira:<site>/<KEY>-<n>``,
    the site in lower case and the key in upper; any other text as written, trimmed."""
    text = (text or "").strip()
    jira = _JIRA_REF.match(text) or _JIRA_URL.match(text)
    if jira:
        return f"jira:{jira['site'].lower()}/{jira['key'].upper()}"
    ref = from_url(text) if _URL.match(text) else parse(text)
    if ref is None or not ref.is_github:
        return text
    host = ref.host.lower()
    where = "" if host == DEFAULT_HOST else f"{host}/"
    number = "" if ref.number is None else f"#{ref.number}"
    return f"{GITHUB}:{where}{ref.repository.lower()}{number}"


def same(one: str, other: str) -> bool:
    """Whether two texts name the same work item."""
    return canonical(one) == canonical(other)


def repository_of(text: str) -> str:
    """``owner/repo`` of a GitHub ref, ``""`` for any other ref or for no ref."""
    ref = parse(text)
    return ref.repository if ref is not None else ""


def is_repository(text: str) -> bool:
    """Whether ``text`` is one GitHub repository, ``owner/repo`` (not a glob, not a ref)."""
    return bool(_REPOSITORY.match(text)) and text.rsplit("/", 1)[1] not in (".", "..")


def is_typed(word: str) -> bool:
    """Whether a word typed after a verb is meant as a work item (``#7``, ``o/r#7``, its
    GitHub address…)."""
    return bool(_TYPED.match(word) or _URL.match(word))


def from_url(word: str) -> WorkItemRef | None:
    """The issue or pull request a GitHub address names, as the-loop writes its ref (the
    host only when it is not github.com); ``None`` when it names none."""
    found = _URL.match(word)
    if found is None:
        return None
    host = found["host"].lower()
    where = "" if host == DEFAULT_HOST else f"{host}/"
    return parse(f"{GITHUB}:{where}{found['owner']}/{found['repo']}#{found['number']}")


def resolve_typed(word: str, repository: str = "") -> WorkItemRef | None:
    """The work item a typed word names: ``#7`` in the room's one ``repository``,
    ``owner/repo#7`` on github.com, a full ref, or its GitHub address; ``None`` when it
    names none."""
    if _URL.match(word):
        return from_url(word)
    if not is_typed(word):
        return None
    if word.startswith("#"):
        return parse(f"{GITHUB}:{repository}{word}") if repository else None
    return parse(word if word.startswith(f"{GITHUB}:") else f"{GITHUB}:{word}")
