"""The relay's sinks: a GitHub issue comment, the-loop's control plane, the local ledger.

Exactly once, against sinks that are not idempotent themselves: a GitHub comment is
looked for before it is posted again after any attempt that may have landed; the ledger
is searched for the key. the-loop's ``sessions/reply`` ignores the ``Idempotency-Key`` we
send, but records each reply it types into a session as a ``session.reply_sent`` event
with its actor: after an attempt that may have landed (no answer after sending, a 5xx),
that event log is read from the first attempt on, and the reply is sent again only when
no record is left for it (:mod:`looproom.relay.reply_lookup`). A log that cannot be read
now is read again later; a reply is parked as :class:`Unsure` — for an admin to check —
only when the-loop has no such log. ``graph/skip`` is idempotent there (a declared skip is
kept as first declared) and is retried as usual.

A record of the conversation (:class:`looproom.relay.records.Talk`) is two steps in one
item: the mirror on the ticket, then the delivery to the session. A retry after the
mirror landed finds the mirror (it is looked for, like any comment) and goes on.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from looproom import times
from looproom.attach.slack_files import FileStore, section
from looproom.clients.github import GitHub
from looproom.clients.the_loop import RELAY_PATHS, LoopApi
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.http.client import HttpResult, outcome_of
from looproom.relay import forms, records
from looproom.relay import reply_lookup as lookup
from looproom.relay.jira_sink import JiraSink
from looproom.relay.reply_lookup import REPLY_SENT, ReplyBook, Sent, Unsure
from looproom.settings.keywords import Keywords

log = logging.getLogger(__name__)

#: How many pages of 100 comments the duplicate check reads before it gives up looking.
FIND_PAGES = 10


class GitHubSink:
    """Issue comments as the bot's login (:class:`~looproom.clients.github.GitHub`)."""

    def __init__(self, api: str, token: str, *, timeout: float = 15.0) -> None:
        self._github = GitHub(api, token, timeout=timeout)

    def send(self, target: Mapping[str, Any], *, unsure: bool, since: str) -> Outcome:
        """Post the comment — after looking for it first when an earlier try may have landed."""
        repo, number = str(target["repo"]), int(target["number"])
        if unsure:
            found = self._find(repo, number, str(target["body"]), since)
            if found is not None:
                return found
        posted = self._github.post_comment(repo, number, str(target["body"]))
        if posted.value is None and 200 <= posted.status < 300:
            return Delivered()  # made, though its answer names no link
        failed = posted.outcome()
        if failed is not None:
            return failed
        return Delivered(str((posted.value or {}).get("html_url", "")))

    def _find(self, repo: str, number: int, body: str, since: str) -> Outcome | None:
        """``Delivered`` when the comment is already there; a retry when we cannot tell.

        Reads GitHub's pages (a busy issue has more than 100 comments), up to
        :data:`FIND_PAGES`.
        """
        read, after = None, _earlier(since)
        for read in self._github.comment_pages(repo, number, pages=FIND_PAGES, since=after):
            failed = read.outcome()
            if failed is not None:
                return failed if isinstance(failed, RetryLater) else RetryLater(failed.reason)
            found = _matching(read.value, body)
            if found is not None:
                return found
        if read is not None and read.more:
            log.warning(
                "relay: more than %d pages of comments on %s#%s; posting", FIND_PAGES, repo, number
            )
        return None

    def comments(self, repo: str, number: int) -> tuple[str, list[dict[str, Any]] | str]:
        """The token's login, and every comment on the issue (oldest first, up to
        :data:`FIND_PAGES` pages) — or a sentence saying why they cannot be read."""
        login, found, _more = self.comments_read(repo, number)
        return login, found

    def comments_read(self, repo: str, number: int) -> tuple[str, list[dict[str, Any]] | str, bool]:
        """:meth:`comments`, and whether pages past :data:`FIND_PAGES` were left unread."""
        login = self._github.user().value or ""
        found: list[dict[str, Any]] = []
        read = None
        for read in self._github.comment_pages(repo, number, pages=FIND_PAGES):
            failed = read.outcome()
            if failed is not None:
                return login, str(getattr(failed, "reason", "")), False
            found += [c for c in read.value or [] if isinstance(c, dict)]
        return login, found, read is not None and read.more


def _matching(comments: Any, body: str) -> Delivered | None:
    for comment in comments if isinstance(comments, list) else []:
        if isinstance(comment, dict) and str(comment.get("body", "")).strip() == body.strip():
            return Delivered(str(comment.get("html_url", "")))
    return None


def _earlier(at: str) -> str:
    """Ten minutes before ``at`` (the decision's time, before any attempt): room for our
    clock and GitHub's to disagree; the body match is exact, so a wider window costs
    pages, never a false match."""
    moment = times.from_iso(at)
    return at if moment is None else times.iso(moment - 10 * 60)


