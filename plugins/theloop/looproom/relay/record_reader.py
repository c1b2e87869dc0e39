"""``!theloop records <work item>``: what was recorded on the ticket from Slack, with links.

The room's records of a conversation — replies, contexts, decisions — live on the work
item's ticket as the-loop's own marked comments (:mod:`looproom.relay.records`), so that
is where they are read back, like the-loop's ``channels records``: the GitHub issue's
comments (ten pages of 100), the Jira ticket's (fifty), or — on the embedded default —
the local ledger; a busier ticket is read that far and the answer says so. Only a comment
*this bot's own account* posted counts, carrying the-loop's marker and an envelope of a
record type: the marker and the envelope are text anyone who can comment could paste, and
a pasted "decision" must not read as a person's. Read-only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from looproom import workitem
from looproom.relay import forms, jira_body, records
from looproom.relay.jira_sink import JiraSink
from looproom.relay.sinks import GitHubSink, LedgerSink
from looproom.slack.text import defang

_ENVELOPE = re.compile(r"<!--\s*the-loop:event\s+(\{.*?\})\s*-->", re.DOTALL)
#: Where a record was said: a decision's ``_discussed at:_`` line, a context's thread
#: named in its first line (``… message(s) from <link>``).
_DISCUSSED = re.compile(r"^_?discussed at:_? <?([^\s<>]+)>?\s*$")
_CONTEXT_FROM = re.compile(r"message\(s\) from <?(https?://[^\s<>|]+)")
_SHOWN = {
    records.REPLY: "💬 reply",
    records.CONTEXT: "📎 context",
    records.DECISION: "📌 decision",
}
#: How many records the answer lists (the newest); the ticket has them all.
MOST = 20


@dataclass(frozen=True)
class Record:
    """One record read back: its type, who said it and when, the quoted words, the link."""

    kind: str
    actor: Mapping[str, str] = field(default_factory=dict)
    at: str = ""
    text: str = ""
    why: str = ""
    url: str = ""
    #: The Slack thread it was said in (its link), ``""`` where the record names none.
    discussed_at: str = ""


def parse(body: str, url: str = "") -> Record | None:
    """The record in a comment's text; None unless its envelope names a record type."""
    found = _ENVELOPE.search(body)
    try:
        envelope = json.loads(found.group(1)) if found else None
    except ValueError:
        return None
    if not isinstance(envelope, dict) or envelope.get("type") not in records.RECORDS:
        return None
    actor = envelope.get("actor")
    quoted = [
        line[2:] if line.startswith("> ") else ""
        for line in body.splitlines()
        if line.startswith(">")
    ]
    why = next((_after_why(line) for line in body.splitlines() if _after_why(line)), "")
    return Record(
        kind=str(envelope["type"]),
        actor={str(k): str(v) for k, v in actor.items()} if isinstance(actor, dict) else {},
        at=str(envelope.get("ts") or ""),
        text="\n".join(quoted).strip(),
        why=why,
        url=url,
        discussed_at=_where(body),
    )


def _where(body: str) -> str:
    """The thread a record was said in: its ``discussed at`` line, or a context's thread."""
    for line in body.splitlines():
        found = _DISCUSSED.match(line.strip())
        if found:
            return found.group(1)
    first = next((line for line in body.splitlines() if line.startswith("🗣️")), "")
    found = _CONTEXT_FROM.search(first)
    return found.group(1) if found else ""


def _after_why(line: str) -> str:
    """The rationale on a record's ``_why:_`` line (``why:`` once Jira dropped the marks)."""
    for opening in ("_why:_ ", "why: "):
        if line.startswith(opening):
            return line[len(opening) :].strip()
    return ""


