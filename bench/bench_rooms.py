"""Many rooms at once: one room's events against twenty rooms', end to end, at Slack's pace.

A real ``errbot -c config.py`` on the SlackV3 backend (Socket Mode against the loopback fake
of Slack, as the e2e suite runs it) receives the-loop's real lifecycle messages, signed,
over HTTP. The fake answers every Web API call after ``--latency`` seconds (a real round
trip to Slack is about 150 ms). Each run has a bot of its own:

* **one room** — one work item's five events in one room;
* **many rooms** — twenty work items, each in a room of its own (``rooms:``), five events
  each, sent interleaved as they would arrive;
* **a 256 KB event** — the many-room run again, one work item's event as large as the
  webhook takes: it should hold its own slot for about its digest's time, and the other
  rooms not at all;
* **memory** — twenty rooms, then ten times as many, two events each, the bot traced
  (``PYTHONTRACEMALLOC``, read through ``bench/traced``): its Python heap at its peak and
  its peak resident memory in each (flat with the number of rooms: no thread or buffer
  per room);
* with ``--tiers``, the many-room run against a fake that keeps Slack's tier 3 for
  ``chat.update`` (50 a minute, bursts of 10) and answers 429 past it: the 429s met.

A run's time is from the first POST until the last Slack call made for its events (their
posts, edits and the parents' redraws), once the bot's inbox is empty and no parent's card
is owed a redraw. Printed: each time, events/s, when the threads were done (every post and
edit in them, the parents' cards aside), when the first message of the last room landed,
the ratio of the two times, and whether every event was posted at most once. Asserts
nothing (numbers are not tests).

    .venv/bin/python bench/bench_rooms.py [--latency 0.15] [--rooms 20] [--per-room 5]
        [--slots N] [--memory-rooms 200] [--tiers]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop"), str(REPO / "bench")]

from _crafted import prose  # noqa: E402

from looproom.events import Event  # noqa: E402
from looproom.http.rules import MAX_BODY_BYTES  # noqa: E402
from looproom.room.render import render  # noqa: E402
from looproom.settings import Settings  # noqa: E402
from tests.e2e.botproc import BotProcess  # noqa: E402 - after the path set-up above
from tests.e2e.slackbot import SlackBot, corpus, slack_env  # noqa: E402
from tests.fakes.slack_api import TIER_3, FakeSlack, Limit, decoded  # noqa: E402

EVENT_TYPES = "[phase.started, phase.progress, phase.completed, phase-approval-pending]"
#: One work item's lifecycle: started, started (requirements), progress, its gate, completed.
STEMS = ("03", "04", "05", "06", "07")
#: Bounds, not expectations: a bot that has not started or drained by then is broken.
START_TIMEOUT, DRAIN_TIMEOUT = 120.0, 600.0


#: The room the large event goes to, and which of its events it is.
BIG_ROOM, BIG_NTH = 0, 2
#: Events a room in the memory runs.
MEMORY_PER_ROOM = 2


@dataclass(frozen=True)
class Figure:
    events: int
    seconds: float
    last_room_first: float  # when the last room's first message landed, from the first POST
    doubled: int  # events posted more than once (must be 0)
    calls: Counter[str]  # the Slack calls made for the run's events, by method
    limited: int  # calls Slack answered 429
    peak_mb: float  # the bot's peak resident memory (0.0: not known here)
    big_landed: float  # from the large event's 202 until Slack had it (0.0: none sent)
    big_post: float  # how long the large event's POST took, until its 202
    heap_mb: float  # the bot's Python heap at its peak (tracemalloc; 0.0: not traced)
    others: float  # when the rooms but the first were done (the first has the large event)
    threads: float  # when the threads were done: the last post or edit, the cards' aside


def settings(rooms: int) -> str:
    """theloop.yaml: the lifecycle subscribed; repository ``bench/rNN`` → ``#room-NN``."""
    routes = "".join(f'  "bench/r{n:02d}": "#room-{n:02d}"\n' for n in range(rooms))
    return f'slack:\n  channel: "#room-00"\n  subscribe: {EVENT_TYPES}\nrooms:\n{routes}'


