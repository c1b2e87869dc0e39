"""The outlets: rooms, threads, the parent's state, and every failure path; the decision
controls on the room's messages and the room's memory of them.

The Slack outlet runs against the loopback fake of Slack through the real transport.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient

from looproom.decide import judging, presses
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.verdict import ADMITTED
from looproom.durable.outcome import Delivered, Failed, RetryLater
from looproom.events import KNOWN_EVENTS, Event
from looproom.room import buttons
from looproom.room.memory import Memory
from looproom.room.outlets import PlainOutlet
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, BOT_USER, FakeSlack, block_errors
from tests.support.corpus import MESSAGES

LOOP = "C0LOOP0001"
ITEM = "github:acme/api#7"
URL = "https://github.com/acme/api/issues/7#issuecomment-1"

ALICE = "U0ALICE01"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Bot:
    """One outlet over the fake, with storage that outlives it (a restart keeps the store)."""

    def __init__(
        self, slack: FakeSlack, settings: Settings, store: dict[str, Any], **outlet: Any
    ) -> None:
        self.clock = Clock()
        client = WebClient(token=BOT_TOKEN, base_url=slack.url)
        self.transport = SlackTransport.beside(client, pacer=Pacer(clock=self.clock))
        self.book = BindingBook(store)
        self.outlet = SlackOutlet(self.transport, self.book, settings, **outlet)

    def deliver(self, event: Event, *, maybe_delivered: bool = False) -> Any:
        """Deliver ``event``, then let the cards' stage draw the parent it left owed."""
        self.clock.now += 1.0  # one event a second: pacing only matters where a test says so
        outcome = self.outlet.deliver(event, maybe_delivered=maybe_delivered)
        self.outlet.cards.draw_due()
        return outcome


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop"), ("C0APILOOP1", "api-loop")]) as fake:
        yield fake


@pytest.fixture
def settings() -> Settings:
    return Settings(channel="#the-loop", subscribe=KNOWN_EVENTS)


@pytest.fixture
def store() -> dict[str, Any]:
    return {}


@pytest.fixture
def bot(slack: FakeSlack, settings: Settings, store: dict[str, Any]) -> Bot:
    return Bot(slack, settings, store)


def event(n: int, event_type: str = "phase.progress", item: str = ITEM, **extra: Any) -> Event:
    detail = {"phase": "design", "node": f"step-{n}"}
    return Event(
        event_type, item, id=f"evt-{n}", text=f"Step {n} done.", url=URL, detail=detail, **extra
    )


def test_one_work_item_is_one_thread_under_one_parent(slack: FakeSlack, bot: Bot) -> None:
    for n in range(3):
        assert isinstance(bot.deliver(event(n)), Delivered)
    (parent,) = slack.top_level(LOOP)
    assert (
        "<https://github.com/acme/api/issues/7|acme/api#7>" in parent["blocks"][0]["text"]["text"]
    )
    replies = slack.thread(LOOP, parent["ts"])
    assert [r["blocks"][1]["text"]["text"] for r in replies] == [
        "Step 0 done.",
        "Step 1 done.",
        "Step 2 done.",
    ]
    assert [r["metadata"]["event_payload"]["key"] for r in replies] == ["evt-0", "evt-1", "evt-2"]


def test_the_parent_is_edited_to_the_latest_state(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1, "phase.started"))
    gate = Event("phase-approval-pending", ITEM, id="gate", detail={"node": "design-approval"})
    bot.deliver(gate)
    (parent,) = slack.top_level(LOOP)
    assert "📋 Waiting for your review of the design" in parent["text"]
    assert "edited" in parent
    bot.deliver(Event("work-item-complete", ITEM, id="done", detail={"node": "complete"}))
    assert "🎉 Done" in slack.top_level(LOOP)[0]["text"]


def test_a_comment_leaves_the_parent_alone(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1, "phase.started"))
    updates = len(slack.calls_to("chat.update"))
    bot.deliver(Event("comment.human", ITEM, id="c1", text="Looks good"))
    assert len(slack.calls_to("chat.update")) == updates
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 2


def test_two_work_items_get_two_parents(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1))
    bot.deliver(event(2, item="github:acme/api#8"))
    bot.deliver(event(3))
    first, second = slack.top_level(LOOP)
    assert len(slack.thread(LOOP, first["ts"])) == 2
    assert len(slack.thread(LOOP, second["ts"])) == 1


