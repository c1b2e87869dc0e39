"""Events out to Slack, end to end: a real errbot with the real SlackV3 backend.

The bot runs as ``make run`` runs it, on Socket Mode against the loopback fake of Slack;
the-loop's real messages arrive signed over real HTTP. Shown here: one thread per work item
under one parent that is edited in place; an event the room did not subscribe to taken and
never posted; ``verbosity: quiet`` posting the lead and the link alone; the digest in the
section and in the notification text; 429 / 500 / ``ok:false`` recovered with nothing lost
and nothing posted twice; a bot killed with events queued and one in flight posts every
accepted event exactly once.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, StartBot, corpus, event_key
from tests.fakes.slack_api import FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [phase.started, phase.progress, phase.completed, phase-approval-pending,
              pr-review-pending, work-item-complete, comment.agent, session.awaiting_input,
              conflict-escalated]
  verbosity: normal
  maxChars: {max_chars}
  room: {{style: classic}}
"""
#: Pacing is about one post a second per channel: waits are sized for that, not for speed.
DELIVERY_TIMEOUT = 90.0


def metadata_keys(slack: FakeSlack) -> Counter[str]:
    """How many times each event key was posted in the room."""
    return Counter(key for message in slack.messages(LOOP) if (key := event_key(message)))


def wait_posted(slack: FakeSlack, keys: list[str]) -> Counter[str]:
    wait_for(
        lambda: set(keys) <= set(metadata_keys(slack)),
        DELIVERY_TIMEOUT,
        lambda: f"every event posted; missing {sorted(set(keys) - set(metadata_keys(slack)))}",
    )
    return metadata_keys(slack)


def parents(slack: FakeSlack) -> dict[str, dict[str, Any]]:
    """Work item → its parent message, for every parent in the room."""
    found = {}
    for message in slack.top_level(LOOP):
        payload = message.get("metadata", {}).get("event_payload", {})
        assert payload.get("kind") == "parent", f"a top-level message that is no parent: {message}"
        assert payload["workItem"] not in found, f"two parents for {payload['workItem']}"
        found[payload["workItem"]] = message
    return found


def wait_state(slack: FakeSlack, work_item: str, state: str) -> dict[str, Any]:
    """The work item's parent once it shows ``state`` (it is edited just after the post)."""
    wait_for(
        lambda: state in parents(slack)[work_item]["text"],
        DELIVERY_TIMEOUT,
        lambda: f"{state!r} in the parent, which says {parents(slack)[work_item]['text']!r}",
    )
    return parents(slack)[work_item]


def thread_keys(slack: FakeSlack, parent: dict[str, Any]) -> list[str]:
    return [m["metadata"]["event_payload"]["key"] for m in slack.thread(LOOP, parent["ts"])]


def parent_item(parent: dict[str, Any]) -> str:
    return parent["metadata"]["event_payload"]["workItem"]


def send_all(bot: SlackBot, events: list[dict[str, Any]]) -> list[str]:
    for event in events:
        status, answer = bot.send(event)
        assert status == 202, answer
    return [event["id"] for event in events]


