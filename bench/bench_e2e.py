"""End to end: events/s from a signed webhook POST to the message in (fake) Slack.

A real ``errbot -c config.py`` on the SlackV3 backend (Socket Mode against the loopback fake
of Slack, as the e2e suite runs it) receives the-loop's real messages, signed, over HTTP;
an event counts as delivered when the fake records the ``chat.postMessage`` carrying its
key in the message metadata. Slack allows about one post per second per channel (bursts of
a few), and the bot paces itself to that, so two shapes are measured in one run:

* **one room** — every work item in ``slack.channel``: bound by the pacing;
* **many rooms** — each repository routed to a room of its own (``rooms:``), a few events
  each: the pacing's bursts and the bot together;
* **unpaced** — one event per room (its parent and its reply fit in a burst): the bot alone.

    .venv/bin/python bench/bench_e2e.py [--rooms 20] [--per-room 5] [--one-room 12]
                                        [--unpaced 100]

Prints figures; asserts nothing (numbers are not tests).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop"), str(REPO / "tests" / "e2e")]

from botproc import BotProcess  # noqa: E402 - after the path set-up above
from slackbot import SlackBot, corpus, slack_env  # noqa: E402

from tests.fakes.slack_api import FakeSlack  # noqa: E402

EVENT_TYPES = "[phase.started, phase.progress, phase.completed, phase-approval-pending]"
STEMS = ("03", "04", "05", "06", "07")


def settings(rooms: int) -> str:
    """theloop.yaml: every lifecycle event subscribed; repository ``bench/rNN`` → ``#room-NN``."""
    routes = "".join(f'  "bench/r{n:02d}": "#room-{n:02d}"\n' for n in range(rooms))
    text = f'slack:\n  channel: "#room-00"\n  subscribe: {EVENT_TYPES}\n'
    return text + (f"rooms:\n{routes}" if rooms > 1 else "")


def events(rooms: int, per_room: int, items_per_room: int) -> list[dict]:
    """``per_room`` real lifecycle messages per room, over ``items_per_room`` work items each."""
    out = []
    for n in range(per_room):
        for room in range(rooms):
            wire = corpus(STEMS[n % len(STEMS)])
            item = f"github:bench/r{room:02d}#{n % items_per_room + 1}"
            out.append({**wire, "workItem": item, "id": f"bench-{room}-{n}"})
    return out


def run(shape: str, rooms: int, per_room: int, items_per_room: int) -> None:
    channels = [(f"C0ROOM{n:04d}", f"room-{n:02d}") for n in range(rooms)]
    batch = events(rooms, per_room, items_per_room)
    with FakeSlack(channels=channels) as slack, tempfile.TemporaryDirectory() as data:
        Path(data, "theloop.yaml").write_text(settings(rooms), encoding="utf-8")
        process = BotProcess(Path(data), backend="SlackV3", env=slack_env(slack))
        try:
            process.start(timeout=90)
            bot = SlackBot(process, slack)
            sent_at = {}
            started = time.monotonic()
            for event in batch:
                sent_at[event["id"]] = time.monotonic()
                status, answer = bot.send(event)
                assert status == 202, answer
            accepted = time.monotonic() - started
            keys = set(sent_at)
            slack.wait_for(lambda: keys <= set(_posted(slack)), timeout=600)
            posted = _posted(slack)
        finally:
            process.kill()
    done = max(posted.values()) - started
    latency = sorted(posted[key] - sent_at[key] for key in keys)
    posts = len([c for c in slack.calls_to("chat.postMessage") if c.status == 200])
    print(
        f"{shape:<10} {len(batch):>4} events over {rooms:>2} room(s), "
        f"{rooms * items_per_room:>3} work items: {len(batch) / done:6.1f} events/s end to end "
        f"({posts} posts incl. parents; all accepted in {accepted:.2f} s); latency "
        f"median {statistics.median(latency):.2f} s, max {latency[-1]:.2f} s"
    )


def _posted(slack: FakeSlack) -> dict[str, float]:
    """Event key → when its message was first posted (fake's clock, monotonic)."""
    first: dict[str, float] = {}
    for call in slack.calls_to("chat.postMessage"):
        payload = ((call.args.get("metadata") or {}).get("event_payload")) or {}
        if call.status == 200 and payload.get("kind") == "event":
            first.setdefault(payload["key"], call.at)
    return first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=20, help="rooms in the many-room run")
    parser.add_argument("--per-room", type=int, default=5, help="events per room (many rooms)")
    parser.add_argument("--one-room", type=int, default=12, help="events in the one-room run")
    parser.add_argument("--unpaced", type=int, default=100, help="rooms (one event each)")
    args = parser.parse_args()
    print("bench_e2e: signed webhook POST -> chat.postMessage in the fake Slack (SlackV3)")
    run("unpaced", args.unpaced, 1, items_per_room=1)
    run("many rooms", args.rooms, args.per_room, items_per_room=1)
    run("one room", 1, args.one_room, items_per_room=4)


if __name__ == "__main__":
    main()