def test_unsubscribed_events_are_consumed_without_a_post(slack: FakeSlack, store: dict) -> None:
    quiet = Bot(slack, Settings(channel="#the-loop"), store)  # the-loop's default: the ask only
    assert quiet.deliver(event(1)) == Delivered("not subscribed")
    assert slack.calls_to("chat.postMessage") == []
    assert isinstance(quiet.deliver(event(2, "session.awaiting_input")), Delivered)


def test_the_rooms_map_and_an_admin_binding_pick_the_room(
    slack: FakeSlack, store: dict[str, Any]
) -> None:
    settings = Settings(
        channel="#the-loop", subscribe=KNOWN_EVENTS, rooms=(("acme/*", "#api-loop"),)
    )
    bot = Bot(slack, settings, store)
    bot.deliver(event(1))
    bot.deliver(event(2, item="github:other/repo#1"))
    assert len(slack.top_level("C0APILOOP1")) == 1
    assert len(slack.top_level(LOOP)) == 1
    bot.book.bind_room(ITEM, LOOP)
    bot.deliver(event(3))  # a room of its own: a new conversation there
    assert len(slack.top_level(LOOP)) == 2
    bot.deliver(event(4, item="github:acme/web#2"))
    bot.deliver(event(5, item="github:other/repo#1"))
    # Both names resolved from one listing of the bot's own rooms, then remembered.
    assert len(slack.calls_to("users.conversations")) == 1


def test_no_room_at_all_parks_the_event_with_a_reason(slack: FakeSlack, store: dict) -> None:
    bot = Bot(slack, Settings(subscribe=KNOWN_EVENTS), store)
    outcome = bot.deliver(event(1))
    assert isinstance(outcome, Failed)
    assert "slack.channel" in outcome.reason


def test_an_unknown_room_parks_the_event_and_says_what_to_do(slack: FakeSlack, store: dict) -> None:
    bot = Bot(slack, Settings(channel="#nowhere", subscribe=KNOWN_EVENTS), store)
    outcome = bot.deliver(event(1))
    assert isinstance(outcome, Failed)
    assert "channel_not_found" in outcome.reason and "invite the bot" in outcome.reason


def test_posts_are_paced_per_channel_by_the_queue_not_by_sleeping(
    slack: FakeSlack, bot: Bot
) -> None:
    outcomes = [bot.outlet.deliver(event(n), maybe_delivered=False) for n in range(3)]
    # A burst of three posts (parent + two replies), then the third event must wait.
    assert [type(o) for o in outcomes[:2]] == [Delivered, Delivered]
    paced = outcomes[2]
    assert isinstance(paced, RetryLater) and "pacing" in paced.reason
    assert paced.routine  # the plan, not a failure: not a warning per message
    assert paced.after is not None and 0 < paced.after <= 1.0
    assert isinstance(
        bot.outlet.deliver(event(9, item="github:acme/api#9"), maybe_delivered=False), RetryLater
    )
    assert len(slack.calls_to("chat.postMessage")) == 3
    bot.clock.now += paced.after
    assert isinstance(bot.outlet.deliver(event(2), maybe_delivered=False), Delivered)
    assert len(slack.calls_to("chat.postMessage")) == 4


def test_a_429_is_waited_out_at_the_queue_and_posts_once(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "429", retry_after=30)
    outcome = bot.deliver(event(2))
    assert outcome == RetryLater("posting the event: chat.postMessage ratelimited", after=30.0)
    held = bot.outlet.deliver(event(2), maybe_delivered=False)
    assert isinstance(held, RetryLater) and held.after is not None and held.after > 25
    bot.clock.now += 30
    assert isinstance(bot.deliver(event(2)), Delivered)
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 2


def test_a_post_that_landed_behind_a_500_is_not_posted_twice(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "land_then_5xx")
    assert isinstance(bot.deliver(event(2)), RetryLater)
    outcome = bot.deliver(event(2))  # the queue's retry, not flagged: the outlet remembers
    assert isinstance(outcome, Delivered) and "already" in outcome.detail
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 2


def test_a_500_that_did_not_land_is_posted_on_the_retry(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "5xx")
    assert isinstance(bot.deliver(event(2)), RetryLater)
    assert isinstance(bot.deliver(event(2)), Delivered)
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 2


