"""Many rooms at once: work items side by side, Slack's limits kept as a whole.

Each work item's events go one at a time and in order while the others flow; the claim
loop outlives its storage going away; and the slots that share one Slack workspace meet a
tier's limit once, not each on its own: after a 429 a method goes one call at a time until
Slack takes one again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from slack_sdk import WebClient

from looproom.durable import worker as worker_module
from looproom.durable.outcome import Delivered, Outcome
from looproom.durable.queue import DurableQueue, Item
from looproom.durable.sqlite import StorageError
from looproom.durable.worker import Worker
from looproom.inbound.events import KNOWN_EVENTS, Event
from looproom.room.routing import RoomBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings
from looproom.slack.limits import MethodLimits, Tier
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, Limit
from tests.support.wait import wait_for

TIMEOUT = 30.0  # a bound on waiting, never an expectation of speed
ROOM = "C0LOOP0001"
EDIT = "chat.update"
T_ = TypeVar("T_")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _elsewhere(call: Callable[[], T_]) -> T_:
    """``call`` on another thread (another delivery slot), its answer."""
    answer: list[T_] = []
    slot = threading.Thread(target=lambda: answer.append(call()))
    slot.start()
    slot.join(TIMEOUT)
    return answer[0]


# -- the claim loop outlives its storage ----------------------------------------------


class _Outage:
    """A queue whose database is away for ``times`` looks at what is due next."""

    def __init__(self, queue: DurableQueue, times: int) -> None:
        self._queue, self.left = queue, times

    def next_due(self) -> float | None:
        if self.left > 0:
            self.left -= 1
            raise StorageError("q.sqlite3", OSError(5, "Input/output error"))
        return self._queue.next_due()

    def __getattr__(self, name: str) -> object:
        return getattr(self._queue, name)


def test_a_storage_outage_while_idle_costs_a_pause_not_the_claim_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "LOOP_ERROR_CAP", 0.01)  # pause briefly between tries
    queue = DurableQueue(tmp_path / "q.sqlite3", "inbox")
    away = _Outage(queue, times=3)
    delivered: list[str] = []

    def deliver(item: Item) -> Outcome:
        delivered.append(item.key)
        return Delivered()

    worker = Worker(away, deliver, slots=2)  # type: ignore[arg-type]
    worker.start()
    try:
        wait_for(lambda: away.left == 0, TIMEOUT, "the outage to pass")
        queue.put("after-the-outage", "{}", group="a")
        queue.wake()
        wait_for(lambda: delivered == ["after-the-outage"], TIMEOUT, "the item delivered")
        assert worker.alive
    finally:
        assert worker.stop() is True
        queue.close()


# -- Slack's limits: one call at a time after a 429 -----------------------------------


def test_after_a_429_only_the_call_finding_out_goes_until_slack_takes_one() -> None:
    clock = Clock()
    limits = MethodLimits({EDIT: Tier(per_minute=60, burst=10)}, clock=clock)
    limits.hold(EDIT, 5.0)  # this slot's edit was answered 429, Retry-After 5 s
    assert _elsewhere(lambda: limits.reserve(EDIT, most=60.0)) is None
    clock.now += 5
    # The hold is over, but another slot still waits while this one finds out ...
    assert _elsewhere(lambda: limits.reserve(EDIT, most=60.0)) is None
    assert _elsewhere(lambda: limits.wait(EDIT)) >= 1.0
    assert limits.reserve(EDIT, most=0.0) == 0.0
    assert _elsewhere(lambda: limits.reserve(EDIT, most=60.0)) is None
    limits.answered(EDIT, limited=False)  # ... until Slack takes a call.
    clock.now += 1
    assert _elsewhere(lambda: limits.reserve(EDIT, most=0.0)) == 0.0
    # The 429 spent the burst the bot assumed: the next turn is at the tier's pace.
    assert _elsewhere(lambda: limits.reserve(EDIT, most=0.0)) is None


def test_a_second_429_lets_the_next_call_alone_find_out() -> None:
    clock = Clock()
    limits = MethodLimits({EDIT: Tier(per_minute=60, burst=10)}, clock=clock)
    limits.hold(EDIT, 1.0)
    clock.now += 1
    assert limits.reserve(EDIT, most=0.0) == 0.0
    limits.hold(EDIT, 2.0)  # Slack says 429 again
    limits.answered(EDIT, limited=True)
    clock.now += 2
    first = threading.Event()
    taken: list[float | None] = []

    def slot() -> None:
        taken.append(limits.reserve(EDIT, most=0.0))
        first.set()

    finder = threading.Thread(target=slot)
    finder.start()
    finder.join(TIMEOUT)
    assert first.is_set() and taken == [0.0]  # the next call finds out ...
    assert limits.reserve(EDIT, most=60.0) is None  # ... alone


def test_a_call_on_its_way_before_the_429_does_not_end_the_one_at_a_time() -> None:
    clock = Clock()
    limits = MethodLimits({EDIT: Tier(per_minute=60, burst=10)}, clock=clock)
    assert limits.reserve(EDIT, most=0.0) == 0.0  # this slot's call leaves ...
    _elsewhere(lambda: limits.hold(EDIT, 3.0))  # ... another slot's is answered 429 ...
    limits.answered(EDIT, limited=False)  # ... and this one, sent before, lands
    clock.now += 3
    assert limits.reserve(EDIT, most=0.0) is None  # still one at a time


def test_a_hold_names_one_method_only() -> None:
    clock = Clock()
    limits = MethodLimits(clock=clock)
    limits.hold(EDIT, 30.0)
    for method in ("reactions.add", "conversations.replies", "chat.postMessage"):
        assert _elsewhere(lambda m=method: limits.reserve(m, most=0.0)) == 0.0, method


# -- the shared limits against a Slack that answers 429 to a tier's burst --------------


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        yield fake


def _patient_edits(transport: SlackTransport, slack: FakeSlack, slots: int, each: int) -> list:
    """``slots`` threads, each editing its own message ``each`` times, waiting their turn."""
    posted = [transport.post_message(ROOM, text=f"slot {n}").ts for n in range(slots)]
    replies: list = []
    lock = threading.Lock()

    def slot(ts: str) -> None:
        for n in range(each):
            reply = transport.update_message(ROOM, ts, text=f"edit {n}", patience=TIMEOUT)
            with lock:
                replies.append(reply)

    threads = [threading.Thread(target=slot, args=(ts,)) for ts in posted]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT * 2)
    return replies


def test_slots_that_meet_a_tiers_burst_meet_it_once_then_keep_its_pace(slack: FakeSlack) -> None:
    # Slack's burst is smaller than the bot assumes; its rate is what the bot assumes.
    slack.limits = {EDIT: Limit(per_minute=600, burst=3)}
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport.beside(client)
    transport.limits = MethodLimits({EDIT: Tier(per_minute=600, burst=50)})
    slots, each = 8, 3
    replies = _patient_edits(transport, slack, slots, each)
    assert len(replies) == slots * each and all(r.ok for r in replies)  # each edit waited
    statuses = [c.status for c in slack.calls_to(EDIT)]
    assert statuses.count(200) == slots * each
    # The edits on their way when Slack first said 429 were answered 429, at most one a
    # slot; once Slack took an edit again, the rest kept its pace: no 429 after that.
    first_429 = statuses.index(429)
    taken_again = statuses.index(200, first_429)
    assert statuses.count(429) <= slots
    assert 429 not in statuses[taken_again:]


# -- the parent's card waits its turn ---------------------------------------------------


def _outlet(slack: FakeSlack, limits: MethodLimits) -> SlackOutlet:
    """The room's outlet; a turn is never waited inline, so only patience waits."""
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport.beside(client, max_inline_wait=0.0)
    transport.limits = limits
    settings = Settings(channel="#the-loop", subscribe=KNOWN_EVENTS)
    return SlackOutlet(transport, RoomBook({}), settings)


