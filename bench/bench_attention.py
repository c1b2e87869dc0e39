"""How soon the member an ask waits on hears it, and how long the asks waited: end to end.

A real ``errbot -c config.py`` on the SlackV3 backend (Socket Mode against the loopback fake
of Slack, which answers every Web API call after ``--latency`` seconds), with
``attention.direct`` on and a reminder after ``--remind`` seconds. ``--asks`` gates of as
many work items (the-loop's own gate message, corpus ``06``) arrive signed over HTTP at
once. Half of them are answered by pressing Approve in the decider's direct message (the
relay's sinks are loopback fakes of GitHub and the-loop); the others are left to their
reminder. Printed: from each gate's post to its direct message (median and worst), how
many reminders went (one per unanswered ask, none for an answered one), and the bot's own
``theloop_ask_wait_seconds`` histogram and oldest-open gauge, scraped from
``/theloop/metrics``. Asserts nothing (numbers are not tests).

    .venv/bin/python bench/bench_attention.py [--asks 20] [--latency 0.15] [--remind 45]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop")]

from tests.e2e.botproc import BotProcess  # noqa: E402 - after the path set-up above
from tests.e2e.slackbot import START_TIMEOUT, SlackBot, corpus, slack_env  # noqa: E402
from tests.fakes.github_api import TOKEN, FakeGitHub  # noqa: E402
from tests.fakes.loop_api import FakeLoop  # noqa: E402
from tests.fakes.slack_api import FakeSlack, decoded  # noqa: E402
from tests.support.wait import wait_for  # noqa: E402

ALICE, DM = "U0ALICE01", "D0ALICE01"
TIMEOUT = 300.0


def settings(remind: int) -> str:
    return (
        'slack:\n  channel: "#the-loop"\n  subscribe: [phase-approval-pending]\n'
        "  authorizedUsers: [U0ALICE01]\npeople: {U0ALICE01: alice-gh}\n"
        f"attention:\n  direct: true\n  remindAfter: {remind}\n  escalateAfter: 86400\n"
        '  workingHours: "00:00-24:00"\n'
    )


def item(n: int) -> str:
    return f"github:bench/attention#{n + 1}"


def key_of(call: Any) -> str:
    payload = (decoded(call.args.get("metadata")) or {}).get("event_payload") or {}
    return str(payload.get("key") or "")


def landed_all(slack: FakeSlack, start: str) -> list[tuple[str, float]]:
    """(work item, when) of each post marked ``start…`` that landed (the fake's clock)."""
    found = []
    for call in slack.calls_to("chat.postMessage"):
        key = key_of(call)
        if call.response.get("ok") and key.startswith(start):
            found.append((key[len(start) :].split("|", 1)[0], call.at))
    return found


def landed(slack: FakeSlack, start: str) -> dict[str, float]:
    """Work item → when its first post marked ``start…`` landed."""
    found: dict[str, float] = {}
    for ref, at in landed_all(slack, start):
        found.setdefault(ref, at)
    return found


def gates_posted(slack: FakeSlack, asks: int) -> dict[str, float]:
    """Work item → when its gate's message landed."""
    found: dict[str, float] = {}
    for call in slack.calls_to("chat.postMessage"):
        payload = (decoded(call.args.get("metadata")) or {}).get("event_payload") or {}
        if call.response.get("ok") and payload.get("kind") == "event":
            found.setdefault(str(payload.get("workItem") or ""), call.at)
    return {ref: at for ref, at in found.items() if ref in {item(n) for n in range(asks)}}


def press(slack: FakeSlack, message: dict[str, Any]) -> None:
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": DM},
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": DM},
        "message": message,
        "actions": [{"action_id": "theloop:approve", "value": "approve", "block_id": "b"}],
    }
    slack.push_envelope(payload, kind="interactive")


def metrics(bot: SlackBot) -> list[str]:
    url = f"http://{bot.process.host}:{bot.process.port}/theloop/metrics"
    with urllib.request.urlopen(url, timeout=10) as answer:  # the bot's own loopback port
        text = answer.read().decode()
    return [line for line in text.splitlines() if line.startswith("theloop_ask_")]


def run(asks: int, latency: float, remind: int) -> None:
    refs = {item(n) for n in range(asks)}
    repos = {"bench/attention": set(range(1, asks + 1))}
    with (
        FakeSlack(latency=latency) as slack,
        FakeGitHub(repos) as github,
        FakeLoop(dict.fromkeys(refs, False)) as loop,
        tempfile.TemporaryDirectory() as d,
    ):
        (Path(d) / "theloop.yaml").write_text(settings(remind), encoding="utf-8")
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
            sent = time.monotonic()
            for n in range(asks):
                event = {**corpus("06"), "workItem": item(n), "id": f"bench-gate-{n}"}
                assert bot.send(event)[0] == 202
            dms = wait_for(
                lambda: (found := landed(slack, "dm:")) and len(found) == asks and found,
                TIMEOUT,
                "every direct message",
            )
            gates = gates_posted(slack, asks)
            delays = sorted(dms[ref] - gates[ref] for ref in refs)
            answered = sorted(refs)[: asks // 2]
            pressed: dict[str, float] = {}
            for message in slack.messages(DM):
                for ref in answered:
                    if f"`{ref}`" in message.get("text", ""):
                        pressed[ref] = time.monotonic()
                        press(slack, message)
            numbers = [int(ref.rsplit("#", 1)[1]) for ref in answered]

            def relayed() -> bool:
                return sum(len(github.posted("bench/attention", n)) for n in numbers) >= len(
                    numbers
                )

            wait_for(relayed, TIMEOUT, "the answers relayed")
            wait_for(
                lambda: len(landed(slack, "remind:")) >= asks - len(answered),
                TIMEOUT,
                "the reminders",
            )
            reminders = landed_all(slack, "remind:")
            late = [ref for ref, at in reminders if ref in pressed and at > pressed[ref]]
            print(f"asks: {asks}, Slack latency {latency:.2f} s, reminder after {remind} s")
            print(
                f"gate → its direct message: median {statistics.median(delays):.2f} s, "
                f"worst {delays[-1]:.2f} s (the run took {time.monotonic() - sent:.1f} s)"
            )
            per_ask = [ref for ref, _ in reminders]
            doubled = len(per_ask) - len(set(per_ask))
            print(
                f"reminders: {len(reminders)} for {asks - len(answered)} unanswered asks; "
                f"doubled: {doubled}; landed after the ask's answer was pressed: {len(late)}"
            )
            for line in metrics(bot):
                print(line)
        finally:
            process.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--remind", type=int, default=45)
    args = parser.parse_args()
    run(args.asks, args.latency, args.remind)


if __name__ == "__main__":
    main()
