"""The soak's ledger: what the fakes saw, against what was accepted and admitted.

Events. For each accepted event (the webhook answered 2xx), :func:`soak.items.expected`
says what the bot's own policy makes of it; the fake of Slack says what landed — every
``chat.postMessage`` and ``chat.update`` that took effect, including those whose answer was
lost on the way back — by the event key the bot puts in each message's metadata:

* ``post``: exactly one landed post carries the key. None: **lost**; two or more: **doubled**.
* ``edit``: a landed edit carrying the key was drawn over the message that the event named
  by the policy posted (none: **lost**); and no post carries the key (else **doubled**).
* ``none``: nothing carries the key (else **doubled**: the room shows what it should not).

Each work item that posted has exactly one parent message in its room (else lost or doubled).

Decisions. Each work item's approval is one GitHub comment opening ``approved`` on its issue;
its answer is one ``sessions/reply`` to the-loop for its ref, with the answer's words. An
admitted decision is relayed exactly once (none: lost; more: doubled); one tried but not
admitted (a press whose answer a kill cut off) at most once; one never made, not at all.

Latency: from the webhook's 2xx to the first landed post or edit carrying the event's key.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from soak.items import ANSWER, APPROVE, Item, expected
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import Call, FakeSlack, decoded


@dataclass
class Ledger:
    """The figures, and each problem found, named."""

    events: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    decisions: Counter[str] = field(default_factory=Counter)
    lost: list[str] = field(default_factory=list)
    doubled: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    #: The asks' steps that landed in Slack, by kind; a step taken after its ask closed.
    attention: Counter[str] = field(default_factory=Counter)
    late: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.lost and not self.doubled and not self.late


def _payload(call: Call) -> dict[str, Any]:
    return (decoded(call.args.get("metadata")) or {}).get("event_payload") or {}


def _landed(slack: FakeSlack) -> tuple[dict[str, list[Call]], dict[str, list[Call]], Counter[str]]:
    """Landed event posts and edits by event key, and landed parent posts by work item."""
    posts: dict[str, list[Call]] = defaultdict(list)
    edits: dict[str, list[Call]] = defaultdict(list)
    parents: Counter[str] = Counter()
    with slack._changed:
        calls = list(slack.calls)
    for call in calls:
        if not call.landed or call.method not in ("chat.postMessage", "chat.update"):
            continue
        payload = _payload(call)
        if payload.get("kind") == "parent" and call.method == "chat.postMessage":
            parents[str(payload.get("workItem"))] += 1
        elif payload.get("kind") == "event":
            (posts if call.method == "chat.postMessage" else edits)[str(payload["key"])].append(
                call
            )
    return posts, edits, parents


def check_events(items: list[Item], slack: FakeSlack, ledger: Ledger) -> None:
    posts, edits, parents = _landed(slack)
    for item in items:
        accepted_at = {event["id"]: at for event, at in item.accepted}
        outcomes = expected([event for event, _at in item.accepted])
        for outcome in outcomes:
            ledger.events += 1
            ledger.outcomes[f"{outcome.action} ({outcome.rule})"] += 1
            key, landed = outcome.key, posts.get(outcome.key, [])
            if outcome.action == "post":
                _once(ledger, key, len(landed), "posted")
            elif outcome.action == "edit":
                over = posts.get(outcome.over, [])
                target = str(over[0].effect.get("ts")) if len(over) == 1 else ""
                drawn = [c for c in edits.get(key, []) if c.args.get("ts") == target]
                if not drawn:
                    ledger.lost.append(f"{key}: never edited over {outcome.over}'s message")
                if landed:
                    ledger.doubled.append(f"{key}: posted {len(landed)}x where it edits")
            elif landed or edits.get(key):
                ledger.doubled.append(f"{key}: in the room though the policy drops it")
            first = [c.at for c in (*landed, *edits.get(key, []))]
            if outcome.action != "none" and first:
                ledger.latencies.append(min(first) - accepted_at[key])
        if any(o.action == "post" for o in outcomes):
            _once(ledger, f"parent of {item.ref}", parents[item.ref], "posted")


def check_decisions(items: list[Item], github: Any, loop: FakeLoop, ledger: Ledger) -> None:
    replies: dict[str, list[str]] = defaultdict(list)
    with loop._changed:
        for reply in loop.replies:
            replies[str(reply.get("ref"))].append(str(reply.get("text")))
    for item in items:
        number = int(item.ref.rsplit("#", 1)[1])
        comments = github.posted(item.repo, number)
        approvals = [c for c in comments if c.startswith("approved")]
        for other in (c for c in comments if not c.startswith("approved")):
            ledger.doubled.append(f"{item.ref}: a comment nobody asked for: {other[:80]!r}")
        _decision(ledger, item, APPROVE, len(approvals))
        answers = replies.get(item.ref, [])
        said = item.decisions.get(ANSWER)
        wrong = [text for text in answers if said is None or text != said.text]
        for text in wrong:
            ledger.doubled.append(f"{item.ref}: the-loop was told {text[:80]!r}, not the answer")
        _decision(ledger, item, ANSWER, len(answers) - len(wrong))


def _decision(ledger: Ledger, item: Item, kind: str, relayed: int) -> None:
    decision = item.decisions.get(kind)
    what = f"{kind} of {item.ref}"
    if decision is None or not decision.tried:
        if relayed:
            ledger.doubled.append(f"{what}: relayed {relayed}x, never made")
        return
    if decision.admitted:
        ledger.decisions[f"{kind} {decision.via}"] += 1
        _once(ledger, what, relayed, "relayed")
    elif relayed > 1:
        ledger.doubled.append(f"{what}: relayed {relayed}x")


def _once(ledger: Ledger, what: str, count: int, verb: str) -> None:
    if count == 0:
        ledger.lost.append(f"{what}: never {verb}")
    elif count > 1:
        ledger.doubled.append(f"{what}: {verb} {count}x")


def percentile(values: list[float], share: float) -> float:
    """The value below which ``share`` of ``values`` lie (nearest rank); 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return ordered[rank]