def _card(slack: FakeSlack) -> str:
    (parent,) = slack.top_level(ROOM)
    return str(parent["text"])


ITEM = "github:acme/api#7"
STARTED = Event("phase.started", ITEM, id="s", detail={"phase": "design", "node": "design"})
GATE = Event("phase-approval-pending", ITEM, id="g", detail={"node": "design-approval"})


def test_the_parents_redraw_waits_for_the_edit_budget_rather_than_leave_the_card_stale(
    slack: FakeSlack,
) -> None:
    limits = MethodLimits({EDIT: Tier(per_minute=240, burst=1)})
    outlet = _outlet(slack, limits)
    assert isinstance(outlet.deliver(STARTED, maybe_delivered=False), Delivered)
    assert limits.reserve(EDIT, most=0.0) == 0.0  # another room spent the edit budget
    assert isinstance(outlet.deliver(GATE, maybe_delivered=False), Delivered)
    assert "Waiting for your review of the design" in _card(slack)
    assert [c.status for c in slack.calls_to(EDIT)] == [200]


def test_the_parents_redraw_waits_out_slacks_429_and_then_draws(slack: FakeSlack) -> None:
    outlet = _outlet(slack, MethodLimits())
    outlet.deliver(STARTED, maybe_delivered=False)
    slack.fail(EDIT, "429", retry_after=1)
    assert isinstance(outlet.deliver(GATE, maybe_delivered=False), Delivered)
    assert "Waiting for your review of the design" in _card(slack)
    assert [c.status for c in slack.calls_to(EDIT)] == [429, 200]