def test_an_event_in_flight_at_a_crash_is_found_not_reposted(
    slack: FakeSlack, settings: Settings, store: dict[str, Any]
) -> None:
    Bot(slack, settings, store).deliver(event(1))
    restarted = Bot(slack, settings, store)
    outcome = restarted.deliver(event(1), maybe_delivered=True)
    assert isinstance(outcome, Delivered) and "already" in outcome.detail
    assert len(slack.messages(LOOP)) == 2  # the parent and the one reply


def test_an_event_in_flight_that_never_landed_is_posted_after_the_crash(
    slack: FakeSlack, bot: Bot
) -> None:
    bot.deliver(event(1))
    assert isinstance(bot.deliver(event(2), maybe_delivered=True), Delivered)
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 2


def test_a_parent_posted_just_before_a_crash_is_adopted_not_doubled(
    slack: FakeSlack, settings: Settings
) -> None:
    before: dict[str, Any] = {}
    Bot(slack, settings, before).deliver(event(1))
    lost_binding = {"rooms.channel_ids": before["rooms.channel_ids"]}  # the thread never stored
    restarted = Bot(slack, settings, lost_binding)
    assert isinstance(restarted.deliver(event(2), maybe_delivered=True), Delivered)
    (parent,) = slack.top_level(LOOP)
    assert len(slack.thread(LOOP, parent["ts"])) == 2


def test_a_refused_payload_is_retried_once_as_plain_text(
    slack: FakeSlack, bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "ok_false", error="invalid_blocks")
    outcome = bot.deliver(event(2))
    assert isinstance(outcome, Delivered)
    last = slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])[-1]
    assert "blocks" not in last and "Step 2 done." in last["text"]
    assert last["metadata"]["event_payload"]["key"] == "evt-2"
    assert "invalid_blocks" in caplog.text


def test_a_payload_refused_twice_is_parked_with_both_reasons(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "ok_false", error="invalid_blocks")
    slack.fail("chat.postMessage", "ok_false", error="msg_too_long")
    outcome = bot.deliver(event(2))
    assert isinstance(outcome, Failed)
    assert "invalid_blocks" in outcome.reason and "msg_too_long" in outcome.reason
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 1


def test_a_failing_parent_update_never_makes_new_parents(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1, "phase.started"))
    slack.fail("chat.update", "ok_false", error="internal_error", times=2)
    for n, kind in ((2, "phase-approval-pending"), (3, "pr-review-pending")):
        assert isinstance(bot.deliver(event(n, kind)), Delivered)
    (parent,) = slack.top_level(LOOP)
    assert len(slack.thread(LOOP, parent["ts"])) == 3
    assert "Working" in parent["text"]  # stale, but still the one parent
    bot.deliver(event(4, "work-item-complete"))  # Slack answers updates again: caught up
    (parent,) = slack.top_level(LOOP)
    assert "🎉 Done" in parent["text"]
    assert len(slack.thread(LOOP, parent["ts"])) == 4


def test_a_deleted_parent_is_replaced_once(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1, "phase.started"))
    parent_ts = slack.top_level(LOOP)[0]["ts"]
    WebClient(token=BOT_TOKEN, base_url=slack.url).chat_delete(channel=LOOP, ts=parent_ts)
    bot.deliver(event(2, "phase-approval-pending"))  # its update finds the parent gone
    bot.deliver(event(3, "phase.progress"))
    bot.deliver(event(4, "phase.progress"))
    (parent,) = slack.top_level(LOOP)
    assert parent["ts"] != parent_ts
    assert len(slack.thread(LOOP, parent["ts"])) == 2


def test_a_bad_token_keeps_the_event_and_checks_again_later(
    slack: FakeSlack, bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "ok_false", error="token_revoked")
    outcome = bot.deliver(event(2))
    assert isinstance(outcome, RetryLater) and outcome.after == 60.0
    assert "token_revoked" in caplog.text and BOT_TOKEN not in caplog.text


def test_slack_down_is_a_retry_and_nothing_is_lost(slack: FakeSlack, bot: Bot) -> None:
    bot.deliver(event(1))
    slack.refuse()
    assert isinstance(bot.deliver(event(2)), RetryLater)
    slack.start()
    assert isinstance(bot.deliver(event(2)), Delivered)
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 2