def held_by_outages(
    items: list[Item], slack: FakeSlack, during: Callable[[float, float], bool]
) -> float:
    """The longest an event whose way overlapped a database outage took from its first
    send (refused 503 while the database was down) to its first landed post or edit."""
    posts, edits, _parents = _landed(slack)
    longest = 0.0
    for item in items:
        for event, _at in item.accepted:
            key = event["id"]
            landed = [c.at for c in (*posts.get(key, []), *edits.get(key, []))]
            first = item.first_tried.get(key)
            if landed and first is not None and during(first, min(landed)):
                longest = max(longest, min(landed) - first)
    return longest


def check_attention(
    slack: FakeSlack, asks: list[tuple], steps: list[tuple], ledger: Ledger
) -> None:
    """Each ask's step posted at most once (its mark's key is the step's), and none taken
    for a member after the ask was answered or moved on (the store's own times)."""
    with slack._changed:
        calls = [c for c in slack.calls if c.landed and c.method == "chat.postMessage"]
    posted: Counter[str] = Counter()
    for call in calls:
        payload = _payload(call)
        if payload.get("kind") == "attention":
            posted[str(payload.get("key"))] += 1
    for key, times in posted.items():
        ledger.attention[key.split(":", 1)[0]] += 1
        if times > 1:
            ledger.doubled.append(f"attention step {key} posted {times} times")
    closed = {str(ask): float(at) for ask, outcome, at in asks if outcome != "open"}
    for ask, member, step, at in steps:
        if 0 < closed.get(str(ask), 0) < float(at):
            ledger.late.append(f"{member} {step} for {ask} after it closed")


def limit_refusals(slack: FakeSlack) -> Counter[str]:
    """Slack calls the fake refused for its own limits (not a scripted 429), by method and,
    for a post, what it posted (an event, a parent, or a reply of the bot's own)."""
    with slack._changed:
        refused = [call for call in slack.calls if call.fault == "limit"]
    return Counter(
        call.method
        + (f" {_payload(call).get('kind') or 'reply'}" if call.method == "chat.postMessage" else "")
        for call in refused
    )


def struck(slack: FakeSlack, github: Any, loop: FakeLoop) -> Counter[str]:
    """Calls answered by a scripted fault: Slack's by its kind; GitHub's and the-loop's by
    what they were answered (their fakes script only faults: a 502, a dropped connection)."""
    with slack._changed:
        found = Counter(
            f"Slack {call.fault}" for call in slack.calls if call.fault not in ("", "limit")
        )
    for name, fake in (("GitHub", github), ("the-loop", loop)):
        with fake._changed:
            for request in fake.requests:
                if request.status in (0, 502):
                    found[f"{name} {'dropped' if request.status == 0 else 502}"] += 1
    return found
