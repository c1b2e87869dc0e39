"""A kickoff's durable steps: its repository asked, its issue found or created, its thread
line posted — each once.

A request to open a work item is stored in the kickoff queue (``kickoff``) before anything
is posted or created — the store is its claim, so Slack delivering the message twice stores
nothing more — and the queue's worker carries it out: a bot that dies after the claim
carries it out when it is back (the item comes back flagged, as every queue's does).
With several repositories and none named, the first step is the menu that asks which
(keyed ``menu:<request>``); the pick stores the opening itself (keyed by the request).
Before any attempt after the first the issue is looked for by its marker
(:mod:`looproom.kickoff.github`), so it is never opened twice, and each post — the menu,
the "🆕 Opened" line — is looked for by its mark in Slack (:mod:`looproom.slack.marks`,
as the room's events are), so it is never posted twice. A GitHub or Slack outage waits
with the queue's backoff, and only a refusal (a 4xx) is parked and said to the member.
Each question asked, work item opened and thread given is kept once for the-loop's event
log (``channel.kickoff_asked``, ``channel.created``, ``channel.thread_opened``).
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
from looproom.loop_log.channel import ChannelLog
from looproom.relay import texts
from looproom.room import buttons
from looproom.slack.text import escape, neutralise

log = logging.getLogger(__name__)

KICKOFF = "kickoff"
MENU = "menu:"
#: After this many failed attempts the member hears once that it is still being tried.
STILL_TRYING_AFTER = 3
#: How long before the request the issue is looked for: room for GitHub's clock and ours.
CLOCK_SKEW = 10 * 60.0
#: the-loop's word for a kickoff that named no repository of several (its record's kind).
NO_TARGET = "no-target"


class Poster(Protocol):
    """What the opener says in Slack, synchronously (it needs the ts Slack gives a post)."""

    def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]],
        thread_ts: str,
        *,
        key: str = "",
        work_item: str = "",
    ) -> str:
        """Post (marked ``key`` when given); its ts, ``""`` when Slack did not take it."""
        ...

    def posted(self, channel: str, thread_ts: str, key: str, since: float) -> str | None:
        """The ts of the post marked ``key`` in the thread (at the room's top since
        ``since`` for ``thread_ts`` ``""``); ``""``: none; ``None``: Slack cannot be read."""
        ...

    def update(
        self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]], *, key: str = ""
    ) -> None:
        """Edit the post at ``ts``, keeping its mark ``key``."""
        ...

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


@dataclass(frozen=True)
class NotSaid(RetryLater):
    """A post of the kickoff's (the menu, the thread line) not made, or not known to be:
    Slack's outage, waited out like any; the member is not told the issue is missing."""


