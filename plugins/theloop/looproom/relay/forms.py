"""A decision, and the exact form each relay sink accepts it in (DESIGN §3.3).

``execute`` and gate answers become a GitHub issue comment in the form of the-loop's
``channels.bodies.relay_body``: the words first and unquoted (a control keyword counts
only where a comment opens with it), then the attribution line, then the envelope
``<!-- the-loop:event {…} -->`` — and no self-authored marker, so the-loop's ingress
reads the comment as this person's own words. Answers to an ask and skips after the gate
go to the-loop's control plane. Where neither is configured, the local JSONL ledger
records the same forms. Every decision carries an idempotency key (§3.3).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from looproom import workitem

EXECUTE, SKIP, APPROVE, CHANGES, ANSWER = "execute", "skip", "approve", "changes", "answer"
KINDS = (EXECUTE, SKIP, APPROVE, CHANGES, ANSWER)
GITHUB, LOOP, LEDGER = "github", "loop", "ledger"

EXECUTE_KEYWORD = "the-loop execute"
#: The words the-loop's gate classifier reads; a button's value in the-loop's own Slack.
APPROVED, CHANGES_REQUESTED = "approved", "changes requested"
#: Phrases the-loop's gate classifier reads as a change request wherever they appear
#: (checked against the real classifier in tests/contract): an approval carrying one
#: would land as the opposite of what was meant, so it is refused instead.
CHANGE_PHRASES = ("changes requested", "request changes", "please change", "rejected")

REPLY_PATH = "/api/v1/sessions/reply"
SKIP_PATH = "/api/v1/graph/skip"

#: Another author's hidden comment could carry a forged envelope or the-loop's own
#: self-authored marker; either would change how the-loop reads the relayed words.
_HIDDEN = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)


@dataclass(frozen=True)
class Decision:
    """One decision a member made in the room (issue 4), ready to be stored.

    ``origin`` says where it was made — ``<channel>:<ts>`` for a typed message,
    ``<channel>:<ts>:<action>`` for a press — so a redelivered message or a second press
    of the same button yields the same :attr:`key`. ``channel``/``ts`` is the message to
    acknowledge on, ``thread`` the gate or ask message the threaded reply goes under.
    """

    kind: str
    work_item: str
    member: str
    origin: str
    at: str
    words: str = ""
    rows: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    gate: str = ""
    channel: str = ""
    ts: str = ""
    thread: str = ""
    login: str = ""

    @property
    def key(self) -> str:
        """The idempotency key: one per decision, the same for every retry of it."""
        raw = f"{self.kind}|{self.work_item}|{self.origin}"
        return "relay:" + hashlib.sha256(raw.encode()).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        raw = asdict(self)
        raw["rows"], raw["nodes"] = list(self.rows), list(self.nodes)
        return raw

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Decision:
        fields = {**raw, "rows": tuple(raw.get("rows", ())), "nodes": tuple(raw.get("nodes", ()))}
        return cls(**fields)


@dataclass(frozen=True)
class Sinks:
    """Which relay sinks are configured (DESIGN §3.5): GitHub, the control plane, and
    the-loop's checkout path per repository (``relay.repos``) that a skip needs."""

    github: bool = False
    loop: bool = False
    repos: Mapping[str, str] = field(default_factory=dict)


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


def words_of(decision: Decision) -> str:
    """What the comment opens with: the keyword (and rows) or the gate's answer."""
    said = clean_words(decision.words)
    if decision.kind == EXECUTE:
        return EXECUTE_KEYWORD + ("\n\n" + "\n".join(decision.rows) if decision.rows else "")
    if decision.kind == APPROVE:
        return APPROVED + (f"\n\n{said}" if said else "")
    if decision.kind == CHANGES:
        return f"{CHANGES_REQUESTED}\n\n{said}"
    raise ValueError(f"{decision.kind} is not relayed as a comment")


def relay_body(decision: Decision) -> str:
    """The comment for an ``execute`` (``control.command``) or a gate answer
    (``gate.feedback``) — the-loop's ``relay_body`` form (§3.3)."""
    gate = decision.kind in (APPROVE, CHANGES)
    kind, what = (
        ("gate.feedback", "answer to the open gate")
        if gate
        else ("control.command", "control command")
    )
    attribution = (
        f"🗣️ _the-loop — {what} from {who(decision.member, decision.login)} on the "
        "**slack** channel, recorded here so the loop reads it from the work item._"
    )
    stamp = envelope(kind, decision.member, decision.login, decision.at)
    return f"{words_of(decision).strip()}\n\n{attribution}\n\n{stamp}\n"


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


def skip_refusal(work_item: str, sinks: Sinks) -> str:
    """Why a skip after the gate cannot be relayed — ``""`` when it can (§3.3)."""
    if not sinks.loop:
        return ""  # the embedded default records it in the ledger
    repo = workitem.repository_of(work_item)
    if repo and sinks.repos.get(repo):
        return ""
    return (
        f"A skip after phase selection goes to the-loop's control plane, which needs "
        f"the-loop's checkout of `{repo or work_item}`; none is configured, so nothing "
        f'was recorded. Add it under `relay: {{repos: {{"{repo or "owner/repo"}": '
        "/path/to/checkout}}` in theloop.yaml."
    )


def loop_request(decision: Decision, repos: Mapping[str, str]) -> dict[str, Any]:
    """The control-plane call for an answer or a skip (§3.3)."""
    who_ = f"slack:{decision.member}"
    if decision.kind == ANSWER:
        body = {"ref": decision.work_item, "text": clean_words(decision.words), "actor": who_}
        return {"path": REPLY_PATH, "json": {**body, "comment": True}}
    reason = f"declared in Slack by {decision.login or who_}"
    body = {
        "repo": repos.get(workitem.repository_of(decision.work_item), ""),
        "workItem": decision.work_item,
        "nodes": list(decision.nodes),
        "reason": reason,
        "actor": who_,
        "ref": decision.work_item,
    }
    return {"path": SKIP_PATH, "json": body}


def target(decision: Decision, sinks: Sinks) -> dict[str, Any]:
    """Where a decision goes and in what form: the sink's name and its request."""
    if decision.kind in (ANSWER, SKIP):
        request = loop_request(decision, sinks.repos)
        return {"sink": LOOP if sinks.loop else LEDGER, **request}
    body = relay_body(decision)
    issue = github_target(decision.work_item)
    if sinks.github and issue:
        return {"sink": GITHUB, **issue, "body": body}
    return {"sink": LEDGER, "body": body}


def payload(decision: Decision, sinks: Sinks) -> str:
    """The queue's stored form: the decision and its target, one JSON document."""
    item = {"key": decision.key, "decision": decision.to_dict(), "target": target(decision, sinks)}
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


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
