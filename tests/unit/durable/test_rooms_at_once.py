"""Many rooms at once: work items side by side, Slack's limits kept as a whole.

Each work item's events go one at a time and in order while the others flow; the claim
loop outlives its storage going away; and the slots that share one Slack workspace meet a
tier's limit once, not each on its own: after a 429 a method goes one call at a time until
Slack takes one again.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.durable import worker as worker_module
from looproom.durable.outcome import Delivered, Outcome
from looproom.durable.queue import DurableQueue, Item
from looproom.durable.sqlite import StorageError
from looproom.durable.worker import Worker
from looproom.events import KNOWN_EVENTS, Event
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings as RoomSettings
from looproom.slack import responses as t
from looproom.slack.channel_lookup import find_channel
from looproom.slack.limits import MethodLimits, Tier
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, Limit
from tests.support.crash import sigkill_writer
from tests.support.wait import wait_for

TIMEOUT = 30.0  # a bound on waiting, never an expectation of speed
PLUGIN_DIR = Path(__file__).resolve().parents[3] / "plugins" / "theloop"
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


# -- order per work item under any interleaving of the slots ---------------------------

GROUPS = "abcd"
#: One step of the delivery slots, as the claim loop and the slots may interleave them:
#: a new event of a work item, a claim by a free slot, a slot's outcome (delivered, or a
#: retry after a wait), or time passing.
_step = st.one_of(
    st.tuples(st.just("put"), st.sampled_from(GROUPS)),
    st.tuples(st.just("claim"), st.just(0)),
    st.tuples(st.just("done"), st.integers(min_value=0, max_value=7)),
    st.tuples(st.just("retry"), st.integers(min_value=0, max_value=7)),
    st.tuples(st.just("tick"), st.sampled_from([0.5, 1.0, 5.0])),
)


class _Slots:
    """The queue as ``slots`` delivery slots see it, checking each claim against a model:
    an item is handed out only when every earlier item of its work item is delivered,
    and nothing due is held back that no earlier item holds back."""

    def __init__(self, queue: DurableQueue, clock: Clock, slots: int) -> None:
        self.queue, self.clock, self.slots = queue, clock, slots
        self.put: dict[str, list[str]] = {group: [] for group in GROUPS}
        self.delivered: dict[str, list[str]] = {group: [] for group in GROUPS}
        self.in_flight: list[Item] = []
        self.due: dict[str, float] = {}  # key -> when its retry is due

    def step(self, kind: str, arg: object) -> None:
        getattr(self, f"_{kind}")(arg)

    def _put(self, group: str) -> None:
        key = f"{group}-{len(self.put[group])}"
        assert self.queue.put(key, "{}", group=group)
        self.put[group].append(key)

    def _claim(self, _arg: object) -> None:
        if len(self.in_flight) >= self.slots:
            return
        item = self.queue.claim(self.clock())
        if item is None:
            assert self._claimable() == [], "a due item was held back"
            return
        assert item.key == self._next_of(item.group), "an item overtook an earlier one"
        assert item.group not in {i.group for i in self.in_flight}, "two of one item at once"
        self.in_flight.append(item)

    def _done(self, index: int) -> None:
        if self.in_flight:
            item = self.in_flight.pop(index % len(self.in_flight))
            self.queue.done(item.key)
            self.delivered[item.group].append(item.key)

    def _retry(self, index: int) -> None:
        if self.in_flight:
            item = self.in_flight.pop(index % len(self.in_flight))
            self.queue.retry(item.key, 2.0, "slack is down for this one")
            self.due[item.key] = self.clock() + 2.0

    def _tick(self, seconds: float) -> None:
        self.clock.now += seconds

    def _next_of(self, group: str) -> str | None:
        left = self.put[group][len(self.delivered[group]) :]
        return left[0] if left else None

    def _claimable(self) -> list[str]:
        """The work items whose next event no slot holds and no retry's wait holds back."""
        busy = {item.group for item in self.in_flight}
        return [
            key
            for group in GROUPS
            if group not in busy
            and (key := self._next_of(group)) is not None
            and self.due.get(key, 0.0) <= self.clock()
        ]

    def drain(self) -> None:
        while self.in_flight:
            self._done(0)
        self.clock.now += 60.0
        while (item := self.queue.claim(self.clock())) is not None:
            assert item.key == self._next_of(item.group)
            self.queue.done(item.key)
            self.delivered[item.group].append(item.key)


@settings(
    deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(_step, max_size=60), slots=st.integers(min_value=1, max_value=4))
def test_any_interleaving_of_the_slots_keeps_each_work_items_order_and_lets_the_others_flow(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, object]], slots: int
) -> None:
    clock = Clock()
    queue = DurableQueue(tmp_path_factory.mktemp("q") / "q.sqlite3", "inbox", clock=clock)
    model = _Slots(queue, clock, slots)
    try:
        for kind, arg in steps:
            model.step(kind, arg)
        model.drain()
    finally:
        queue.close()
    assert model.delivered == model.put  # every event, once, in the order it was put


# -- a crash with several work items in flight ------------------------------------------

#: A bot with four slots: work items a and b post and then hang, c and d hang before they
#: post; e flows. Each hang prints a number; the test kills it once all four hang.
_CRASHING_BOT = """
import os, sys, threading
sys.path.insert(0, sys.argv[3])
from looproom.durable.outcome import Delivered
from looproom.durable.queue import DurableQueue
from looproom.durable.worker import Worker

posts, lock, hangs = sys.argv[2], threading.Lock(), iter(range(1000))

def post(key):
    with lock, open(posts, "a") as slack:
        slack.write(key + "\\n")
        slack.flush()
        os.fsync(slack.fileno())

def deliver(item):
    if item.group in "ab":
        post(item.key)
    if item.group in "abcd":
        with lock:
            print(next(hangs), flush=True)
        threading.Event().wait()
    post(item.key)
    return Delivered()

Worker(DurableQueue(sys.argv[1], "inbox"), deliver, slots=5).start()
threading.Event().wait()
"""


