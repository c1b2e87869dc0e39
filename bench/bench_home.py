"""How soon the App Home shows what waits on a member, and drops it once answered: end to end.

A real ``errbot -c config.py`` on the SlackV3 backend (Socket Mode against the loopback fake
of Slack, which answers every Web API call after ``--latency`` seconds), with nothing about
attention configured. ``--asks`` gates of as many work items (the-loop's own gate message,
corpus ``06``) arrive signed over HTTP at once. Printed: from each gate's post in its room
to the first Home view of the decider's that lists it (median and worst); then, for half of
them, Approve pressed on the Home one after another: from each press to its comment on
GitHub and to the first Home view without it (median and worst); how many views were
published, and whether any was refused. Asserts nothing (numbers are not tests).

    .venv/bin/python bench/bench_home.py [--asks 20] [--latency 0.15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop")]

from tests.e2e.botproc import BotProcess  # noqa: E402 - after the path set-up above
from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, corpus, slack_env  # noqa: E402
from tests.fakes.github_api import TOKEN, FakeGitHub  # noqa: E402
from tests.fakes.loop_api import FakeLoop  # noqa: E402
from tests.fakes.slack_api import FakeSlack, decoded  # noqa: E402
from tests.support.wait import wait_for  # noqa: E402

ALICE = "U0ALICE01"
TIMEOUT = 300.0
SETTINGS = (
    'slack:\n  channel: "#the-loop"\n  subscribe: [phase-approval-pending]\n'
    "  authorizedUsers: [U0ALICE01]\npeople: {U0ALICE01: alice-gh}\n"
)


def item(n: int) -> str:
    return f"github:bench/home#{n + 1}"


def gates(slack: FakeSlack, refs: set[str]) -> dict[str, tuple[str, float]]:
    """Work item → (its gate's ts, when it landed)."""
    found: dict[str, tuple[str, float]] = {}
    for call in slack.calls_to("chat.postMessage"):
        payload = (decoded(call.args.get("metadata")) or {}).get("event_payload") or {}
        ref = str(payload.get("workItem") or "")
        if call.response.get("ok") and payload.get("kind") == "event" and ref in refs:
            found.setdefault(ref, (str(call.response["ts"]), call.at))
    return found


def views(slack: FakeSlack) -> list[tuple[float, str]]:
    """(when, the view's text) of each of Alice's Home views Slack took."""
    found = []
    for call in slack.calls_to("views.publish"):
        if call.response.get("ok") and call.args.get("user_id") == ALICE:
            found.append((call.at, str(decoded(call.args.get("view")))))
    return found


def block(ts: str) -> str:
    return f"theloop-home:{LOOP}:{ts}"


def press(slack: FakeSlack, ts: str) -> None:
    view = slack.home_of(ALICE)
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "container": {"type": "view", "view_id": view["id"]},
        "view": view,
        "actions": [{"action_id": "theloop:approve", "block_id": block(ts), "value": "approve"}],
    }
    slack.push_envelope(payload, kind="interactive")


def answer(slack: FakeSlack, github: FakeGitHub, ts: str, ref: str) -> tuple[float, float]:
    """Approve pressed on the Home for the gate at ``ts``: seconds to its comment on GitHub,
    and to the first Home view without it."""
    number = int(ref.rsplit("#", 1)[1])
    pressed = time.monotonic()
    press(slack, ts)
    wait_for(lambda: github.posted("bench/home", number), TIMEOUT, "the comment")
    commented = time.monotonic() - pressed
    dropped = wait_for(
        lambda: [at for at, text in views(slack) if at > pressed and block(ts) not in text],
        TIMEOUT,
        "the Home without it",
    )
    return commented, dropped[0] - pressed


def spread(values: list[float]) -> str:
    ordered = sorted(values)
    return f"median {statistics.median(ordered):.2f} s, worst {ordered[-1]:.2f} s"


def run(asks: int, latency: float) -> None:
    refs = {item(n) for n in range(asks)}
    with (
        FakeSlack(latency=latency) as slack,
        FakeGitHub({"bench/home": set(range(1, asks + 1))}) as github,
        FakeLoop(dict.fromkeys(refs, False)) as loop,
        tempfile.TemporaryDirectory() as d,
    ):
        (Path(d) / "theloop.yaml").write_text(SETTINGS, encoding="utf-8")
        env = {
            **slack_env(slack),
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_LOOP_API": loop.url,
        }
        process = BotProcess(Path(d), backend="SlackV3", env=env)
        process.start(timeout=START_TIMEOUT)
        bot = SlackBot(process, slack)
        try:
            for n in range(asks):
                event = {**corpus("06"), "workItem": item(n), "id": f"bench-home-{n}"}
                assert bot.send(event)[0] == 202
            posted = wait_for(
                lambda: (found := gates(slack, refs)) and len(found) == asks and found,
                TIMEOUT,
                "every gate",
            )
            last = block(max(ts for ts, _ in posted.values()))
            wait_for(lambda: any(last in text for _, text in views(slack)), TIMEOUT, "the Home")
            shown = [
                next(at for at, text in views(slack) if block(ts) in text) - landed
                for ts, landed in posted.values()
            ]
            to_comment, to_dropped = [], []
            for ref in sorted(refs)[: asks // 2]:
                comment, dropped = answer(slack, github, posted[ref][0], ref)
                to_comment.append(comment)
                to_dropped.append(dropped)
            refused = [c for c in slack.calls_to("views.publish") if not c.response.get("ok")]
            print(f"asks: {asks}, Slack latency {latency:.2f} s, nothing configured")
            print(f"gate posted → listed on the decider's Home: {spread(shown)}")
            print(f"pressed on the Home → its comment relayed: {spread(to_comment)}")
            print(f"pressed on the Home → a Home without it: {spread(to_dropped)}")
            print(
                f"views published: {len(slack.calls_to('views.publish'))}, refused: "
                f"{len(refused)}; comments: "
                f"{sum(len(github.posted('bench/home', n)) for n in range(1, asks + 1))}"
            )
        finally:
            process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.15)
    args = parser.parse_args()
    run(args.asks, args.latency)


if __name__ == "__main__":
    main()
