"""One bot, two the-loop instances, end to end: a real errbot on the real SlackV3 backend
(Socket Mode against the loopback fake of Slack), two loopback fakes of the-loop's control
plane standing for instances A and B, and a loopback fake of GitHub for the records.

Each instance's signed events are posted; a reply typed in B's work item's thread reaches
B's control plane only (and A's only A's); B's key is refused for A's work item, and what
it sent is never posted; ``/the-loop status|restart|upgrade|standing`` name the instance,
or go to the one the room belongs to, each behind its grant; ``!theloop status``, the
doctor and the metrics show each instance by name.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, SlackBot, StartBot, event_key, slash
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import INSTANCE, REPLY, WORK_ITEMS, FakeLoop
from tests.fakes.loopback import Request
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support import signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SECRET_A, SECRET_B = "a" * 40, "b" * 40
ITEM_A, ITEM_B = "github:acme/api#7", "github:beta/web#3"
ALICE, EVE, ALICE_DM = "U0ALICE01", "U0EVE0001", "D0ALICE01"
SIGNING_SECRET = "e2e-slack-signing-secret"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
  publish: [gate.feedback, control.command, context.added, decision.recorded,
            instance.command, standing.command]
people: {U0ALICE01: alice-gh}
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: %s
    workItems: {repos: ["acme/*"], learn: false}
  team-b:
    keyId: b-2026
    secret: {env: TEAM_B_SECRET}
    api: %s
    token: {env: TEAM_B_TOKEN}
"""
TIMEOUT = 60.0


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    a: FakeLoop
    b: FakeLoop

    def send(self, event: dict[str, Any], secret: str, key_id: str = "") -> int:
        body = json.dumps(event).encode()
        headers = signed.webhook_headers(secret, body)
        if key_id:
            headers["X-TheLoop-Key-Id"] = key_id
        process = self.bot.process
        return signed.post(process.host, process.port, signed.WEBHOOK_PATH, body, headers)[0]

    def thread(self, work_item: str, secret: str, key_id: str = "") -> str:
        """the-loop's instance says something on ``work_item``: its thread, once posted."""
        event = {"id": f"say-{work_item}", "eventType": "comment.agent", "workItem": work_item}
        event["text"] = f"I have started on {work_item}."
        assert self.send(event, secret, key_id) == 202
        message = wait_for(lambda: self.posted(event["id"]), TIMEOUT, f"{event['id']} posted")[0]
        return str(message.get("thread_ts") or message["ts"])

    def posted(self, key: str) -> list[dict[str, Any]]:
        return [m for m in self.slack.messages(LOOP) if event_key(m) == key]

    def landed(self, said: dict[str, Any], what: str) -> None:
        def reactions() -> list[str]:
            calls = self.slack.calls_to("reactions.add")
            return [c.args["name"] for c in calls if c.args["timestamp"] == said["ts"]]

        wait_for(lambda: "white_check_mark" in reactions(), TIMEOUT, what)

    def ask(self, command: str, until: str) -> str:
        """Alice says ``command`` to the bot in a DM; its answer, once it has ``until``."""
        dm = self.slack.channel_id(ALICE_DM) or self.slack.add_channel("alice-dm", ALICE_DM)
        message = {"type": "message", "channel_type": "im", "user": ALICE, "text": command}
        ts = f"1800000000.{len(self.slack.messages(dm)) + 1}"
        event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": ts}}
        assert self.slack.push_envelope(event) is not None, "the bot did not ack the command"

        def answer() -> str:
            said = [str(m.get("text") or "") for m in self.slack.messages(dm)]
            return next((text for text in reversed(said) if until in text), "")

        return wait_for(answer, TIMEOUT, f"an answer with {until!r}")

    def slash(self, text: str, trigger: str, member: str = ALICE) -> str:
        return str(slash(self.slack, text, member, trigger)["text"])


def replies_asked(loop: FakeLoop) -> list[str]:
    return [str(q.body.get("ref")) for q in loop.requests if q.path == REPLY]


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    with (
        FakeGitHub({"acme/api": {7}, "beta/web": {3}}) as github,
        FakeLoop({ITEM_A: False}) as a,
        FakeLoop({ITEM_B: False}) as b,
    ):
        a.name, b.name = "loop-a", "loop-b"
        a.standing, b.standing = {"triage": True}, {"nightly": False}
        env = {
            "THELOOP_WEBHOOK_SECRET": "",  # instances: each names its own
            "TEAM_A_SECRET": SECRET_A,
            "TEAM_B_SECRET": SECRET_B,
            "TEAM_B_TOKEN": "token-of-b",
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": github.url,
            "THELOOP_SLACK_SIGNING_SECRET": SIGNING_SECRET,
        }
        bot = slack_bot(SETTINGS % (a.url, b.url), env)
        try:
            yield Rig(bot, fake_slack, a, b)
        finally:
            bot.process.kill()  # before the fakes it relays to go away