def test_a_crash_with_several_work_items_in_flight_loses_none_and_posts_none_twice(
    tmp_path: Path,
) -> None:
    db, posts = tmp_path / "q.sqlite3", tmp_path / "slack.txt"
    posts.touch()
    queue = DurableQueue(db, "inbox")
    put = {group: [f"{group}-{n}" for n in range(3)] for group in "abcde"}
    for n in range(3):
        for group in "abcde":
            queue.put(f"{group}-{n}", "{}", group=group)
    queue.close()
    hung, code = sigkill_writer(_CRASHING_BOT, str(db), str(posts), str(PLUGIN_DIR), after=4)
    assert (len(hung), code) == (4, -9)

    restarted = DurableQueue(db, "inbox")
    flagged: list[str] = []

    def deliver(item: Item) -> Outcome:
        """Looks before it posts what a dead slot may have posted (as the outlet does)."""
        if item.maybe_delivered:
            flagged.append(item.key)
            if item.key in posts.read_text().split():
                return Delivered("found in the room")
        with posts.open("a") as slack:
            slack.write(item.key + "\n")
        return Delivered()

    worker = Worker(restarted, deliver, slots=3)
    worker.start()
    try:
        wait_for(lambda: restarted.depth() == 0, TIMEOUT, "every item delivered")
    finally:
        assert worker.stop() is True
        restarted.close()
    assert {"a-0", "b-0", "c-0", "d-0"} <= set(flagged)  # claimed by the dead: recovered
    posted = posts.read_text().split()
    assert sorted(posted) == sorted(key for keys in put.values() for key in keys)  # once each
    for group, keys in put.items():
        assert [key for key in posted if key.startswith(group)] == keys


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
            response = transport.update_message(ROOM, ts, text=f"edit {n}", patience=TIMEOUT)
            with lock:
                replies.append(response)

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
    calls = slack.calls_to(EDIT)
    assert [c.status for c in calls].count(200) == slots * each
    assert any(c.status == 429 for c in calls)  # Slack's burst was met
    # Only an edit on its way when Slack first said 429 was answered 429, one retried alone
    # to find out; after that every slot kept Slack's pace: no slot met the limit twice.
    per_slot = Counter(c.args["ts"] for c in calls if c.status == 429)
    assert max(per_slot.values()) == 1


# -- the parent's card waits its turn, on the cards' stage ----------------------------


def _outlet(slack: FakeSlack, limits: MethodLimits) -> SlackOutlet:
    """The room's outlet; a turn is never waited inline, so only patience waits."""
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport.beside(client, max_inline_wait=0.0)
    transport.limits = limits
    room = RoomSettings(channel="#the-loop", subscribe=KNOWN_EVENTS)
    return SlackOutlet(transport, BindingBook({}), room)


def _card(slack: FakeSlack) -> str:
    (parent,) = slack.top_level(ROOM)
    return str(parent["text"])


ITEM = "github:acme/api#7"
STARTED = Event("phase.started", ITEM, id="s", detail={"phase": "design", "node": "design"})
GATE = Event("phase-approval-pending", ITEM, id="g", detail={"node": "design-approval"})


def test_the_parents_redraw_waits_out_slacks_429_on_its_own_stage_and_then_draws(
    slack: FakeSlack,
) -> None:
    limits = MethodLimits()
    outlet = _outlet(slack, limits)
    outlet.deliver(STARTED, maybe_delivered=False)
    slack.fail(EDIT, "429", retry_after=1)
    assert isinstance(outlet.deliver(GATE, maybe_delivered=False), Delivered)
    outlet.cards.start()
    try:
        wait_for(lambda: "Waiting for your review of the design" in _card(slack), TIMEOUT, "card")
    finally:
        assert outlet.cards.stop() is True
    assert [c.status for c in slack.calls_to(EDIT)] == [429, 200]
    # The drawer answered 429 made the call that found out: no slot waits for one anymore.
    assert not limits.others_finding_out(EDIT)


def test_rooms_that_start_at_once_read_the_workspaces_listing_once(slack: FakeSlack) -> None:
    rooms = [slack.add_channel(f"room-{n:02d}") for n in range(12)]
    transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
    found: dict[str, str] = {}

    def slot(n: int) -> None:
        found[f"room-{n:02d}"] = find_channel(transport, f"#room-{n:02d}")[0]

    threads = [threading.Thread(target=slot, args=(n,)) for n in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT)
    assert [found[f"room-{n:02d}"] for n in range(12)] == rooms
    assert len(slack.calls_to("users.conversations")) == 1  # not one listing per room


def test_a_redraw_waiting_its_turn_stops_waiting_when_the_bot_stops(slack: FakeSlack) -> None:
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport.beside(client, max_inline_wait=0.0)
    transport.limits.hold(EDIT, 3600.0)  # Slack said: no edits for an hour
    answers: list = []
    slot = threading.Thread(
        target=lambda: answers.append(
            transport.update_message(ROOM, "1.0", text="card", patience=7200.0)
        )
    )
    slot.start()
    transport.close()
    slot.join(TIMEOUT)
    assert not slot.is_alive()
    assert [a.kind for a in answers] == [t.RATE_LIMITED]  # the queue's to retry, not lost
    assert slack.calls_to(EDIT) == []
