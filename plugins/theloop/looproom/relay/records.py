"""The records a conversation leaves on the ticket: a reply, context, a decision.

These three are the-loop's *own* marked comments — the form its ``bodies.mirror_body``
writes for ``work-item.reply``, ``context.added`` and ``decision.recorded`` — never a
person's words posted as theirs. The member's text is quoted, scrubbed of secrets and
addresses, stripped of hidden comments, its Slack broadcasts neutralised and every control
keyword visibly broken; a visible line says who said it where; the self-authored marker
and the envelope close it. Why marked: the session already has the words (they are
delivered to it directly), so the-loop's ingress must never forward them again nor let a
gate read a quoted "approved" or ``the-loop execute`` as a person's command.

A relayed *decision* (approve, changes, execute) is the opposite — unmarked, keywords
intact — and lives in :mod:`looproom.relay.forms`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from looproom.digest import strip_comments
from looproom.relay import forms
from looproom.relay.decision import Decision
from looproom.settings import keywords

REPLY, CONTEXT, DECISION = "work-item.reply", "context.added", "decision.recorded"
RECORDS = (REPLY, CONTEXT, DECISION)
#: the-loop's self-authored marker and the visible line beside it: a comment carrying the
#: marker is dropped by its ingress before anything else reads it.
MARKER = "<!-- the-loop:agent-comment -->"
ATTRIBUTION = "🤖 _the-loop, autonomous comment_"
#: A decision recorded without its reason says so, where the reason would be.
NO_REASON = "none given"
#: the-loop's default control keywords (one table: ``looproom.settings.keywords``): a comment
#: that opens a line with one is a command.
CONTROL_KEYWORDS = tuple(keywords.DEFAULTS.values())
#: The decision kinds a ``record-decision`` may name.
DECISION_KINDS = ("product", "design", "tech")

_LINES = {
    REPLY: "reply from {who} on the **slack** channel, recorded here as the answer of record",
    CONTEXT: "📎 context from {who} on the **slack** channel — {count} message(s) from "
    "{thread}, recorded here and appended to `context.md` by the session",
    DECISION: "📌 decision from {who} on the **slack** channel{kind} — recorded here and "
    "written up as a decision record by the session",
}
# The token boundaries the-loop's control parser uses: no word character, colon or hyphen
# directly before or after a keyword.
_BEFORE, _AFTER = r"(?<![\w:-])", r"(?![\w:-])"
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
#: Credential-shaped: 20+ characters of a token alphabet with at least one digit.
_TOKEN = re.compile(r"(?<![\w/])(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}(?![\w-])")
_SECRET_NAME = re.compile(r"TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
_BROADCAST = re.compile(r"<!(?!--)")


@dataclass(frozen=True)
class Quote:
    """What a record quotes, and what its visible line names beside the person."""

    kind: str
    text: str
    member: str
    login: str
    at: str
    count: int = 0
    thread: str = ""
    decision_kind: str = ""
    rationale: str = ""


def scrub(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with this bot's secrets, e-mail addresses and token-shaped strings masked,
    each by a named placeholder so a reader sees that something was removed."""
    env = os.environ if env is None else env
    secrets = [v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 6]
    for value in sorted(secrets, key=len, reverse=True):
        text = text.replace(value, "<redacted:env>")
    text = _EMAIL.sub("<redacted:email>", text)
    return _TOKEN.sub("<redacted:token>", text)


def defang(text: str, keywords: Iterable[str] = CONTROL_KEYWORDS) -> str:
    """Each whole control keyword visibly broken (``t‹defanged›he-loop``, or the space
    between two words) so no parser finds a command, while a reader sees what was meant."""
    for keyword in sorted({k for k in keywords if k}, key=len, reverse=True):
        broken = (
            keyword.replace(" ", " ‹defanged› ")
            if " " in keyword
            else keyword[:1] + "‹defanged›" + keyword[1:]
        )
        pattern = _BEFORE + re.escape(keyword) + _AFTER
        text = re.sub(pattern, lambda _m, b=broken: b, text, flags=re.IGNORECASE)
    return text


def inert(text: str) -> str:
    """``text`` with secrets masked, hidden comments gone (a pasted marker or envelope
    would be taken for the record's own) and broadcasts escaped."""
    return _BROADCAST.sub("&lt;!", strip_comments(scrub(text)))


def safe_quote(text: str) -> str:
    """Another author's words made safe to quote in one of the-loop's own comments."""
    return defang(inert(text))