def test_a_failed_lookup_after_a_crash_waits_rather_than_guessing(
    slack: FakeSlack, bot: Bot
) -> None:
    bot.deliver(event(1))
    slack.fail("conversations.replies", "429", retry_after=5)
    outcome = bot.deliver(event(2), maybe_delivered=True)
    assert isinstance(outcome, RetryLater) and outcome.after == 5.0
    assert len(slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])) == 1  # evt-2 not posted blind


def test_the_slack_message_shows_the_digest_and_the_notification_carries_it(
    slack: FakeSlack, bot: Bot
) -> None:
    long_text = "## Plan\n\n" + "\n".join(f"- step {n}: " + "words " * 30 for n in range(60))
    long_text += "\n\nShall I go ahead?"
    bot.deliver(Event("session.awaiting_input", ITEM, id="ask", text=long_text, url=URL))
    reply = slack.thread(LOOP, slack.top_level(LOOP)[0]["ts"])[0]
    section = reply["blocks"][1]["text"]["text"]
    assert len(section) <= 1500 < len(long_text)
    assert section in reply["text"]
    assert "Shall I go ahead?" in section


# -- non-Slack backends ---------------------------------------------------------------------


def test_plain_backends_get_the_same_events_as_text(settings: Settings) -> None:
    sent: list[tuple[str | None, str, str | None]] = []
    outlet = PlainOutlet(lambda *args: sent.append(args), BindingBook({}), settings)
    assert isinstance(outlet.deliver(event(1), maybe_delivered=False), Delivered)
    ((room, text, thread),) = sent
    assert (room, thread) == ("#the-loop", ITEM)
    assert "Step 1 done." in text and "acme/api#7" in text


def test_plain_backends_without_a_room_send_to_none(settings: Settings) -> None:
    sent: list[Any] = []
    outlet = PlainOutlet(
        lambda *args: sent.append(args), BindingBook({}), Settings(subscribe=KNOWN_EVENTS)
    )
    outlet.deliver(event(1), maybe_delivered=False)
    assert sent[0][0] is None


def test_a_plain_backend_failure_is_a_retry_and_filters_apply(settings: Settings) -> None:
    def broken(*_: Any) -> None:
        raise ConnectionError("backend down")

    outlet = PlainOutlet(broken, BindingBook({}), settings)
    outcome = outlet.deliver(event(1), maybe_delivered=False)
    assert isinstance(outcome, RetryLater) and "backend down" in outcome.reason
    quiet = PlainOutlet(broken, BindingBook({}), Settings(channel="#the-loop"))
    assert quiet.deliver(event(1), maybe_delivered=False) == Delivered("not subscribed")


def test_logs_name_the_event_not_its_text(
    slack: FakeSlack, bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bot.deliver(event(1))
    slack.fail("chat.postMessage", "ok_false", error="invalid_blocks")
    bot.deliver(Event("phase.progress", ITEM, id="evt-secret", text="s3cr3t-words", url=URL))
    assert "evt-secret" in caplog.text and "s3cr3t-words" not in caplog.text


# -- the decision controls and the room's memory ---------------------------------------------


def corpus(name: str) -> Event:
    raw = json.loads(next(MESSAGES.glob(f"{name}-*.json")).read_text("utf-8"))
    raw.pop("origin", None)
    return Event.from_wire({**raw, "workItem": ITEM, "id": f"id-{name}"})


def _actions(message: dict[str, Any]) -> list[str]:
    blocks = message.get("blocks") or []
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def _posted(slack: FakeSlack) -> tuple[dict[str, Any], dict[str, Any]]:
    """The work item's parent and the one event message under it."""
    (parent,) = slack.top_level(LOOP)
    (posted,) = slack.thread(LOOP, parent["ts"])
    return parent, posted


def _press(message: dict[str, Any], action_id: str) -> Any:
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": LOOP},
        "message": message,
        "actions": [{"action_id": action_id, "value": "approve"}],
    }
    press = presses.read(payload)
    assert press is not None
    return press


