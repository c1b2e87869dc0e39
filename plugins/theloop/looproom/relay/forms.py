"""The exact form each relay sink accepts a decision in.

A decision either becomes a GitHub issue comment in the form of the-loop's
``channels.bodies.relay_body`` — the words first and unquoted (a control keyword counts
only where a comment opens with it), then the attribution line, then the envelope
``<!-- the-loop:event {…} -->``, and no self-authored marker, so the-loop's ingress reads
the comment as this person's own words — or a call to the-loop's control plane. Where
neither is configured, the local JSONL ledger records the same forms. Which form a kind
of decision takes is said once, in the table of ``looproom.decide.kinds``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from looproom import workitem
from looproom.clients.the_loop import REPLY_PATH, SKIP_PATH
from looproom.relay.decision import Decision
from looproom.settings.jira_config import JiraSite
from looproom.settings.keywords import Keywords
from looproom.verb_names import EXECUTE

GITHUB, LOOP, LEDGER, JIRA = "github", "loop", "ledger", "jira"

#: The words the-loop's gate classifier reads; a button's value in the-loop's own Slack.
APPROVED, CHANGES_REQUESTED = "approved", "changes requested"
#: Phrases the-loop's gate classifier reads as a change request wherever they appear
#: (checked against the real classifier in tests/contract): an approval carrying one
#: would land as the opposite of what was meant, so it is refused instead.
CHANGE_PHRASES = ("changes requested", "request changes", "please change", "rejected")


#: Another author's hidden comment could carry a forged envelope or the-loop's own
#: self-authored marker; either would change how the-loop reads the relayed words.
_HIDDEN = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)


@dataclass(frozen=True)
class Destinations:
    """Which relay sinks are configured: GitHub, the-loop's control plane, the-loop's
    checkout path per repository (``relay.repos``) that a skip needs, and the control
    keywords a control command opens with."""

    github: bool = False
    loop: bool = False
    repos: Mapping[str, str] = field(default_factory=dict)
    #: the-loop's control keywords as this deployment configured them.
    keywords: Keywords = field(default_factory=Keywords)
    #: the-loop's Jira ledger, where its work items are Jira tickets; None: none.
    jira: JiraSite | None = None


def actor(member: str, login: str = "") -> dict[str, str]:
    """The envelope's ``actor``: every id this person has, keyed by channel."""
    ids = {"slack": member}
    if login:
        ids["github"] = login
    return {key: value for key, value in ids.items() if value}


def who(member: str, login: str = "") -> str:
    """The attribution, as the-loop writes it: the GitHub login (else ``slack:<id>``),
    then the Slack id when it differs."""
    label = login or f"slack:{member}"
    return f"`{label}` (`slack:{member}`)" if member and member != label else f"`{label}`"


def envelope(kind: str, member: str, login: str, at: str) -> str:
    """``<!-- the-loop:event {…} -->``, the JSON as the-loop's ``Envelope.to_json`` writes it."""
    payload = {"actor": actor(member, login), "source": "slack", "ts": at, "type": kind}
    # `>` escaped so no value can close the HTML comment early.
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True).replace(">", "\\u003e")
    return f"<!-- the-loop:event {text} -->"


def clean_words(text: str) -> str:
    """A member's words with hidden HTML comments removed (a forged envelope or marker)."""
    return _HIDDEN.sub("", text or "").strip()


def approval_refusal(words: str) -> str:
    """Why an approval's words would be read as a change request — ``""`` when they are not."""
    said = clean_words(words).lower()
    hit = next((phrase for phrase in CHANGE_PHRASES if phrase in said), "")
    if not hit:
        return ""
    return (
        f"Your approval's words include “{hit}”, which the-loop reads as a change request, "
        "so nothing was recorded. Say `changes <why>` to ask for changes, or `approve` "
        "with other words."
    )


def github_target(work_item: str) -> dict[str, Any] | None:
    """``{"repo": "o/r", "number": 7}`` for a GitHub issue or pull request, else ``None``."""
    ref = workitem.parse(work_item)
    if ref is None or not ref.is_github or ref.number is None:
        return None
    return {"repo": ref.repository, "number": ref.number}


