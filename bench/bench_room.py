"""How many messages one work item costs the room: ours against the-loop's own room.

The whole timeline of one work item (``tests/support/timeline.py``: selection, four
phases with their progress, two approval gates — one re-sent — their mirrored "ready for
review" comments, the tmux announcement, a question, the PR gate, done and closed) is
delivered three ways:

* **ours, agentic** — the real Slack outlet with its delivery policy, over the loopback
  fake of Slack: every message it posts counts, the work item's parent message included;
* **ours, classic** — the same outlet posting every subscribed event, as before;
* **the-loop's room** — the-loop's own ``room_policy.decide`` over its delivery memory,
  in a room of the work item's own, agentic, merging the memory as its Slack channel does:
  every ``post`` and ``thread`` counts, an ``edit`` or a ``drop`` does not.

It then checks what must stay visible in our thread: every gate and question, and each
phase. Prints figures and exits non-zero only if something that must be seen was not.

    .venv/bin/python bench/bench_room.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop")]

from slack_sdk import WebClient  # noqa: E402 - after the path set-up above
from the_loop.channels import room_policy  # noqa: E402
from the_loop.channels.base import Event as LoopEvent  # noqa: E402

from looproom.events import KNOWN_EVENTS, Event  # noqa: E402
from looproom.room import voice  # noqa: E402
from looproom.room.delivery_log import DeliveryLog  # noqa: E402
from looproom.room.routing import BindingBook  # noqa: E402
from looproom.room.slack_outlet import SlackOutlet  # noqa: E402
from looproom.settings import Settings  # noqa: E402
from looproom.slack.pacer import Pacer  # noqa: E402
from looproom.slack.transport import SlackTransport  # noqa: E402
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack  # noqa: E402
from tests.support import timeline  # noqa: E402

ROOM = "C0LOOP0001"


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ours(style: str) -> tuple[int, list[dict[str, Any]]]:
    """Messages our outlet posts for the timeline, and the room's messages afterwards."""
    with FakeSlack(channels=[(ROOM, "the-loop")]) as slack:
        clock = _Clock()
        transport = SlackTransport.beside(
            WebClient(token=BOT_TOKEN, base_url=slack.url), pacer=Pacer(clock=clock)
        )
        store: dict[str, Any] = {}
        settings = Settings(channel=ROOM, subscribe=KNOWN_EVENTS, room_style=style)
        outlet = SlackOutlet(
            transport, BindingBook(store), settings, interactive=True, told=DeliveryLog(store)
        )
        for wire in timeline.work_item():
            clock.now += 5.0  # beyond the pacing: this counts messages, not speed
            outcome = outlet.deliver(Event.from_wire(wire), maybe_delivered=False)
            if type(outcome).__name__ != "Delivered":
                raise SystemExit(f"{wire['id']} was not delivered: {outcome}")
            outlet.cards.draw_due()  # the parent's redraw, on the cards' stage
        posts = len(slack.calls_to("chat.postMessage"))
        return posts, slack.messages(ROOM)


def theirs() -> tuple[int, Counter[str]]:
    """Messages the-loop's own room posts for the timeline, and its decisions by rule."""
    memory: dict[str, Any] = {"progressTs": {}, "gateTs": {}}
    rules: Counter[str] = Counter()
    posted = 0
    for n, wire in enumerate(timeline.work_item()):
        event = LoopEvent(
            event_type=wire["eventType"],
            work_item=wire["workItem"],
            text=wire.get("text", ""),
            url=wire.get("url", ""),
            detail=dict(wire.get("detail") or {}),
            summary=wire.get("summary", ""),
            source=wire.get("source", ""),
        )
        decision = room_policy.decide(
            event,
            memory,
            is_room=True,
            session_authored=event.source in ("cli", "session"),
            is_operator_doc=bool(event.detail.get("operatorDoc")),
        )
        rules[f"{decision.action}:{decision.rule}"] += 1
        if decision.action == room_policy.DROP:
            continue
        if decision.action in (room_policy.POST, room_policy.THREAD):
            posted += 1
        _merge(memory, event, decision, f"{n}.0")
    return posted, rules


def _merge(memory: dict[str, Any], event: Any, decision: Any, ts: str) -> None:
    """What the-loop's Slack channel merges into its delivery memory after acting."""
    node = str(event.detail.get("node") or event.detail.get("phase") or "")
    memory.update(lastEvent=event.event_type, lastNode=node)
    if node and event.source in ("cli", "session"):
        memory["sessionSpokeFor"] = node
    for key, value in (decision.remember or {}).items():
        if isinstance(value, dict):
            merged = dict(memory.get(key) or {})
            merged.update({k: (ts if v == "@ts" else v) for k, v in value.items()})
            memory[key] = merged
        else:
            memory[key] = ts if value == "@ts" else value


def _keys(messages: list[dict[str, Any]]) -> set[str]:
    found = set()
    for message in messages:
        payload = (message.get("metadata") or {}).get("event_payload") or {}
        found.add(str(payload.get("key") or ""))
    return found


def visible(messages: list[dict[str, Any]]) -> list[str]:
    """What should be seen in our thread and is not."""
    keys = _keys(messages)
    missing = [f"gate or question {key}" for key in timeline.GATES if key not in keys]
    said = " ".join(str(m.get("text") or "") for m in messages).lower()
    missing += [f"phase {p}" for p in timeline.PHASES if voice.words(p).lower() not in said]
    return missing


def main() -> int:
    agentic, shown = ours("agentic")
    classic, _ = ours("classic")
    loop, rules = theirs()
    print(f"timeline: {len(timeline.work_item())} events of one work item")
    print(f"ours, agentic:       {agentic:3d} messages (the parent included)")
    print(f"ours, classic:       {classic:3d} messages (the parent included)")
    print(f"the-loop's own room: {loop:3d} messages (agentic, a room of its own)")
    print("  the-loop's decisions: " + ", ".join(f"{r} {n}" for r, n in sorted(rules.items())))
    missing = visible(shown)
    for what in missing:
        print(f"NOT VISIBLE in our thread: {what}")
    verdict = "no more than" if agentic <= loop else "MORE than"
    print(f"ours posts {verdict} the-loop's room ({agentic} vs {loop})")
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