class Opening:
    """The kickoff queue's delivery: ask which repository, or find or create the issue and
    give the work item its thread."""

    def __init__(
        self,
        queue: WorkQueue,
        maker: IssueMaker,
        poster: Poster,
        policy: Callable[[], AccessPolicy],
        bind: Callable[[str, str, tuple[str, ...]], None],
        *,
        ask: Callable[[Wanted], tuple[str, list[dict[str, Any]]]],
        clock: Callable[[], float] = time.time,
        records: ChannelLog | None = None,
    ) -> None:
        """``ask(request)`` keeps the request while its repository is picked and gives the
        menu that asks; ``records``: where what was asked and opened is kept."""
        self.records = records if records is not None else ChannelLog(None)
        self.queue, self._maker, self._poster = queue, maker, poster
        self._policy, self._bind, self._ask, self._clock = policy, bind, ask, clock
        #: Told ``(work item, member)`` once a member's request is opened: they own it
        #: (told again if its thread is tried again).
        self.owned: Callable[[str, str], None] = lambda _work_item, _member: None

    def put(self, asked: Wanted, repo: str) -> bool:
        """Store the request durably; False when it was stored before (opened, or opening)."""
        return self.queue.put(asked.key, Stored(asked, repo, self._clock()).to_json())

    def put_menu(self, asked: Wanted) -> bool:
        """Store the request to be asked its repository; False when it was stored before."""
        return self.queue.put(menu_key(asked.key), Stored(asked, "", self._clock()).to_json())

    def deliver(self, item: Item) -> Outcome:
        try:
            stored = Stored.from_json(item.payload)
        except (ValueError, KeyError, TypeError) as exc:
            return Failed(f"stored kickoff is not readable: {exc}")
        # Any attempt after the first may have opened the issue or posted in Slack.
        unsure = item.maybe_delivered or item.attempts > 1
        if not stored.repo:
            return self._menu(stored, unsure=unsure)
        opened = self._issue(stored, looked_for=unsure)
        if opened.error:
            return (
                RetryLater(opened.error, uncertain=True) if opened.retry else Failed(opened.error)
            )
        return self._thread(stored, opened, unsure=unsure)

    def _menu(self, stored: Stored, *, unsure: bool) -> Outcome:
        """Ask which repository, once: a menu an earlier attempt posted is left to answer
        (and its request, maybe picked already, is not kept again)."""
        asked, key = stored.asked, menu_key(stored.asked.key)
        found = self._earlier(stored, key) if unsure else ""
        if found is None:
            return _unreadable("menu")
        if found:
            self.asked(asked)  # an attempt that died after posting it did not say so
            return Delivered(f"the menu is at {found}")
        text, blocks = self._ask(asked)
        ts = self._poster.post(asked.channel, text, blocks, asked.thread, key=key)
        if not ts:
            return NotSaid("posting the menu", uncertain=True)
        self.asked(asked)
        return Delivered(f"the menu is at {ts}")

    def asked(self, asked: Wanted) -> None:
        """Keep the record of a request asked which repository."""
        where = asked.channel, asked.thread
        self.records.kickoff_asked(asked.key, asked.member, *where, NO_TARGET, len(asked.repos))

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

    def _thread(self, stored: Stored, opened: OpenedIssue, *, unsure: bool) -> Outcome:
        """The work item's thread and its "🆕 Opened" line, posted once."""
        asked, key = stored.asked, line_key(stored.asked.key)
        log.info("kickoff: %s opened as %s", asked.key, opened.ref)
        # Who owns it is said before anything is posted: an instance that would notice the
        # new issue finds it routed already (said again, harmlessly, on a retry).
        self.owned(opened.ref, asked.member)
        if asked.thread:
            # The message's thread is the work item's before its Start button is shown: a
            # press can come before Slack's answer to the post gives us the button's ts.
            self._bind(opened.ref, asked.channel, (asked.thread,))
        ts = self._earlier(stored, key) if unsure else ""
        if ts is None:
            return _unreadable(f"line of {opened.ref}")
        if not ts:
            text, blocks = opened_message(opened, title_of(asked.words), asked.member)
            ts = self._poster.post(
                asked.channel, text, blocks, asked.thread, key=key, work_item=opened.ref
            )
        if not ts:
            return NotSaid(f"{opened.ref} is opened; posting its line in Slack", uncertain=True)
        anchor = asked.thread or ts
        self._bind(opened.ref, asked.channel, tuple(dict.fromkeys((anchor, ts))))
        self.records.created(asked.key, opened.ref, asked.member, asked.channel, anchor)
        self.records.thread_opened(opened.ref, asked.channel, anchor, "kickoff")
        return Delivered(opened.ref)

    def _earlier(self, stored: Stored, key: str) -> str | None:
        """Where an earlier attempt posted the message marked ``key`` (``""``: nowhere)."""
        asked = stored.asked
        return self._poster.posted(asked.channel, asked.thread, key, stored.at - CLOCK_SKEW)

    def settled(self, item: Item, outcome: Outcome) -> None:
        """Told each outcome once the queue recorded it: a refusal or a long wait is said."""
        try:
            stored = Stored.from_json(item.payload)
        except (ValueError, KeyError, TypeError):
            return
        asked, repo = stored.asked, stored.repo
        if not repo or isinstance(outcome, NotSaid):
            return  # Slack's own outage: nothing to say that Slack would carry
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
            where = f"`{stored.repo}`" if stored.repo else "repository to be picked"
            what = f"{where} · {_inert(title_of(stored.asked.words))[:80]}"
        except (ValueError, KeyError, TypeError):
            what = "?"
        lines.append(texts.queue_line(item, what, now, inert=_inert))
    return lines


def is_key(key: str) -> bool:
    """Whether ``key`` names a kickoff request (a message's, or a slash command's), or
    the menu that asks one's repository."""
    return key.removeprefix(MENU).startswith(("message:", "slash:"))


def menu_key(key: str) -> str:
    """The queue's key, and the menu's mark, for asking request ``key``'s repository."""
    return MENU + key


def line_key(key: str) -> str:
    """The mark of request ``key``'s "🆕 Opened" line in Slack."""
    return f"kickoff:{key}"


def _unreadable(what: str) -> NotSaid:
    return NotSaid(f"looking in Slack for the {what}: Slack could not be read", uncertain=True)


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