def on_ticket(work_item: str, destinations: Destinations, body: str, kind: str) -> dict[str, Any]:
    """``body`` as a comment on the work item's own ticket — a GitHub issue, or a Jira
    ticket (``kind``: ``relay`` or ``record``, which Jira marks differently) — where that
    sink is configured; else in the ledger."""
    issue = github_target(work_item)
    if destinations.github and issue:
        return {"sink": GITHUB, **issue, "body": body}
    key = destinations.jira.key_of(work_item) if destinations.jira is not None else ""
    if key:
        return {"sink": JIRA, "key": key, "body": body, "as": kind}
    return {"sink": LEDGER, "body": body}


def skip_refusal(work_item: str, destinations: Destinations) -> str:
    """Why a skip after the gate cannot be relayed — ``""`` when it can."""
    if not destinations.loop:
        return ""  # the embedded default records it in the ledger
    repo = workitem.repository_of(work_item)
    if repo and destinations.repos.get(repo):
        return ""
    return (
        f"A skip after phase selection goes to the-loop's control plane, which needs "
        f"the-loop's checkout of `{repo or work_item}`; none is configured, so nothing "
        f'was recorded. Add it under `relay: {{repos: {{"{repo or "owner/repo"}": '
        "/path/to/checkout}}` in theloop.yaml."
    )


def tracker_refusal(work_item: str, destinations: Destinations | None = None) -> str:
    """Why a decision the-loop reads from the ticket's comments cannot reach this work
    item — ``""`` when it can: a GitHub issue, or a ticket of the configured Jira site.
    Recording another tracker's decision in the local ledger alone would show ✅ while
    the-loop never sees it."""
    if github_target(work_item) is not None:
        return ""
    jira = destinations.jira if destinations is not None else None
    ref = workitem.parse(work_item)
    if jira is not None and ref is not None and ref.tracker == JIRA:
        return jira.refusal(work_item)
    return (
        f"{work_item} is not a GitHub issue, and the-loop reads this decision from the "
        "work item's own comments, which only a GitHub issue can be given from here — so "
        "nothing was recorded. Say it on the work item itself."
    )


def execute_tail(decision: Decision) -> str:
    """After ``execute``'s keyword: the checklist's rows when some were changed."""
    return "\n\n" + "\n".join(decision.rows) if decision.rows else ""


def subjects_tail(decision: Decision) -> str:
    """After a collaborator or channel keyword: whom or what it is about, on its line."""
    return "".join(f" {subject}" for subject in decision.subjects)


def own_keyword(decision: Decision) -> str:
    """An operator's own command: its keyword, resolved when the command was recorded."""
    return clean_words(decision.words)


def words_tail(decision: Decision) -> str:
    """After a keyword: the member's words on its line (``do``'s task, ``review``'s brief)."""
    said = clean_words(decision.words)
    return f" {said}" if said else ""


def approval_opening(decision: Decision) -> str:
    said = clean_words(decision.words)
    return APPROVED + (f"\n\n{said}" if said else "")


def change_request_opening(decision: Decision) -> str:
    return f"{CHANGES_REQUESTED}\n\n{clean_words(decision.words)}"


@dataclass(frozen=True)
class Comment:
    """A decision relayed as an issue comment: ``opening`` words, then who, then the
    envelope of type ``event`` (``what`` is how the attribution line names it). A control
    ``command`` opens with its configured keyword, and ``opening`` is what follows it."""

    event: str
    what: str
    opening: Callable[[Decision], str]
    command: str = ""

    def said(self, decision: Decision, keywords: Keywords | None = None) -> str:
        """The words the comment opens with: the keyword of a control command, then what
        follows it; else the decision's own opening."""
        keyword = (keywords or Keywords()).of(self.command) if self.command else ""
        return (keyword + self.opening(decision)).strip()

    def body(self, decision: Decision, keywords: Keywords | None = None) -> str:
        """The comment, in the-loop's ``relay_body`` form."""
        said = self.said(decision, keywords)
        attribution = (
            f"🗣️ _the-loop — {self.what} from {who(decision.member, decision.login)} on the "
            "**slack** channel, recorded here so the loop reads it from the work item._"
        )
        stamp = envelope(self.event, decision.member, decision.login, decision.at)
        return f"{said}\n\n{attribution}\n\n{stamp}\n"

    def target(self, decision: Decision, destinations: Destinations) -> dict[str, Any]:
        """On the work item's issue when GitHub is configured, else in the ledger."""
        body = self.body(decision, destinations.keywords)
        return on_ticket(decision.work_item, destinations, body, "relay")


