"""Two bots, one PostgreSQL: how long the room is silent after losing one of them.

Two real ``errbot`` processes (SlackV3 on Socket Mode against the loopback fake of Slack)
share a throwaway PostgreSQL server started from the machine's binaries. Bot A accepts
``--events`` events over three work items, and is SIGKILLed while its post of the first
one hangs in Slack; it stays down. Bot B accepts as many more. Measured from A's death:
when B posts the first event A's dead claim held back (the events of the work item
whose post hung wait behind it; A's other work items B delivers at once), and when every
event either accepted is in the room (each posted once; checked). The lease
(``THELOOP_LEASE_SECONDS``) bounds the first figure from below: B may take A's claims
only once it lapsed.

    .venv/bin/python bench/bench_failover.py [--events 15] [--lease 30]

Prints figures; asserts nothing but that nothing was lost or doubled (numbers are not tests).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop")]

from tests.e2e import slackbot  # noqa: E402 - after the path set-up above
from tests.e2e.slackbot import API_LOOP, LOOP, event_key  # noqa: E402
from tests.fakes.slack_api import FakeSlack  # noqa: E402
from tests.support.postgres import PostgresServer  # noqa: E402

SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent]
  verbosity: normal
  room: {style: classic}
"""


def event(source: str, n: int) -> dict[str, Any]:
    return {
        "id": f"{source}-{n}",
        "eventType": "comment.agent",
        "workItem": f"github:acme/app#{n % 3 + 1}",
        "text": f"Step {n} of the plan is done ({source}).",
    }


def posted(slack: FakeSlack) -> Counter[str]:
    return Counter(key for m in slack.messages(LOOP) if (key := event_key(m)))


def wait(predicate: Any, timeout: float = 600.0) -> float:
    """Poll until ``predicate()``; the time it became true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("the room did not get there")
        time.sleep(0.02)
    return time.monotonic()


def run(events: int, lease: float) -> dict[str, float]:
    server = PostgresServer()
    server.start()
    try:
        url = server.new_database()
        with (
            tempfile.TemporaryDirectory() as data,
            FakeSlack(channels=[(LOOP, "the-loop"), (API_LOOP, "api-loop")]) as slack,
        ):
            env = {"THELOOP_DATABASE_URL": url, "THELOOP_LEASE_SECONDS": str(lease)}
            bots = [
                slackbot.start(Path(data) / name, SETTINGS, slack, {**env, "THELOOP_REPLICA": name})
                for name in ("a", "b")
            ]
            try:
                return failover(bots[0], bots[1], slack, events)
            finally:
                slack.release()
                for bot in bots:
                    bot.process.kill()
    finally:
        server.close()


def failover(a: Any, b: Any, slack: FakeSlack, events: int) -> dict[str, float]:
    opened = [event("a", n) for n in range(3)]
    for each in opened:  # A opens each work item's thread
        a.show(each, 60)
    slack.fail("chat.postMessage", "land_then_hang")  # A's next post: in a thread it opened
    by_a = [event("a", n) for n in range(3, events)]
    assert a.send(by_a[0])[0] == 202
    wait(lambda: by_a[0]["id"] in posted(slack))  # landed; A waits for an answer in vain
    for each in by_a[1:]:
        assert a.send(each)[0] == 202
    a.process.kill()
    dead = time.monotonic()
    slack.release()
    by_b = [event("b", n) for n in range(events)]
    for each in by_b:
        assert b.send(each)[0] == 202
    # A's work that only a takeover frees: its hung post, and what waits behind it in the
    # same work item (B delivers A's other work items at once: they were never held).
    held = {e["id"] for e in by_a if e["workItem"] == by_a[0]["workItem"]} - {by_a[0]["id"]}
    first_of_a = wait(lambda: held & set(posted(slack)))
    every = {e["id"] for e in (*opened, *by_a, *by_b)}
    all_in = wait(lambda: every <= set(posted(slack)))
    doubled = {k: n for k, n in posted(slack).items() if n > 1}
    assert not doubled, f"posted twice: {doubled}"
    return {"first_of_a_s": first_of_a - dead, "all_in_s": all_in - dead, "posts": len(every)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=15, help="events each bot accepts")
    parser.add_argument("--lease", type=float, default=30.0, help="THELOOP_LEASE_SECONDS")
    args = parser.parse_args()
    figures = run(args.events, args.lease)
    print(f"two bots on one PostgreSQL, {args.events} events each, lease {args.lease:g} s")
    print(
        f"  A SIGKILLed mid-delivery → B posts what A's claim held {figures['first_of_a_s']:.1f} s"
    )
    print(f"  A SIGKILLed → every accepted event in the room       {figures['all_in_s']:.1f} s")
    print(
        f"  events posted                                         {figures['posts']:.0f}, each once"
    )


if __name__ == "__main__":
    main()
