"""Opening a new work item from Slack, once: claim, (ask which repository,) create, thread.

A top-level message addressed to the bot in a kickoff room, or ``/the-loop new <title>``,
is asked ``may(member, work-item.create)`` like every act. Then its key — the message's
channel and ts, or the command's trigger — is **stored in the kickoff queue before
anything is posted or created** (:mod:`looproom.kickoff.opening`), so a message Slack
delivers twice, or a second pick, opens nothing more, and a bot that dies on the way
carries it out when it is back. With several allowed repositories a select menu asks
which: for a message, the menu is the stored request's first step (posted once, even
across a crash); for a slash command it is the command's answer, the key claimed in the
plugin's storage. The choice waits :data:`PICK_TTL` seconds and is the asker's alone. The
issue is opened in the-loop's ``issue_body`` form
(``looproom.kickoff.body``), then the work item gets its thread — the message's own
thread, or a new message for a slash command — whose first reply carries a **Start**
button that relays ``start`` like typing it.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import asdict
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    MarkdownTextObject,
    Option,
    PlainTextObject,
    SectionBlock,
    StaticSelectElement,
)

from looproom.decide import grammar, kinds
from looproom.decide.authorization import AccessPolicy, may, refusal_text
from looproom.durable.bounded import claimed_once
from looproom.durable.contract import WorkQueue
from looproom.durable.state import lock_for
from looproom.durable.worker import Worker
from looproom.from_slack import slash
from looproom.kickoff import prefix
from looproom.kickoff.body import title_of
from looproom.kickoff.github import IssueMaker
from looproom.kickoff.opening import KICKOFF, Opening, Poster, Wanted, menu_key, opened_message
from looproom.loop_log.channel import ChannelLog
from looproom.room import buttons
from looproom.settings import KickoffSettings
from looproom.settings.grants import CREATE
from looproom.strict_json import obj

log = logging.getLogger(__name__)

CLAIMS, PENDING = "kickoff:claims", "kickoff:pending"
#: How many claimed keys are kept: far more than Slack redelivers within its retry window.
CLAIM_CAP = 5000
#: How long a repository choice waits for its pick.
PICK_TTL = 600.0
#: Slack's limit on a static select's options.
MAX_OPTIONS = 100
_MENTION = re.compile(r"^\s*<@([UW][A-Z0-9]+)(?:\|[^>]*)?>[\s:,]*")


def addressed_words(text: str, own_id: str) -> str | None:
    """The words after a leading mention of the bot — ``None`` when not addressed to it."""
    found = _MENTION.match(text or "")
    if found is None or not own_id or found[1] != own_id:
        return None
    return (text or "")[found.end() :].strip()


class Opener:
    """One per activation; every method is safe from any thread."""

    def __init__(
        self,
        store: MutableMapping[str, Any],
        kickoff_for: Callable[[str], KickoffSettings | None],
        maker: IssueMaker,
        poster: Poster,
        policy: Callable[[], AccessPolicy],
        bind: Callable[[str, str, tuple[str, ...]], None],
        *,
        queue: WorkQueue,
        clock: Callable[[], float] = time.time,
        named: Callable[[str], bool] = lambda _repo: True,
        records: ChannelLog | None = None,
    ) -> None:
        """``kickoff_for(channel)`` is the room's kickoff (``""``: the default room's);
        ``bind(work_item, channel, ts…)`` makes those messages the work item's thread;
        ``queue`` keeps each request until its issue is opened; ``named(repo)`` is the one
        bound every path asks (``looproom.decide.bounds.Bound.repository_named``): a
        kickoff's repositories are named by the settings, so it admits them all, and a
        repository it did not admit is neither offered nor taken. ``records``: where
        what was asked and opened is kept for the-loop's event log."""
        self._store, self._kickoff_for, self._named = store, kickoff_for, named
        self._poster, self._policy, self._clock = poster, policy, clock
        self._lock = lock_for(store)
        self.opening = Opening(
            queue, maker, poster, policy, bind, ask=self._ask, clock=clock, records=records
        )
        self._worker = Worker(
            queue, self.opening.deliver, settled=self.opening.settled, clock=clock, name=KICKOFF
        )

    def start(self) -> None:
        self._worker.start()

    def stop(self, timeout: float = 10.0) -> bool:
        return self._worker.stop(timeout)

    def step(self) -> bool:
        """Carry out one due request now (tests, and a synchronous drain)."""
        return self._worker.step()

    # -- the ways in -----------------------------------------------------------------

    def message(
        self, member: str, text: str, channel: str, ts: str, thread_ts: str, *, files: str = ""
    ) -> bool:
        """A message: True when it was a kickoff (handled here, whatever came of it).
        ``files``: the lines naming what was attached, for the issue's body."""
        kickoff = self._kickoff_for(channel) if channel and not thread_ts else None
        policy = self._policy()
        words = addressed_words(text, policy.own_id) if kickoff is not None else None
        if kickoff is None or words is None or not ts:
            return False
        if not isinstance(kinds.read(words), grammar.Text):
            return False  # `@bot start #7`: a verb, the desk's
        if member == policy.own_id:
            return True
        repos, labels = self._of(kickoff)
        named, words, wrong = prefix.split(words, repos)
        refused = self._refusal(member, words, policy) or wrong or _none_named(repos)
        if refused:
            self._poster.tell(channel, member, refused, ts)
            return True
        words = "\n\n".join(part for part in (words.rstrip(), files.strip()) if part)
        asked = Wanted(f"message:{channel}:{ts}", member, channel, ts, words, repos, labels)
        if named or len(asked.repos) == 1:
            taken = self.opening.put(asked, named or asked.repos[0])
        else:
            taken = self.opening.put_menu(asked)
        if not taken:
            log.info("kickoff: %s was taken already (delivered again)", asked.key)
        return True

    def from_slash(self, command: slash.Slash) -> dict[str, Any]:
        """``/the-loop new <title>``: the ephemeral answer; the opening follows."""
        kickoff = self._kickoff_for(command.channel) or self._kickoff_for("")
        if kickoff is None:
            return slash.ephemeral(
                "This room opens no work items: no `slack.kickoff` names a repository for it."
            )
        repos, labels = self._of(kickoff)
        named, words, wrong = prefix.split(command.rest, repos)
        refused = self._refusal(command.member, words, self._policy()) or wrong
        refused = refused or _none_named(repos)
        if refused:
            return slash.ephemeral(refused)
        key = f"slash:{command.channel}:{command.trigger or time.time_ns()}"
        asked = Wanted(key, command.member, command.channel, "", words, repos, labels)
        if named or len(asked.repos) == 1:
            repo = named or asked.repos[0]
            if not self.opening.put(asked, repo):
                return slash.ephemeral("That request is being opened already.")
            return slash.ephemeral(
                f"Opening a new work item in `{repo}` — its thread follows here."
            )
        if not self._claim(asked.key):
            return slash.ephemeral("That request is being opened already.")
        text, blocks = self._ask(asked)
        self.opening.asked(asked)
        return slash.ephemeral(text, blocks)

    def picked(self, payload: Mapping[str, Any], taken: Callable[[], None] = lambda: None) -> bool:
        """A repository picked from the menu: True when the press was such a pick.
        ``taken`` is told once the pick is stored (or refused), before Slack is called."""
        action = _first_action(payload)
        if action.get("action_id") != PICK:
            return False
        member = str(obj(payload.get("user")).get("id") or "")
        chosen = str(obj(action.get("selected_option")).get("value") or "")
        pending, _, which = chosen.partition("|")
        asked, why, repo = self._take(pending, member, which)
        taken()  # Slack waits 3 s for the press; the menu's edit and a refusal can wait
        channel = str(obj(payload.get("channel")).get("id") or "")
        if asked is None:
            if channel and member:
                self._poster.tell(channel, member, why)
            return True
        container = obj(payload.get("container"))
        if container.get("type") == "message" and container.get("message_ts"):
            line = f"Opening it in `{repo}`, as <@{member}> picked…"
            ts, key = str(container["message_ts"]), menu_key(asked.key)
            self._poster.update(asked.channel, ts, line, [], key=key)
        return True

    # -- the steps -------------------------------------------------------------------

    def _refusal(self, member: str, words: str, policy: AccessPolicy) -> str:
        if not may(member, CREATE, policy):
            return refusal_text(member, CREATE, policy)
        if not title_of(words):
            return "Say what the new work item is: its first line becomes the issue's title."
        return ""

    def _claim(self, key: str) -> bool:
        """Claim ``key`` durably; False when it was claimed before (then open nothing)."""
        claimed = {"state": "claimed", "at": self._clock()}
        with self._lock:
            return claimed_once(self._store, CLAIMS, key, claimed, CLAIM_CAP)

    def _ask(self, asked: Wanted) -> tuple[str, list[dict[str, Any]]]:
        """Store the request while its repository is picked; the menu that asks."""
        pending_id = hashlib.sha256(asked.key.encode()).hexdigest()[:16]
        stored = asdict(Wanted(**{**asdict(asked), "expires": self._clock() + PICK_TTL}))
        with self._lock:
            pending = self._live(dict(self._store.get(PENDING) or {}))
            pending[pending_id] = stored
            self._store[PENDING] = pending
        text = f"<@{asked.member}>, which repository should this work item be opened in?"
        return text, picker(pending_id, asked.repos, text)

    def _take(self, pending_id: str, member: str, which: str) -> tuple[Wanted | None, str, str]:
        """The waiting request a pick answers, removed, and the repository picked — or why
        the pick answers nothing."""
        with self._lock:
            pending = dict(self._store.get(PENDING) or {})
            raw = pending.get(pending_id)
            if raw is None:
                return None, "That choice is no longer open — it was made, or it expired.", ""
            asked = Wanted.read(raw)
            if asked.member != member:
                return None, f"Only <@{asked.member}>, who asked, picks the repository.", ""
            repo = _offered(asked.repos, which)
            if repo not in asked.repos or not self._named(repo):
                return None, "That repository is not one this room opens work items in.", ""
            if asked.expires < self._clock():
                del pending[pending_id]
                self._store[PENDING] = self._live(pending)
                return None, "That choice expired; ask again to open the work item.", ""
            # Stored for opening before the choice is forgotten: a crash in between opens
            # it anyway, and a second pick finds it stored.
            self.opening.put(asked, repo)
            del pending[pending_id]
            self._store[PENDING] = self._live(pending)
            return asked, "", repo

    def _of(self, kickoff: KickoffSettings) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The repositories a kickoff may open work items in — those the bound admits."""
        return tuple(r for r in kickoff.repos if self._named(r))[:MAX_OPTIONS], kickoff.labels

    def _live(self, pending: dict[str, Any]) -> dict[str, Any]:
        now = self._clock()
        return {key: value for key, value in pending.items() if value.get("expires", 0) >= now}


def _none_named(repos: tuple[str, ...]) -> str:
    if repos:
        return ""
    return "This room's kickoff names no repository the settings admit, so nothing was opened."


def picker(pending_id: str, repos: tuple[str, ...], text: str) -> list[dict[str, Any]]:
    """The question and its select menu of repositories. An option's value names its
    repository by place (Slack takes 150 characters of a value, and a repository's full
    name may be 140); its text shows at most Slack's 75, the name's both ends."""
    options = [
        Option(value=f"{pending_id}|{n}", text=PlainTextObject(text=_shown(repo)))
        for n, repo in enumerate(repos)
    ]
    menu = StaticSelectElement(
        action_id=PICK, placeholder=PlainTextObject(text="Pick a repository"), options=options
    )
    return [
        SectionBlock(text=MarkdownTextObject(text=text)).to_dict(),
        ActionsBlock(elements=[menu]).to_dict(),
    ]


PICK = f"{buttons.PREFIX}kickoff-repo"
#: Characters of an option's text Slack shows at most.
_OPTION_TEXT = 75


def _shown(repo: str) -> str:
    """``repo`` as an option shows it: whole, or its start and end around an ellipsis."""
    if len(repo) <= _OPTION_TEXT:
        return repo
    half = (_OPTION_TEXT - 1) // 2
    return f"{repo[:half]}…{repo[-(_OPTION_TEXT - 1 - half) :]}"


def _offered(repos: tuple[str, ...], which: str) -> str:
    """The repository a picked value names: by its place in the menu, or — a menu drawn
    before the values were places — by its name."""
    if which.isdigit() and int(which) < len(repos):
        return repos[int(which)]
    return which


def _first_action(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    actions = payload.get("actions")
    return obj(actions[0]) if isinstance(actions, list) and actions else {}


__all__ = ["Opener", "Wanted", "addressed_words", "opened_message", "picker"]