def events(rooms: int, per_room: int, big: bool = False) -> list[dict[str, Any]]:
    """``per_room`` events of one work item per room, interleaved across the rooms; with
    ``big``, one event of the first room as large as the webhook takes."""
    batch = [
        {**corpus(STEMS[n % len(STEMS)]), "workItem": _item(room), "id": f"bench-{room}-{n}"}
        for n in range(per_room)
        for room in range(rooms)
    ]
    if big:
        at = min(BIG_NTH, per_room - 1) * rooms + BIG_ROOM
        batch[at] = large(batch[at])
    return batch


def large(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with agent prose filling it to just under the webhook's body limit."""
    big = {**event, "eventType": "phase.progress", "text": prose(MAX_BODY_BYTES)}
    while (over := len(json.dumps(big).encode()) - MAX_BODY_BYTES + 64) > 0:
        big["text"] = prose(len(big["text"]) - over)  # escapes take more than one byte
    return big


def digest_seconds(event: dict[str, Any], rounds: int = 3) -> float:
    """How long the room's digest of ``event`` takes in this process (the best of a few)."""
    parsed, settings = Event.from_wire(event), Settings(channel="#room-00")
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        render(parsed, settings, interactive=True)
        times.append(time.perf_counter() - start)
    return min(times)


def _item(room: int) -> str:
    return f"github:bench/r{room:02d}#1"


def run(
    rooms: int,
    per_room: int,
    latency: float,
    extra_env: dict[str, str],
    *,
    big: bool = False,
    limits: dict[str, Limit] | None = None,
    heap: bool = False,
) -> Figure:
    channels = [(f"C0ROOM{n:04d}", f"room-{n:02d}") for n in range(rooms)]
    batch = events(rooms, per_room, big)
    sent: dict[str, float] = {}  # when each event's POST was sent, and when answered 202
    answered: dict[str, float] = {}
    fake = FakeSlack(channels=channels, latency=latency, limits=limits)
    with fake as slack, tempfile.TemporaryDirectory() as d:
        Path(d, "theloop.yaml").write_text(settings(rooms), encoding="utf-8")
        env = {**slack_env(slack), **extra_env}
        if heap:
            env.update(PYTHONTRACEMALLOC="1", THELOOP_BENCH_HEAP=str(Path(d, "heap.txt")))
        traced = [REPO / "bench" / "traced"] if heap else []
        process = BotProcess(Path(d), backend="SlackV3", env=env, extra_pythonpath=traced)
        try:
            process.start(timeout=START_TIMEOUT)
            bot = SlackBot(process, slack)
            started = time.monotonic()
            for event in batch:
                sent[event["id"]] = time.monotonic()
                status, answer = bot.send(event)
                answered[event["id"]] = time.monotonic()
                if status != 202:
                    raise SystemExit(f"the webhook answered {status}: {answer}")
            deadline = started + DRAIN_TIMEOUT
            while _busy(process) and time.monotonic() < deadline:
                time.sleep(0.05)
            if _busy(process):
                raise SystemExit(f"not drained in {DRAIN_TIMEOUT:.0f} s")
            pid = process.process.pid if process.process else 0
            peak = peak_mb(pid)
            heap_peak = heap_mb(pid, Path(d, "heap.txt")) if heap else 0.0
        finally:
            process.kill()
        ours = [call for call in slack.calls if _work_item(call.args) and call.status == 200]
        limited = sum(1 for call in slack.calls if call.status == 429)
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
    calls = Counter(_what(call.method, call.args) for call in ours)
    landed = post = 0.0
    if big:
        (key,) = (e["id"] for e in batch if len(e["text"]) > MAX_BODY_BYTES // 2)
        landed = min(c.at for c in ours if _key(c.args) == key) - answered[key]
        post = answered[key] - sent[key]
    firsts_last = max(firsts.values())
    others = max((c.at for c in ours if _work_item(c.args) != _item(BIG_ROOM)), default=started)
    threads = max(c.at for c in ours if not _what(c.method, c.args).endswith("(cards)"))
    return Figure(
        len(batch),
        done,
        firsts_last,
        doubled,
        calls,
        limited,
        peak,
        landed,
        post,
        heap_peak,
        others - started,
        threads - started,
    )


def _busy(process: BotProcess) -> bool:
    """Events not delivered yet, or parents' cards not redrawn yet."""
    return bool(process.undelivered() or process.owed_cards())


def heap_mb(pid: int, figures: Path) -> float:
    """The traced bot's Python heap at its peak, in MB (asked with SIGUSR2; see traced/)."""
    os.kill(pid, signal.SIGUSR2)
    deadline = time.monotonic() + 30.0
    while not figures.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(figures.read_text(encoding="ascii").split()[1]) / 1e6 if figures.exists() else 0.0


def peak_mb(pid: int) -> float:
    """The process's peak resident set (Linux's VmHWM), in MB; 0.0 where not known."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _payload(args: dict[str, Any]) -> dict[str, Any]:
    return (decoded(args.get("metadata")) or {}).get("event_payload") or {}


def _work_item(args: dict[str, Any]) -> str:
    return str(_payload(args).get("workItem") or "")


def _what(method: str, args: dict[str, Any]) -> str:
    """The call's method; a parent's redraw (its card) apart from the thread's edits."""
    card = method == "chat.update" and _payload(args).get("kind") == "parent"
    return f"{method} (cards)" if card else method


def _key(args: dict[str, Any]) -> str:
    return str(_payload(args).get("key") or "")


def show(name: str, rooms: int, figure: Figure) -> None:
    print(
        f"{name:<10} {figure.events:>4} events in {rooms:>3} room(s): {figure.seconds:6.2f} s, "
        f"{figure.events / figure.seconds:5.1f} events/s; threads done at "
        f"{figure.threads:5.2f} s; last room's first message at "
        f"{figure.last_room_first:5.2f} s; posted twice: {figure.doubled}; 429s: "
        f"{figure.limited}; peak memory {figure.peak_mb:.0f} MB; Slack calls: "
        + ", ".join(f"{method} {n}" for method, n in sorted(figure.calls.items()))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.15, help="seconds per Slack call")
    parser.add_argument("--rooms", type=int, default=20, help="rooms in the many-room run")
    parser.add_argument("--per-room", type=int, default=5, help="events per room")
    parser.add_argument("--slots", type=int, default=0, help="THELOOP_DELIVERY_SLOTS (0: default)")
    parser.add_argument(
        "--memory-rooms", type=int, default=200, help="rooms in the memory run (0: none)"
    )
    parser.add_argument(
        "--tiers", action="store_true", help="also a many-room run against Slack's tier 3"
    )
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
    print(
        f"ratio      {many.seconds / one.seconds:.2f}x one room's time (target: within 2x); "
        f"{many.events / many.seconds:.1f} against {one.events / one.seconds:.1f} events/s"
    )
    big = run(args.rooms, args.per_room, args.latency, env, big=True)
    show("256 KB", args.rooms, big)
    digest = digest_seconds(large(events(1, BIG_NTH + 1)[BIG_NTH]))
    print(
        f"256 KB     one event of {MAX_BODY_BYTES // 1024} KB: its digest takes {digest:.2f} s "
        f"here; its POST took {big.big_post:.2f} s, and it was in Slack "
        f"{big.big_landed:.2f} s after the 202; the other rooms were done at "
        f"{big.others:.2f} s ({many.others:.2f} s without it), the run at {big.seconds:.2f} s "
        f"({many.seconds:.2f} s)"
    )
    if args.memory_rooms:
        # Two events a room (its start, then its first step): each room's thread and parent,
        # without the parents' redraws, which would wait for Slack's edit budget.
        few = run(args.rooms, MEMORY_PER_ROOM, args.latency, env, heap=True)
        show("memory", args.rooms, few)
        wide = run(args.memory_rooms, MEMORY_PER_ROOM, args.latency, env, heap=True)
        show("memory", args.memory_rooms, wide)
        print(
            f"memory     the bot's Python heap at its peak (tracemalloc): {few.heap_mb:.1f} MB "
            f"with {args.rooms} rooms, {wide.heap_mb:.1f} MB with {args.memory_rooms}; "
            f"resident at its peak {few.peak_mb:.0f} MB and {wide.peak_mb:.0f} MB (with "
            f"SQLite's page caches, bounded)"
        )
    if args.tiers:
        tiered = run(args.rooms, args.per_room, args.latency, env, limits={"chat.update": TIER_3})
        show("tier 3", args.rooms, tiered)


if __name__ == "__main__":
    main()