def test_a_work_items_events_share_one_thread_under_a_parent_edited_in_place(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    bot = slack_bot(SETTINGS.format(max_chars=1500))
    item_260 = [corpus(s) for s in ("03", "04", "05", "06", "07")]
    item_188 = [corpus("18")]
    keys = send_all(bot, [*item_260[:3], *item_188, *item_260[3:], corpus("13")])
    posted = wait_posted(fake_slack, keys)
    assert set(posted.values()) == {1}
    found = parents(fake_slack)
    assert set(found) == {
        "github:MadaraUchiha-314/the-loop#260",
        "github:MadaraUchiha-314/the-loop#188",
    }
    parent = found["github:MadaraUchiha-314/the-loop#260"]
    assert thread_keys(fake_slack, parent) == [e["id"] for e in (*item_260, corpus("13"))]
    assert thread_keys(fake_slack, found["github:MadaraUchiha-314/the-loop#188"]) == [
        item_188[0]["id"]
    ]
    # Edited in place: the one parent now shows where the work item ended.
    parent = wait_state(fake_slack, "github:MadaraUchiha-314/the-loop#260", "🎉 Done")
    assert "edited" in parent
    link = "<https://github.com/MadaraUchiha-314/the-loop/issues/260|MadaraUchiha-314/the-loop#260>"
    assert link in parent["blocks"][0]["text"]["text"]
    updated = {call.args["ts"] for call in fake_slack.calls_to("chat.update")}
    assert updated <= {p["ts"] for p in found.values()}


def test_in_a_shared_channel_each_parent_names_and_links_its_own_work_item(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """Two work items in one shared channel, their events interleaved: a member scanning
    the channel tells them apart by each thread's parent, which names its own work item
    (``owner/repo#n``) linked to its own issue — in the card, its Open button and the
    notification text — and nothing of the other's."""
    bot = slack_bot(SETTINGS.format(max_chars=1500))
    events = [corpus("04"), corpus("18"), corpus("05")]
    wait_posted(fake_slack, send_all(bot, events))
    found = parents(fake_slack)
    assert len(found) == 2
    for number, other in ((260, 188), (188, 260)):
        item = f"github:MadaraUchiha-314/the-loop#{number}"
        parent, name = found[item], f"MadaraUchiha-314/the-loop#{number}"
        url = f"https://github.com/MadaraUchiha-314/the-loop/issues/{number}"
        assert parent["blocks"][0]["text"]["text"].startswith(f"*<{url}|{name}>*")
        assert parent["blocks"][-1]["elements"][0]["url"] == url
        assert parent["text"].startswith(f"{name} — ")
        assert f"#{other}" not in json.dumps(parent)
        mine = [e["id"] for e in events if e["workItem"] == item]
        assert thread_keys(fake_slack, parent) == mine


def test_the_digest_is_in_the_section_and_in_the_notification_text(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    bot = slack_bot(SETTINGS.format(max_chars=1200))
    # A long comment (the checklist's text without its marker: a checklist is drawn as boxes).
    long_text = corpus("20")["text"].replace("<!-- the-loop:phase-selection -->", "")
    checklist, ask = {**corpus("20"), "text": long_text}, corpus("15")
    hostile = {**corpus("12"), "id": "e2e-hostile", "text": "<!channel> look", "summary": "<!here>"}
    send_all(bot, [checklist, ask, hostile])
    wait_posted(fake_slack, [checklist["id"], ask["id"], hostile["id"]])
    (parent,) = parents(fake_slack).values()
    by_key = {
        m["metadata"]["event_payload"]["key"]: m for m in fake_slack.thread(LOOP, parent["ts"])
    }
    long_reply = by_key[checklist["id"]]
    section = long_reply["blocks"][1]["text"]["text"]
    assert len(checklist["text"]) > 1200 >= len(section)
    assert section in long_reply["text"]  # the notification text carries the digest too
    assert ask["summary"][:40] in json.dumps(by_key[ask["id"]]["blocks"], ensure_ascii=False)
    everything = json.dumps(fake_slack.messages(LOOP), ensure_ascii=False)
    assert "<!channel>" not in everything and "<!here>" not in everything


def test_an_event_the_room_did_not_subscribe_to_is_taken_and_never_posted(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """``decision-pending`` is in the-loop's catalog but not in ``slack.subscribe``: the
    webhook takes it (the-loop does not retry it), and nothing of it reaches the room — not
    before the subscribed events accepted after it, nor after them."""
    bot = slack_bot(SETTINGS.format(max_chars=1500))
    unsubscribed, started, progress = corpus("08"), corpus("03"), corpus("05")
    assert unsubscribed["eventType"] == "decision-pending"
    send_all(bot, [unsubscribed, started, progress])
    posted = wait_posted(fake_slack, [started["id"], progress["id"]])
    assert unsubscribed["id"] not in posted
    assert unsubscribed["id"] not in json.dumps(fake_slack.messages(LOOP))


def test_quiet_posts_the_lead_and_the_link_without_the_text(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """``verbosity: quiet``: the requirements gate reaches the room as its lead line and the
    link to its ticket; the requirements' text stays on the ticket."""
    bot = slack_bot(
        SETTINGS.format(max_chars=1500).replace("verbosity: normal", "verbosity: quiet")
    )
    gate = corpus("06")
    wait_posted(fake_slack, send_all(bot, [gate]))
    (parent,) = parents(fake_slack).values()
    (reply,) = [
        m
        for m in fake_slack.thread(LOOP, parent["ts"])
        if m["metadata"]["event_payload"]["key"] == gate["id"]
    ]
    shown = [b["text"]["text"] for b in reply["blocks"] if b["type"] == "section"]
    assert shown == ["📋 *The requirements are ready for your review*"]
    assert gate["url"] in json.dumps(reply["blocks"], ensure_ascii=False)


def test_429_500_and_refused_payloads_lose_nothing_and_double_nothing(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    bot = slack_bot(SETTINGS.format(max_chars=1500))
    events = [corpus(s) for s in ("03", "04", "18", "05", "06", "13")]
    refused = events[3]["id"]
    fake_slack.fail("chat.postMessage", "ok_false", error="invalid_blocks", key=refused)
    for kind, options in (
        ("429", {"retry_after": 3}),
        ("land_then_5xx", {}),
        ("5xx", {"status": 503}),
        ("disconnect", {}),
    ):
        fake_slack.fail("chat.postMessage", kind, **options)
    fake_slack.fail("chat.update", "ok_false", error="internal_error")
    keys = send_all(bot, events)
    posted = wait_posted(fake_slack, keys)
    assert posted == Counter({key: 1 for key in keys})
    found = parents(fake_slack)
    assert len(found) == 2
    (plain,) = [m for m in fake_slack.messages(LOOP) if "blocks" not in m]
    assert plain["metadata"]["event_payload"]["key"] == refused  # refused, then sent as text
    assert "now at requirements approval" in plain["text"]
    statuses = Counter(call.status for call in fake_slack.calls_to("chat.postMessage"))
    assert statuses[429] == 1 and statuses[500] == 1 and statuses[503] == 1
    wait_state(fake_slack, "github:MadaraUchiha-314/the-loop#260", "🎉 Done")


def test_a_killed_bot_posts_every_accepted_event_exactly_once_after_restart(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    bot = slack_bot(SETTINGS.format(max_chars=1500))
    first, *rest = (corpus(s) for s in ("03", "04", "05", "06", "07"))
    wait_posted(fake_slack, send_all(bot, [first]))
    # The next post lands in Slack but its answer never comes: the bot dies waiting for it.
    fake_slack.fail("chat.postMessage", "land_then_hang")
    in_flight = rest[0]["id"]
    send_all(bot, [rest[0]])
    wait_for(lambda: in_flight in metadata_keys(fake_slack), DELIVERY_TIMEOUT, "the post in flight")
    send_all(bot, rest[1:])  # accepted (202) while the worker is stuck: queued on disk
    bot.process.kill()
    fake_slack.release()
    bot.process.start(timeout=START_TIMEOUT)
    keys = [e["id"] for e in (first, *rest)]
    assert wait_posted(fake_slack, keys) == Counter({key: 1 for key in keys})
    (parent,) = parents(fake_slack).values()
    assert thread_keys(fake_slack, parent) == keys
    wait_state(fake_slack, parent_item(parent), "✅ Finished the requirements")


def test_several_deliveries_in_flight_at_a_kill_are_each_posted_once_after_restart(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    bot = slack_bot(SETTINGS.format(max_chars=1500))
    items = [f"github:MadaraUchiha-314/the-loop#{n}" for n in (260, 261, 262)]

    def of(item: str) -> list[dict[str, Any]]:
        number = item.rsplit("#", 1)[1]
        return [
            {**corpus(s), "workItem": item, "id": f"{number}-{s}"}
            for s in ("03", "04", "05", "06", "07")
        ]

    # Each work item's parent lands in Slack but its answer never comes: three deliveries,
    # side by side, are in flight when the bot dies.
    fake_slack.fail("chat.postMessage", "land_then_hang", times=3)
    send_all(bot, [of(item)[0] for item in items])
    wait_for(lambda: len(fake_slack.top_level(LOOP)) == 3, DELIVERY_TIMEOUT, "three parents")
    send_all(bot, [event for item in items for event in of(item)[1:]])  # queued behind them
    bot.process.kill()
    fake_slack.release()
    bot.process.start(timeout=START_TIMEOUT)
    keys = [event["id"] for item in items for event in of(item)]
    assert wait_posted(fake_slack, keys) == Counter({key: 1 for key in keys})
    found = parents(fake_slack)  # one parent each: the lost answers' parents were found
    assert set(found) == set(items)
    for item in items:
        assert thread_keys(fake_slack, found[item]) == [event["id"] for event in of(item)]