class RecordReader:
    """Reads a work item's records from wherever the relay puts them."""

    def __init__(
        self,
        ledger: LedgerSink,
        github: GitHubSink | None = None,
        jira: JiraSink | None = None,
        *,
        known: Callable[[str], bool] = lambda _ref: True,
    ) -> None:
        """``known``: whether the room follows a work item — nothing else is read, so the
        command cannot be used to read tickets the room was never told about."""
        self._ledger, self._github, self._jira, self._known = ledger, github, jira, known

    def read(self, work_item: str) -> tuple[list[Record], str]:
        """The records on ``work_item``'s ticket, oldest first, and what went wrong (``""``)."""
        found, problem, _short = self._read(work_item)
        return found, problem

    def _read(self, work_item: str) -> tuple[list[Record], str, str]:
        """:meth:`read`, and a sentence when the ticket has more comments than were read."""
        issue = forms.github_target(work_item)
        if self._github is not None and issue is not None:
            return self._from_github(issue["repo"], int(issue["number"]))
        key = self._jira.site.key_of(work_item) if self._jira is not None else ""
        if self._jira is not None and key:
            return self._from_jira(key)
        return self._from_ledger(work_item), "", ""

    def answer(self, asked: str, refusal: Callable[[str], str] = lambda _ref: "") -> str:
        """The text of ``!theloop records <work item>``; ``refusal(ref)`` says why the asker
        may not read it (``looproom.room.readers``), ``""`` when they may."""
        ref = workitem.parse(asked.strip()) or workitem.resolve_typed(asked.strip())
        if ref is None:
            return "usage: `!theloop records <work item>` — e.g. `github:acme/api#7`"
        if not self._known(str(ref)):
            return (
                f"The room does not follow `{defang(str(ref))}`, so its records are not read here."
            )
        refused = refusal(str(ref))
        if refused:
            return refused
        found, problem, short = self._read(str(ref))
        return render(str(ref), found, problem, short)

    def _from_github(self, repo: str, number: int) -> tuple[list[Record], str, str]:
        assert self._github is not None
        login, comments, more = self._github.comments_read(repo, number)
        if isinstance(comments, str):
            return [], comments, ""
        mine = [
            c
            for c in comments
            if login
            and (c.get("user") or {}).get("login") == login
            and records.MARKER in str(c.get("body"))
        ]
        parsed = [parse(str(c.get("body") or ""), str(c.get("html_url") or "")) for c in mine]
        problem = "" if login else "the bot's GitHub login could not be read"
        return [r for r in parsed if r is not None], problem, _short(more, len(comments))

    def _from_jira(self, key: str) -> tuple[list[Record], str, str]:
        assert self._jira is not None
        me = self._jira.myself()
        comments, more = self._jira.comments_read(key)
        if isinstance(comments, str):
            return [], comments, ""
        found = []
        for comment in comments:
            text = jira_body.to_text(comment.get("body"))
            author = comment.get("author") or {}
            by_me = me and me in (author.get("accountId"), author.get("key"))
            if by_me and "[the-loop:agent-comment]" in text:
                record = parse(text, str(comment.get("url") or ""))
                found += [record] if record is not None else []
        problem = "" if me else "the Jira account could not be read"
        return found, problem, _short(more, len(comments))

    def _from_ledger(self, work_item: str) -> list[Record]:
        lines = [line for line in self._ledger.lines() if line.get("workItem") == work_item]
        parsed = [parse(str(line.get("body") or "")) for line in lines if "body" in line]
        return [r for r in parsed if r is not None]


def _short(more: bool, read: int) -> str:
    """What the answer says when the ticket has comments past those read."""
    if not more:
        return ""
    return (
        f"Only the ticket's first {read:,} comments were read: records after them are not "
        "listed here; the ticket has them."
    )


def render(work_item: str, found: list[Record], problem: str = "", short: str = "") -> str:
    """The records as the room shows them: newest last, each with who, when and the link;
    ``short`` said last when the ticket had more comments than were read."""
    shown = f"`{defang(work_item)}`"
    if problem:
        return f"The records of {shown} could not be read: {defang(problem)}."
    if not found:
        return "\n".join(
            [f"Nothing recorded on {shown} from Slack yet.", *([short] if short else [])]
        )
    lines = [f"Recorded on {shown} from Slack ({len(found)}):"]
    for number, record in enumerate(found[-MOST:], start=max(1, len(found) - MOST + 1)):
        who = record.actor.get("github") or f"slack:{record.actor.get('slack', '?')}"
        link = f" — [on the ticket]({record.url})" if record.url else ""
        lines.append(f"{number}. {_SHOWN[record.kind]} — `{defang(who)}`, {record.at or '?'}{link}")
        quote = record.text.splitlines()[0] if record.text else ""
        if quote:
            lines.append(f"   “{defang(quote[:200])}”")
        if record.why:
            lines.append(f"   why: {defang(record.why[:200])}")
        if record.discussed_at.startswith(("https://", "http://")):
            lines.append(f"   said in [this thread]({record.discussed_at})")
    return "\n".join([*lines, *([short] if short else [])])