def test_the_gate_message_gets_its_buttons_and_is_remembered_where_it_landed(
    slack: FakeSlack, settings: Settings, store: dict[str, Any]
) -> None:
    memory = Memory({})
    bot = Bot(slack, settings, store, observer=memory, interactive=True)
    assert isinstance(bot.deliver(corpus("06")), Delivered)
    parent, posted = _posted(slack)
    assert not {buttons.APPROVE, buttons.CHANGES} & set(_actions(parent))
    # Each control once: the Open link is not drawn twice.
    assert _actions(posted) == [buttons.OPEN, buttons.APPROVE, buttons.CHANGES]
    assert block_errors(posted["blocks"]) == []
    gate = memory.get(ITEM).gate
    assert gate is not None and (gate.channel, gate.ts, gate.thread) == (
        LOOP,
        posted["ts"],
        parent["ts"],
    )
    assert memory.locate(LOOP, posted["ts"]) == ITEM and memory.locate(LOOP, parent["ts"]) == ITEM


def test_without_interactivity_no_answer_buttons_are_drawn(
    slack: FakeSlack, settings: Settings, store: dict[str, Any]
) -> None:
    Bot(slack, settings, store, observer=Memory({})).deliver(corpus("06"))
    assert _actions(_posted(slack)[1]) == [buttons.OPEN]


def test_the_checklist_message_keeps_its_link_and_gets_its_boxes_once(
    slack: FakeSlack, settings: Settings, store: dict[str, Any]
) -> None:
    Bot(slack, settings, store, interactive=True).deliver(corpus("01"))
    actions = _actions(_posted(slack)[1])
    assert actions[0] == buttons.OPEN and actions[-1] == buttons.EXECUTE
    assert actions.count(buttons.OPEN) == 1 and actions.count(buttons.EXECUTE) == 1
    assert f"{buttons.PHASES}:0" in actions
    assert block_errors(_posted(slack)[1]["blocks"]) == []


def test_an_event_not_delivered_is_not_remembered(
    slack: FakeSlack, settings: Settings, store: dict[str, Any]
) -> None:
    memory = Memory({})
    bot = Bot(slack, settings, store, observer=memory, interactive=True)
    gate = corpus("06")
    slack.fail("chat.postMessage", "429", retry_after=30, key=gate.delivery_key)
    assert isinstance(bot.deliver(gate), RetryLater)
    assert memory.get(ITEM).gate is None


@pytest.mark.parametrize("answer_lost", (False, True), ids=("died-after-post", "answer-lost"))
def test_a_message_found_after_a_restart_is_remembered_so_a_press_on_it_counts(
    slack: FakeSlack, settings: Settings, store: dict[str, Any], answer_lost: bool
) -> None:
    gate = corpus("06")
    if answer_lost:  # the post landed, Slack's answer did not: the memory never learnt it
        slack.fail("chat.postMessage", "land_then_5xx", key=gate.delivery_key)
    Bot(slack, settings, store, observer=Memory(store), interactive=True).deliver(gate)
    restarted = Bot(slack, settings, store, observer=Memory(store), interactive=True)
    outcome = restarted.deliver(gate, maybe_delivered=True)
    assert isinstance(outcome, Delivered) and "already" in outcome.detail
    _parent, posted = _posted(slack)  # found, not posted again
    memory = Memory(store)
    assert memory.locate(LOOP, posted["ts"]) == ITEM
    verdict = judging.judge_press(
        _press(posted, buttons.APPROVE),
        memory.locate,
        memory.get,
        AccessPolicy(BOT_USER, frozenset({ALICE})),
        "2024-01-01T00:00:00Z",
        bound=Bound(memory.knows).refusal,
    )
    assert verdict.status == ADMITTED, verdict.text


def test_a_delivery_that_did_not_post_still_teaches_the_memory(settings: Settings) -> None:
    memory = Memory({})
    outlet = PlainOutlet(lambda *_: None, BindingBook({}), settings, observer=memory)
    assert isinstance(outlet.deliver(corpus("15"), maybe_delivered=False), Delivered)
    ask = memory.get(ITEM).ask
    assert ask is not None and ask.default == "Option 1 is fine" and ask.ts == ""


def test_an_unsubscribed_event_is_not_posted_but_the_memory_learns_it(
    slack: FakeSlack, store: dict[str, Any]
) -> None:
    memory = Memory({})
    quiet = Settings(channel="#the-loop")  # the-loop's default: only session.awaiting_input
    bot = Bot(slack, quiet, store, observer=memory, interactive=True)
    assert bot.deliver(corpus("06")) == Delivered("not subscribed")
    assert slack.messages(LOOP) == []
    gate = memory.get(ITEM).gate
    assert gate is not None and gate.ts == ""
