"""Many rooms at once: one room's events against twenty rooms', end to end, at Slack's pace.

A real ``errbot -c config.py`` on the SlackV3 backend (Socket Mode against the loopback fake
of Slack, as the e2e suite runs it) receives the-loop's real lifecycle messages, signed,
over HTTP. The fake answers every Web API call after ``--latency`` seconds (a real round
trip to Slack is about 150 ms). Two runs, each with a bot of its own:

* **one room** — one work item's five events in one room;
* **many rooms** — twenty work items, each in a room of its own (``rooms:``), five events
  each, sent interleaved as they would arrive.

A run's time is from the first POST until the last Slack call made for its events (their
posts, edits and the parents' redraws), once the bot's inbox is empty. Printed: each time,
events/s, when the first message of the last room landed, the ratio of the two times, and
whether every event was posted at most once. Asserts nothing (numbers are not tests).

    .venv/bin/python bench/bench_rooms.py [--latency 0.15] [--rooms 20] [--per-room 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop")]

from tests.e2e.botproc import BotProcess  # noqa: E402 - after the path set-up above
from tests.e2e.slackbot import SlackBot, corpus, slack_env  # noqa: E402
from tests.fakes.slack_api import FakeSlack, decoded  # noqa: E402

EVENT_TYPES = "[phase.started, phase.progress, phase.completed, phase-approval-pending]"
#: One work item's lifecycle: started, started (requirements), progress, its gate, completed.
STEMS = ("03", "04", "05", "06", "07")
#: Bounds, not expectations: a bot that has not started or drained by then is broken.
START_TIMEOUT, DRAIN_TIMEOUT = 120.0, 600.0


@dataclass(frozen=True)
class Figure:
    events: int
    seconds: float
    last_room_first: float  # when the last room's first message landed, from the first POST
    doubled: int  # events posted more than once (must be 0)
    calls: Counter[str]  # the Slack calls made for the run's events, by method


def settings(rooms: int) -> str:
    """theloop.yaml: the lifecycle subscribed; repository ``bench/rNN`` → ``#room-NN``."""
    routes = "".join(f'  "bench/r{n:02d}": "#room-{n:02d}"\n' for n in range(rooms))
    return f'slack:\n  channel: "#room-00"\n  subscribe: {EVENT_TYPES}\nrooms:\n{routes}'


def events(rooms: int, per_room: int) -> list[dict[str, Any]]:
    """``per_room`` events of one work item per room, interleaved across the rooms."""
    return [
        {**corpus(STEMS[n % len(STEMS)]), "workItem": _item(room), "id": f"bench-{room}-{n}"}
        for n in range(per_room)
        for room in range(rooms)
    ]


def _item(room: int) -> str:
    return f"github:bench/r{room:02d}#1"


def run(rooms: int, per_room: int, latency: float, extra_env: dict[str, str]) -> Figure:
    channels = [(f"C0ROOM{n:04d}", f"room-{n:02d}") for n in range(rooms)]
    batch = events(rooms, per_room)
    with FakeSlack(channels=channels, latency=latency) as slack, tempfile.TemporaryDirectory() as d:
        Path(d, "theloop.yaml").write_text(settings(rooms), encoding="utf-8")
        process = BotProcess(Path(d), backend="SlackV3", env={**slack_env(slack), **extra_env})
        try:
            process.start(timeout=START_TIMEOUT)
            bot = SlackBot(process, slack)
            started = time.monotonic()
            for event in batch:
                status, answer = bot.send(event)
                if status != 202:
                    raise SystemExit(f"the webhook answered {status}: {answer}")
            deadline = started + DRAIN_TIMEOUT
            while process.undelivered() and time.monotonic() < deadline:
                time.sleep(0.05)
            if process.undelivered():
                raise SystemExit(f"not drained in {DRAIN_TIMEOUT:.0f} s")
        finally:
            process.kill()
        ours = [call for call in slack.calls if _work_item(call.args) and call.status == 200]
    done = max(call.at for call in ours) - started
    firsts = {}
    for call in ours:
        if call.method == "chat.postMessage":
            firsts.setdefault(_work_item(call.args), call.at - started)
    posted = Counter(
        key
        for call in ours
        if call.method == "chat.postMessage" and (key := _key(call.args)).startswith("bench-")
    )
    doubled = sum(1 for count in posted.values() if count > 1)
    calls = Counter(call.method for call in ours)
    return Figure(len(batch), done, max(firsts.values()), doubled, calls)


def _payload(args: dict[str, Any]) -> dict[str, Any]:
    return (decoded(args.get("metadata")) or {}).get("event_payload") or {}


def _work_item(args: dict[str, Any]) -> str:
    return str(_payload(args).get("workItem") or "")


def _key(args: dict[str, Any]) -> str:
    return str(_payload(args).get("key") or "")


def show(name: str, rooms: int, figure: Figure) -> None:
    print(
        f"{name:<10} {figure.events:>4} events in {rooms:>2} room(s): {figure.seconds:6.2f} s, "
        f"{figure.events / figure.seconds:5.1f} events/s; last room's first message at "
        f"{figure.last_room_first:5.2f} s; posted twice: {figure.doubled}; Slack calls: "
        + ", ".join(f"{method} {n}" for method, n in sorted(figure.calls.items()))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.15, help="seconds per Slack call")
    parser.add_argument("--rooms", type=int, default=20, help="rooms in the many-room run")
    parser.add_argument("--per-room", type=int, default=5, help="events per room")
    parser.add_argument("--slots", type=int, default=0, help="THELOOP_DELIVERY_SLOTS (0: default)")
    args = parser.parse_args()
    env = {"THELOOP_DELIVERY_SLOTS": str(args.slots)} if args.slots else {}
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"bench_rooms: signed webhook POST -> Slack (SlackV3, fake at {args.latency * 1000:.0f} ms "
        f"a call); load average {load}"
    )
    one = run(1, args.per_room, args.latency, env)
    show("one room", 1, one)
    many = run(args.rooms, args.per_room, args.latency, env)
    show("many rooms", args.rooms, many)
    print(f"ratio      {many.seconds / one.seconds:.2f}x one room's time (target: within 2x)")


if __name__ == "__main__":
    main()