class LoopSink:
    """the-loop's control plane: ``/api/v1/sessions/reply`` and ``/api/v1/graph/skip``."""

    def __init__(
        self,
        api: str,
        *,
        timeout: float = 15.0,
        files: FileStore | None = None,
        token: str = "",
        book: ReplyBook | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``files`` fetches what a reply had attached, for the session to read; ``token``
        goes with each call as a bearer token (a proxy in front of the-loop may ask one);
        ``book`` keeps which replies of ours landed, so a record is never counted twice."""
        self._loop, self._files = LoopApi(api, token, timeout=timeout), files
        self._book, self._clock = book if book is not None else ReplyBook(), clock

    def send(
        self, target: Mapping[str, Any], *, key: str, unsure: bool = False, first_try: float = 0.0
    ) -> Outcome:
        """Make the call; a reply that may have landed before is looked up first."""
        outcome = self._send(target, key, unsure, first_try)
        landed = lookup.landed_outcome(outcome)
        if target["path"] == forms.REPLY_PATH and landed is not None:
            request = target["json"]
            now = self._clock()
            entry = Sent(key, first_try or now, now, landed)
            self._book.note(str(request.get("ref", "")), str(request.get("actor", "")), entry)
        return outcome

    def _send(self, target: Mapping[str, Any], key: str, unsure: bool, first_try: float) -> Outcome:
        if target["path"] not in RELAY_PATHS:
            return Failed(f"the relay makes no call to {target['path']!r} of the-loop")
        is_reply = target["path"] == forms.REPLY_PATH
        if is_reply and unsure:
            found = self._reply_sent(target["json"], first_try, key)
            if found is not None:
                return found
        answer = self._loop.post(target["path"], self._request(target, key), key=key)
        if is_reply and _maybe_applied(answer):
            what = f"answered {answer.status}" if answer.status else f"no answer ({answer.error})"
            return RetryLater(f"the-loop may have delivered the reply ({what})", uncertain=True)
        failed = outcome_of(answer, "the-loop", time.time())
        if failed is not None:
            return failed
        if target["path"] == forms.SKIP_PATH:
            return _skip_outcome(answer.json())
        return _reply_outcome(answer.json())

    def _request(self, target: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        """The call's body; a reply with files gets the attachments section, fetched now
        (and kept, counted, for the-loop's event log)."""
        request, attached = target["json"], target.get("files")
        if not attached or self._files is None:
            return request
        ref, actor = str(request.get("ref", "")), str(request.get("actor", ""))
        fetched = self._files.fetch_all(attached, ref)
        saved = sum(1 for item in fetched if item.path)
        self._files.records.attachments(key, ref, actor, len(fetched), saved)
        told = section(fetched)
        return {**request, "text": f"{request.get('text', '')}\n\n{told}".strip()}

    def _reply_sent(self, request: Mapping[str, Any], first_try: float, key: str) -> Outcome | None:
        """``Delivered`` when the-loop's event log has a record left for this reply once
        ours by the same actor took theirs; ``None`` when it has none; :class:`LogUnread`
        (look again later) when the log cannot be read now; :class:`Unsure` when the-loop
        has no such log, or a record may be this reply's or another's."""
        work_item, actor = str(request.get("ref", "")), str(request.get("actor", ""))
        since, inside = lookup.window(first_try, self._book.others(work_item, actor, key))
        query: dict[str, Any] = {"type": REPLY_SENT, "workItem": work_item, "limit": 0}
        if first_try:
            query["since"] = loop_time(max(0.0, since))
        read = self._loop.events(query)
        if read.value is None:
            return lookup.unreadable(read.status, read.answer.error, key)
        verdict = lookup.counted(read.value, actor, inside)
        if verdict == "landed":
            return lookup.found()
        return lookup.ambiguous(key) if verdict == "unsure" else None


def loop_time(at: float) -> str:
    """A time as the-loop's event log writes it (milliseconds, ``Z``), so its ``since``
    filter — a comparison of the two strings — compares like with like."""
    whole = times.iso(at).removesuffix("Z")
    return f"{whole}.{int((at % 1) * 1000):03d}Z"


def _reply_outcome(data: Any) -> Outcome:
    """``"delivered": false`` is the-loop's busy session: nothing was typed, nothing
    commented, and it says the caller may retry — so we do, rather than lose the answer."""
    if isinstance(data, dict) and data.get("delivered") is False:
        return RetryLater("the-loop could not type the answer into its session yet (busy)")
    return Delivered()


def _maybe_applied(answer: HttpResult) -> bool:
    """the-loop may have delivered the reply: no answer after sending, or a 5xx (its
    handler can fail after typing into the pane, and a 502 is a member that timed out)."""
    return (answer.status == 0 and answer.sent) or answer.status >= 500


def _skip_outcome(data: Any) -> Outcome:
    """A skip lands when the-loop declared at least one node; what it rejected is said."""
    data = data if isinstance(data, dict) else {}
    declared = [str(n) for n in data.get("declared") or []]
    rejected = [_rejected(entry) for entry in data.get("rejected") or []]
    if rejected and not declared:
        return Failed("the-loop rejected the skip of " + ", ".join(rejected))
    return Delivered("rejected: " + ", ".join(rejected) if rejected else "")


def _rejected(entry: Any) -> str:
    """One rejected node as the-loop reports it (``{"token", "why"}``), in words."""
    if isinstance(entry, dict):
        token, why = str(entry.get("token", "?")), str(entry.get("why", ""))
        return f"{token} ({why})" if why else token
    return str(entry)


class LedgerSink:
    """The embedded default: one JSON line per decision in a local file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def send(self, item: Mapping[str, Any]) -> Outcome:
        line = forms.ledger_line(item)
        with self._lock:
            if self._has(str(item["key"])):
                return Delivered("already in the ledger")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as ledger:
                ledger.write(line + "\n")
                ledger.flush()
                os.fsync(ledger.fileno())
        return Delivered(str(self.path.name))

    def _has(self, key: str) -> bool:
        if not self.path.exists():
            return False
        needle = json.dumps(key)
        with self.path.open(encoding="utf-8") as ledger:
            return any(needle in line and json.loads(line).get("key") == key for line in ledger)

    def lines(self) -> list[dict[str, Any]]:
        """Every recorded decision (for tests and the admin)."""
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text("utf-8").splitlines() if line]


class ControlPlane(Protocol):
    """What the relay asks of the-loop's control plane: :class:`LoopSink`, or one that
    picks the instance owning the work item (``looproom.instances.relay``)."""

    def send(
        self, target: Mapping[str, Any], *, key: str, unsure: bool = False, first_try: float = 0.0
    ) -> Outcome: ...


@dataclass
class Sinks:
    """The configured sinks; ``github`` and ``loop`` are None when not configured."""

    ledger: LedgerSink
    github: GitHubSink | None = None
    loop: ControlPlane | None = None
    #: the-loop's control keywords: the words a control command's comment opens with.
    keywords: Keywords = field(default_factory=Keywords)
    jira: JiraSink | None = None
    #: Where files attached to replies are fetched and, by link, served from.
    files: FileStore | None = None

    def available(self, repos: Mapping[str, str]) -> forms.Destinations:
        """The destinations these sinks reach (``repos``: the-loop's checkouts for skips)."""
        return forms.Destinations(
            github=self.github is not None,
            loop=self.loop is not None,
            repos=repos,
            keywords=self.keywords,
            jira=self.jira.site if self.jira is not None else None,
        )

    def send(
        self,
        item: Mapping[str, Any],
        unsure: bool,
        *,
        ambiguous: bool = False,
        first_try: float = 0.0,
    ) -> Outcome:
        """Hand one stored item to the sink its target names. ``unsure``: an earlier attempt
        was made; ``ambiguous``: one may have landed without an answer saying so."""
        target = item["target"]
        if target["sink"] == records.TALK:
            return self._talk(item, unsure, ambiguous, first_try)
        return self._one(item, target, unsure, ambiguous, first_try)

    def _one(
        self,
        item: Mapping[str, Any],
        target: Mapping[str, Any],
        unsure: bool,
        ambiguous: bool,
        first_try: float,
    ) -> Outcome:
        sink = target["sink"]
        if sink == forms.GITHUB and self.github is not None:
            return self.github.send(target, unsure=unsure, since=item["decision"]["at"])
        if sink == forms.LOOP and self.loop is not None:
            key = str(item["key"])
            return self.loop.send(target, key=key, unsure=ambiguous, first_try=first_try)
        if sink == forms.JIRA and self.jira is not None:
            return self.jira.send(target, key=str(item["key"]), unsure=unsure)
        if sink == forms.LEDGER:
            return self.ledger.send({**item, "target": target})
        # Stored while that sink was configured; it is not now. Kept, not lost.
        return RetryLater(f"the {sink} sink is not configured now")

    def _talk(
        self, item: Mapping[str, Any], unsure: bool, ambiguous: bool, first_try: float
    ) -> Outcome:
        """Mirror on the ticket, then deliver to the session; the ledger keeps each step
        under a key of its own."""
        target = item["target"]
        key = str(item["key"])
        mirror = {**item, "key": f"{key}:mirror"}
        mirrored = self._one(mirror, target["mirror"], unsure, False, first_try)
        if not isinstance(mirrored, Delivered):
            return mirrored
        deliver = {**item, "key": f"{key}:deliver"}
        delivered = self._one(deliver, target["deliver"], unsure, ambiguous, first_try)
        if isinstance(delivered, Delivered):
            return Delivered(mirrored.detail or delivered.detail)
        if isinstance(delivered, Failed) and not isinstance(delivered, Unsure):
            return Undeliverable(delivered.reason, mirrored.detail)
        return delivered


@dataclass(frozen=True)
class Undeliverable(Failed):
    """Mirrored on the ticket, but the session cannot take it (none, or paused): the
    record stands, and the room is told the session did not get it."""

    record: str = ""
