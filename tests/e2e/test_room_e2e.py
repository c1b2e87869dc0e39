"""The room's delivery policy end to end: a real errbot on SlackV3 over the loopback fake
of Slack, a whole work item's timeline sent signed over HTTP.

Agentic (the default): each gate and question is posted exactly once with its controls,
a phase's progress and completion edit its one message in place, and nothing is posted
for the collapsed events (the gate re-sent, the mirrored "ready for review" comments, the
tmux announcement, the terminal node's lifecycle). ``!theloop why`` answers in Slack which
rule took an event. Classic: every subscribed event is posted, as before.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, SlackBot, StartBot, event_key
from tests.fakes.slack_api import FakeSlack
from tests.support import timeline
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [phase.started, phase.progress, phase.completed, phase-approval-pending,
              pr-review-pending, work-item-complete, work-item.closed, comment.agent,
              session.awaiting_input]
  authorizedUsers: [U0ALICE01]
{style}
"""
#: About one post a second per channel, and the edits between them.
TIMEOUT = 180.0
ALICE, ALICE_DM = "U0ALICE01", "D0ALICE01"
ASKED = ("the phase selection", "a gate", "a gate", "a question", "a gate")
COLLAPSED = (
    "tl-selection-started",
    "tl-requirements-ready",
    "tl-requirements-gate-again",
    "tl-design-ready",
    "tl-tmux",
    "tl-pr-ready",
    "tl-complete-started",
    "tl-complete-done",
)


def send_timeline(bot: SlackBot) -> None:
    for event in timeline.work_item():
        status, answer = bot.send(event)
        assert status == 202, answer


def posted_keys(slack: FakeSlack) -> Counter[str]:
    """How many times each event was posted (edits carry the key of what they now show)."""
    return Counter(key for c in slack.calls_to("chat.postMessage") if (key := event_key(c.args)))


def parent(slack: FakeSlack) -> dict[str, Any]:
    (found,) = slack.top_level(LOOP)
    return found


def wait_closed(slack: FakeSlack) -> None:
    wait_for(
        lambda: slack.top_level(LOOP) and "🎉 Closed" in parent(slack)["text"],
        TIMEOUT,
        lambda: f"the parent to say closed; it says {slack.top_level(LOOP)}",
    )


def test_agentic_posts_each_question_once_edits_progress_and_drops_the_collapsed(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    fake_slack.echo_posts = True
    bot = slack_bot(SETTINGS.format(style=""))
    send_timeline(bot)
    wait_closed(fake_slack)
    posted = posted_keys(fake_slack)
    for gate in timeline.GATES:
        assert posted[gate] == 1, f"{gate} posted {posted[gate]} times"
    assert not set(COLLAPSED) & set(posted), set(COLLAPSED) & set(posted)
    posts = [c.args for c in fake_slack.calls_to("chat.postMessage")]
    events = [p for p in posts if not p["text"].startswith("🔔")]
    assert len(events) == 12  # parent + 11 of 32 events
    # Each ask (the phase selection, three gates, a question) named its member in the thread.
    assert [p["text"] for p in posts if p not in events] == [
        f"🔔 <@{ALICE}> — {what} here waits on you." for what in ASKED
    ]
    thread = fake_slack.thread(LOOP, parent(fake_slack)["ts"])
    by_key = {event_key(m): m for m in thread}
    for gate in ("tl-requirements-gate", "tl-design-gate", "tl-pr-gate", "tl-checklist"):
        assert any(b["type"] == "actions" for b in by_key[gate]["blocks"]), gate
    # Progress and completion edited the phase's message in place.
    finished = by_key["tl-requirements-done"]
    assert "Finished the requirements" in finished["text"] and "edited" in finished
    replies = {m["ts"] for m in thread if m["ts"] != parent(fake_slack)["ts"]}
    edited = {c.args["ts"] for c in fake_slack.calls_to("chat.update")}
    assert edited & replies, "no reply was edited in place"
    assert "phase-approval-pending" not in str([m.get("text") for m in thread])

    answer = ask(fake_slack, f"!theloop why {timeline.ITEM}")
    assert "(gate-collapse)" in answer and "(operator-docs)" in answer and "(endgame)" in answer


def test_classic_posts_every_event(slack_bot: StartBot, fake_slack: FakeSlack) -> None:
    bot = slack_bot(SETTINGS.format(style="  room: {style: classic}"))
    send_timeline(bot)
    wait_closed(fake_slack)
    posted = posted_keys(fake_slack)
    assert posted == Counter(e["id"] for e in timeline.work_item())
    # The voice: each reply leads with one emoji and a line said as a colleague says it,
    # never the machine header the-loop's events carry ("the-loop: issue-260 is at …").
    replies = [m for m in fake_slack.thread(LOOP, parent(fake_slack)["ts"]) if event_key(m)]
    assert len(replies) == len(timeline.work_item())
    for reply in replies:
        assert not reply["text"][0].isascii(), reply["text"]
    said = " ".join(str(m) for m in fake_slack.messages(LOOP))
    assert "the-loop: issue-260" not in said and "(phase-approval-pending)" not in said


def ask(slack: FakeSlack, command: str) -> str:
    """Say ``command`` to the bot in a DM; its answer."""
    dm = slack.channel_id(ALICE_DM) or slack.add_channel("alice-dm", ALICE_DM)
    before = len(slack.messages(dm))
    message = {"type": "message", "channel_type": "im", "user": ALICE, "text": command}
    event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": "1800000000.2"}}
    assert slack.push_envelope(event) is not None, "the bot did not ack the command"

    def answer() -> str:
        return "\n".join(str(m.get("text") or "") for m in slack.messages(dm)[before:])

    return wait_for(answer, TIMEOUT, "the bot's answer")
