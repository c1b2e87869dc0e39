"""A kickoff's durable step: its issue found or created, once, then the work item's thread.

A request to open a work item is stored in the kickoff queue (``kickoff``) before anything
is created — the store is its claim, so Slack delivering the message twice stores nothing
more — and the queue's worker carries it out: a bot that dies between the claim and the
issue opens it when it is back (the item comes back flagged, as every queue's does).
Before any attempt after the first the issue is looked for by its marker
(:mod:`looproom.kickoff.github`), so it is never opened twice; a GitHub outage waits with
the queue's backoff, and only a refusal (a 4xx) is parked and said to the member.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from looproom import times
from looproom.decide.authorization import AccessPolicy
from looproom.durable.contract import Item, WorkQueue
from looproom.durable.outcome import Delivered, Failed, Outcome, RetryLater
from looproom.kickoff.body import issue_body, marked, marker, title_of
from looproom.kickoff.github import IssueMaker, OpenedIssue
from looproom.room import buttons
from looproom.slack.text import escape, neutralise

log = logging.getLogger(__name__)

KICKOFF = "kickoff"
#: After this many failed attempts the member hears once that it is still being tried.
STILL_TRYING_AFTER = 3
#: How long before the request the issue is looked for: room for GitHub's clock and ours.
CLOCK_SKEW = 10 * 60.0


class Poster(Protocol):
    """What the opener says in Slack, synchronously (it needs the ts Slack gives a post)."""

    def post(
        self, channel: str, text: str, blocks: list[dict[str, Any]], thread_ts: str
    ) -> str: ...

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None: ...

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None: ...


@dataclass(frozen=True)
class Wanted:
    """One request to open a work item, as stored while its repository is picked."""

    key: str
    member: str
    channel: str
    thread: str  # the message's ts when it came as a message ("" for a slash command)
    words: str
    repos: tuple[str, ...]
    labels: tuple[str, ...] = ()
    expires: float = 0.0

    @classmethod
    def read(cls, raw: dict[str, Any]) -> Wanted:
        return cls(**{**raw, "repos": tuple(raw["repos"]), "labels": tuple(raw["labels"])})


@dataclass(frozen=True)
class Stored:
    """A queued request: what was asked, the repository, and when (the body's time)."""

    asked: Wanted
    repo: str
    at: float

    def to_json(self) -> str:
        return json.dumps({"asked": asdict(self.asked), "repo": self.repo, "at": self.at})

    @classmethod
    def from_json(cls, payload: str) -> Stored:
        raw = json.loads(payload)
        return cls(Wanted.read(raw["asked"]), str(raw["repo"]), float(raw["at"]))


class Opening:
    """The kickoff queue's delivery: find or create, then give the work item its thread."""

    def __init__(
        self,
        queue: WorkQueue,
        maker: IssueMaker,
        poster: Poster,
        policy: Callable[[], AccessPolicy],
        bind: Callable[[str, str, tuple[str, ...]], None],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.queue, self._maker, self._poster = queue, maker, poster
        self._policy, self._bind, self._clock = policy, bind, clock

    def put(self, asked: Wanted, repo: str) -> bool:
        """Store the request durably; False when it was stored before (opened, or opening)."""
        return self.queue.put(asked.key, Stored(asked, repo, self._clock()).to_json())

    def deliver(self, item: Item) -> Outcome:
        try:
            stored = Stored.from_json(item.payload)
        except (ValueError, KeyError, TypeError) as exc:
            return Failed(f"stored kickoff is not readable: {exc}")
        opened = self._issue(stored, looked_for=item.maybe_delivered or item.attempts > 1)
        if opened.error:
            return (
                RetryLater(opened.error, uncertain=True) if opened.retry else Failed(opened.error)
            )
        self._thread(stored.asked, opened)
        return Delivered(opened.ref)

    def _issue(self, stored: Stored, *, looked_for: bool) -> OpenedIssue:
        """The request's issue: found when an earlier attempt may have opened it, else new."""
        asked = stored.asked
        if looked_for:
            since = times.iso(stored.at - CLOCK_SKEW)
            found = self._maker.find(stored.repo, marker(asked.key), since)
            if found is not None:
                return found
        login = self._policy().people.get(asked.member, "")
        body = issue_body(asked.words, asked.member, login, times.iso(stored.at))
        title = title_of(asked.words)
        return self._maker.open(stored.repo, title, marked(body, asked.key), asked.labels)

    def _thread(self, asked: Wanted, opened: OpenedIssue) -> None:
        log.info("kickoff: %s opened as %s", asked.key, opened.ref)
        text, blocks = opened_message(opened, title_of(asked.words), asked.member)
        if asked.thread:
            # The message's thread is the work item's before its Start button is shown: a
            # press can come before Slack's answer to the post gives us the button's ts.
            self._bind(opened.ref, asked.channel, (asked.thread,))
        ts = self._poster.post(asked.channel, text, blocks, asked.thread)
        anchor = asked.thread or ts
        self._bind(opened.ref, asked.channel, tuple(dict.fromkeys(t for t in (anchor, ts) if t)))

    def settled(self, item: Item, outcome: Outcome) -> None:
        """Told each outcome once the queue recorded it: a refusal or a long wait is said."""
        try:
            stored = Stored.from_json(item.payload)
        except (ValueError, KeyError, TypeError):
            return
        asked, repo = stored.asked, stored.repo
        if isinstance(outcome, Failed):
            log.warning("kickoff: %s not opened in %s: %s", asked.key, repo, outcome.reason)
            text = (
                f"⚠️ The work item could not be opened in `{repo}`: {_inert(outcome.reason)}. "
                "Nothing was opened: ask again once that is fixed."
            )
            self._poster.tell(asked.channel, asked.member, text, asked.thread)
        elif isinstance(outcome, RetryLater) and item.attempts == STILL_TRYING_AFTER:
            text = (
                f"⏳ The work item is not opened in `{repo}` yet ({_inert(outcome.reason)}); "
                "it is kept and tried again — it will be opened once, when GitHub answers."
            )
            self._poster.tell(asked.channel, asked.member, text, asked.thread)


def queue_lines(items: list[Item], now: float) -> list[str]:
    """``!theloop queue``'s lines for the work items not opened yet."""
    lines = []
    for item in items:
        try:
            stored = Stored.from_json(item.payload)
            what = f"`{stored.repo}` · {_inert(title_of(stored.asked.words))[:80]}"
        except (ValueError, KeyError, TypeError):
            what = "?"
        state = "PARKED" if item.state == "parked" else item.state
        if item.state == "pending" and item.due > now:
            state += f", next try in {int(item.due - now)} s"
        error = f" — {_inert(item.last_error)}" if item.last_error else ""
        lines.append(f"- `{item.key}` {what}: {state}, {item.attempts} attempt(s){error}")
    return lines


def is_key(key: str) -> bool:
    """Whether ``key`` names a kickoff request (a message's, or a slash command's)."""
    return key.startswith(("message:", "slash:"))


def opened_message(
    opened: OpenedIssue, title: str, member: str
) -> tuple[str, list[dict[str, Any]]]:
    """The work item thread's first reply: what was opened, by whom, and Start."""
    link = f"<{opened.url}|{opened.ref}>" if opened.url else f"`{opened.ref}`"
    text = (
        f"🆕 Opened {link} — {_inert(title)}, asked for by <@{member}>. Press *Start* when "
        "the-loop should begin (or say `start` in this thread)."
    )
    start = ButtonElement(
        action_id=buttons.START,
        text=PlainTextObject(text=buttons.NAMES[buttons.START]),
        value=opened.ref,
        style="primary",
    )
    return text, [
        SectionBlock(text=MarkdownTextObject(text=text)).to_dict(),
        ActionsBlock(elements=[start]).to_dict(),
    ]


def _inert(text: str) -> str:
    return escape(neutralise(text))