def test_each_instances_events_are_posted_and_a_reply_reaches_its_owner_only(rig: Rig) -> None:
    thread_a = rig.thread(ITEM_A, SECRET_A)
    thread_b = rig.thread(ITEM_B, SECRET_B, "b-2026")
    said = rig.bot.say(ALICE, f"<@{BOT_USER}> use the staging database", thread_b)
    rig.landed(said, "the reply in B's thread")
    assert rig.b.replies == [
        {
            "ref": ITEM_B,
            "text": "use the staging database",
            "actor": f"slack:{ALICE}",
            "comment": False,
        }
    ]
    assert rig.b.requests[-1].headers["Authorization"] == "Bearer token-of-b"
    assert replies_asked(rig.a) == []  # never offered to A
    said = rig.bot.say(ALICE, f"<@{BOT_USER}> keep the old index", thread_a)
    rig.landed(said, "the reply in A's thread")
    assert [r["ref"] for r in rig.a.replies] == [ITEM_A]
    assert replies_asked(rig.b) == [ITEM_B]


def test_bs_key_is_refused_for_as_work_item_and_nothing_of_it_is_posted(rig: Rig) -> None:
    rig.thread(ITEM_A, SECRET_A)
    forged = {"id": "b-on-a", "eventType": "comment.agent", "workItem": ITEM_A, "text": "mine"}
    assert rig.send(forged, SECRET_B, "b-2026") == 403
    assert rig.send(forged, SECRET_A, "b-2026") == 401  # A's secret under B's key id
    # The next event of A's is posted after it: delivery is in order, so the refused one
    # would be in the room by then had it been taken in.
    after = {"id": "a-after", "eventType": "comment.agent", "workItem": ITEM_A, "text": "next"}
    assert rig.send(after, SECRET_A) == 202
    wait_for(lambda: rig.posted("a-after"), TIMEOUT, "A's next event")
    assert rig.posted("b-on-a") == []


def test_the_instance_verbs_name_the_instance_or_go_to_the_rooms_owner(rig: Rig) -> None:
    status = rig.slash("status", "t1")
    assert "*team-a* · *the-loop instance* `loop-a`" in status
    assert "*team-b* · *the-loop instance* `loop-b`" in status
    only_b = rig.slash("status team-b", "t2")
    assert "`loop-b`" in only_b and "loop-a" not in only_b
    assert "one of `team-a`, `team-b`" in rig.slash("restart", "t3")
    assert rig.a.restarts == rig.b.restarts == []  # two instances, no telling: none restarted
    assert "*team-b* · the-loop scheduled its upgrade" in rig.slash("upgrade team-b", "t4")
    assert "asked already" in rig.slash("upgrade team-b", "t4")  # Slack delivered it twice
    assert rig.b.restarts == [{"withUpgrade": True}] and rig.a.restarts == []
    listed = rig.slash("standing list", "t5")
    assert "`triage`: running" in listed and "`nightly`: stopped" in listed
    assert "`nightly`: started" in rig.slash("standing start nightly team-b", "t6")
    assert rig.b.standing == {"nightly": True}
    assert "slack.authorizedUsers" in rig.slash("restart team-a", "t7", member=EVE)
    assert rig.a.restarts == []


def test_status_asks_every_instance_and_its_work_items_at_once(rig: Rig) -> None:
    rig.thread(ITEM_A, SECRET_A)  # a work item the room follows, and the-loop's record of it
    rig.a.work_items[ITEM_A] = {"ref": ITEM_A, "status": "running"}
    # Slack waits 3 s for the whole answer. Each question is held until all four are
    # asked: asked one after another, the first would time out and the answer say so.
    asked = threading.Barrier(4, timeout=TIMEOUT)

    def together(request: Request) -> None:
        if request.path in (INSTANCE, WORK_ITEMS):
            asked.wait()

    rig.a.before = rig.b.before = together
    status = rig.slash("status", "t1")
    assert "*team-a* · *the-loop instance* `loop-a`" in status
    assert "*team-b* · *the-loop instance* `loop-b`" in status
    assert "did not answer" not in status and "room's memory alone" not in status
    assert ITEM_A in status


def test_status_doctor_and_metrics_show_each_instance_by_name(rig: Rig) -> None:
    rig.thread(ITEM_B, SECRET_B, "b-2026")
    rig.b.stop()  # B's control plane goes away after its event
    status = rig.ask("!theloop status", "instance team-b")
    (line_a,) = [line for line in status.splitlines() if "instance team-a:" in line]
    (line_b,) = [line for line in status.splitlines() if "instance team-b:" in line]
    assert "reachable" in line_a and "last event none yet" in line_a
    assert "UNREACHABLE" in line_b and "s ago" in line_b and "queue 0 to post" in line_b
    report = rig.ask("!theloop doctor", "deliveries")
    assert "instance team-b's deliveries: 1 of its last 1 accepted, signed right" in report
    assert "instance team-a's deliveries: no event of it has reached the webhook" in report
    metrics = rig.bot.process.metrics()
    assert 'theloop_instance_reachable{instance="team-a"} 1.0' in metrics
    assert 'theloop_instance_reachable{instance="team-b"} 0.0' in metrics
    assert SECRET_B not in status + report + metrics and "token-of-b" not in status + report