def reply_request(decision: Decision, repos: Mapping[str, str]) -> dict[str, Any]:
    """``sessions/reply``: the member's words typed into the agent's session."""
    del repos
    body = {
        "ref": decision.work_item,
        "text": clean_words(decision.words),
        "actor": f"slack:{decision.member}",
    }
    return {**body, "comment": True}


def skip_request(decision: Decision, repos: Mapping[str, str]) -> dict[str, Any]:
    """``graph/skip``: the nodes to skip, in the checkout of the work item's repository."""
    who_ = f"slack:{decision.member}"
    return {
        "repo": repos.get(workitem.repository_of(decision.work_item), ""),
        "workItem": decision.work_item,
        "nodes": list(decision.nodes),
        "reason": f"declared in Slack by {decision.login or who_}",
        "actor": who_,
        "ref": decision.work_item,
    }


@dataclass(frozen=True)
class LoopCall:
    """A decision relayed as a call to the-loop's control plane at ``path``."""

    path: str
    request: Callable[[Decision, Mapping[str, str]], dict[str, Any]]

    def target(self, decision: Decision, destinations: Destinations) -> dict[str, Any]:
        """To the-loop when its control plane is configured, else in the ledger."""
        call = {"path": self.path, "json": self.request(decision, destinations.repos)}
        return {"sink": LOOP if destinations.loop else LEDGER, **call}


#: The forms the-loop accepts, one per way it reads a decision.
CONTROL_COMMAND = Comment("control.command", "control command", execute_tail, EXECUTE)


def control(command: str) -> Comment:
    """The form of one of the-loop's control commands: its keyword, then its words."""
    return Comment("control.command", "control command", words_tail, command)


def about(command: str) -> Comment:
    """The form of a collaborator or channel command: its keyword, then its subjects."""
    return Comment("control.command", "control command", subjects_tail, command)


#: An operator's own command word: the keyword the-loop reads it by, and nothing more.
OWN_COMMAND = Comment("control.command", "control command", own_keyword)
APPROVAL = Comment("gate.feedback", "answer to the open gate", approval_opening)
CHANGE_REQUEST = Comment("gate.feedback", "answer to the open gate", change_request_opening)
REPLY = LoopCall(REPLY_PATH, reply_request)
SKIP = LoopCall(SKIP_PATH, skip_request)
Form = Comment | LoopCall


def payload(decision: Decision, target: Mapping[str, Any]) -> str:
    """The queue's stored form: the decision and its target, one JSON document."""
    item = {"key": decision.key, "decision": decision.to_dict(), "target": dict(target)}
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def decision_of(stored: str) -> Decision | None:
    """The decision in a stored :func:`payload`; ``None`` when it holds none."""
    try:
        return Decision.from_dict(json.loads(stored)["decision"])
    except (ValueError, KeyError, TypeError):
        return None


def ledger_line(item: Mapping[str, Any]) -> str:
    """One JSONL line for the embedded ledger: the decision's fields and its form."""
    decision = item["decision"]
    line = {
        "key": item["key"],
        "kind": decision["kind"],
        "workItem": decision["work_item"],
        "actor": actor(decision["member"], decision.get("login", "")),
        "at": decision["at"],
        **{k: v for k, v in item["target"].items() if k != "sink"},
    }
    return json.dumps(line, sort_keys=True, ensure_ascii=False)