def body(said: Quote) -> str:
    """The marked, enveloped record of ``said``, as the-loop's ``mirror_body`` writes it."""
    line = _LINES[said.kind].format(
        who=forms.who(said.member, said.login),
        count=str(said.count or "?"),
        thread=f"<{said.thread}>" if said.thread else "a thread",
        kind=f" (kind: {said.decision_kind})" if said.decision_kind else "",
    )
    quoted = "\n".join(f"> {row}" for row in (safe_quote(said.text).splitlines() or [""]))
    text = f"🗣️ **the-loop** — {line}:\n\n{quoted}"
    rationale = said.rationale.strip()
    if rationale:
        # Hidden comments and broadcasts go from the reason too: a pasted envelope there
        # would be read as the record's own, whatever the quote above it says.
        why = inert(rationale)
        text += "\n\n_why:_ " + why.replace("\n", " ")
    elif said.kind == DECISION:
        text += "\n\n_why:_ " + NO_REASON
    if said.kind == DECISION and said.thread:
        text += f"\n\n_discussed at:_ <{said.thread}>"
    marked = f"{text.rstrip()}\n\n{ATTRIBUTION}\n{MARKER}\n"
    return f"{marked.rstrip()}\n\n{forms.envelope(said.kind, said.member, said.login, said.at)}\n"


def said_of(decision: Decision, kind: str) -> Quote:
    """What the record of ``decision`` quotes and names."""
    return Quote(
        kind,
        decision.words,
        decision.member,
        decision.login,
        decision.at,
        count=decision.count,
        thread=decision.link,
        decision_kind=decision.topic,
        rationale=decision.why,
    )


def session_text(decision: Decision, kind: str) -> str:
    """What the session is told: the reply itself, or the record introduced in words, so
    the agent knows a context or a decision from an answer."""
    words = forms.clean_words(decision.words)
    if kind == CONTEXT:
        where = f" {decision.link}" if decision.link else ""
        return (
            f"Context from the Slack thread{where} ({decision.count} message(s)), recorded on "
            f"the work item — add it to context.md:\n\n{words}"
        )
    if kind == DECISION:
        topic = f" ({decision.topic})" if decision.topic else ""
        why = forms.clean_words(decision.why)
        return (
            f"Decision{topic} recorded on the work item from Slack — write it up as a decision "
            f"record:\n\n{words}" + (f"\n\nWhy: {why}" if why else "")
        )
    return words


@dataclass(frozen=True)
class Talk:
    """A record mirrored on the ticket first, then delivered to the session.

    Mirror first: the ticket is the record even when the session is gone. The delivery is
    ``sessions/reply`` with ``comment`` false — the mirror already is the ticket's record,
    and the-loop's own report would say the words came "via the control plane".
    """

    kind: str

    def target(self, decision: Decision, destinations: forms.Destinations) -> dict[str, Any]:
        text = body(said_of(decision, self.kind))
        mirror = forms.on_ticket(decision.work_item, destinations, text, "record")
        request = {
            "ref": decision.work_item,
            "text": session_text(decision, self.kind),
            "actor": f"slack:{decision.member}",
            "comment": False,
        }
        deliver: dict[str, Any] = {
            "sink": forms.LOOP if destinations.loop else forms.LEDGER,
            "path": forms.REPLY_PATH,
            "json": request,
        }
        if destinations.loop and decision.files:
            # Fetched at delivery, for the session only: the record names them, the
            # ledger never holds their private URLs.
            deliver["files"] = [dict(attached) for attached in decision.files]
        return {"sink": TALK, "mirror": mirror, "deliver": deliver, "record": self.kind}


TALK = "talk"
REPLY_FORM, CONTEXT_FORM, DECISION_FORM = Talk(REPLY), Talk(CONTEXT), Talk(DECISION)


@dataclass(frozen=True)
class Refusal:
    """What a member was refused, written on the ticket too, as the-loop writes it: a
    member typing through a connector, or reading the ticket from a phone, never sees
    Slack's ephemeral. the-loop's own marked comment, so its ingress never reads it as a
    command; the refusal's words made inert, as any quote of a member is."""

    def target(self, decision: Decision, destinations: forms.Destinations) -> dict[str, Any]:
        said = inert(decision.words.strip()).replace("\n", " ")
        who = forms.who(decision.member, decision.login)
        text = f"⚠️ {said}\n\n_Said to {who} in Slack, where it was typed._"
        marked = f"{text}\n\n{ATTRIBUTION}\n{MARKER}\n"
        return forms.on_ticket(decision.work_item, destinations, marked, "record")


REFUSAL_FORM = Refusal()
