"""The room's books at their default bounds: exactly the bound kept, one more forgotten or
refused as the docs say.

Every figure below is the one `docs/rooms.md` ("Bindings: where they live, how many"),
`docs/decisions.md` (the rosters) or `docs/admin.md` (``!theloop why``) gives a user — never
read from the module under test. Each book is built with its defaults (no cap passed in);
where filling one call by call would be slow the store's state is built directly.
"""

from __future__ import annotations

from typing import Any

from looproom.room.delivery_log import DeliveryLog, Why
from looproom.room.memory import Memory
from looproom.room.policy import Told
from looproom.room.roster import Roster
from looproom.room.routing import BindingBook, ThreadBinding

CHANNEL = "C0LOOP0001"


def _item(n: int) -> str:
    return f"github:acme/api#{n}"


# -- thread bindings: 200, the least recently used dropped ---------------------------------


def test_two_hundred_thread_bindings_are_all_kept() -> None:
    book = BindingBook({})
    for n in range(200):
        book.remember(ThreadBinding(_item(n), CHANNEL, f"{n}.0"))
    assert book.thread_count() == 200
    assert all(book.binding(_item(n), CHANNEL) is not None for n in range(200))


def test_the_two_hundred_and_first_thread_binding_drops_the_least_recently_used() -> None:
    book = BindingBook({})
    for n in range(200):
        book.remember(ThreadBinding(_item(n), CHANNEL, f"{n}.0"))
    assert book.thread(_item(0), CHANNEL) is not None  # used: #1 is now the oldest
    book.remember(ThreadBinding(_item(200), CHANNEL, "200.0"))
    assert book.thread_count() == 200
    assert book.binding(_item(1), CHANNEL) is None
    assert book.binding(_item(0), CHANNEL) is not None
    assert book.binding(_item(200), CHANNEL) is not None


# -- room name → id: 500, the oldest forgotten ----------------------------------------------


def test_five_hundred_room_ids_are_remembered_and_a_five_hundred_and_first_forgets_the_oldest() -> (
    None
):
    book = BindingBook({})
    for n in range(500):
        book.learn_channel_id(f"#room-{n}", f"C{n:09d}")
    assert all(book.channel_id(f"room-{n}") == f"C{n:09d}" for n in range(500))
    book.learn_channel_id("#room-500", "C000000500")
    assert book.channel_id("room-0") == ""  # looked up again when needed
    assert book.channel_id("room-1") == "C000000001"
    assert book.channel_id("room-500") == "C000000500"


# -- posts whose outcome is unknown: 1000, the oldest forgotten ----------------------------


def test_a_thousand_unsure_posts_are_remembered_and_a_thousand_and_first_forgets_the_oldest() -> (
    None
):
    book = BindingBook({})
    for n in range(1000):
        book.mark_uncertain(f"evt-{n}")
    assert all(book.is_uncertain(f"evt-{n}") for n in range(1000))
    book.mark_uncertain("evt-1000")
    assert not book.is_uncertain("evt-0")
    assert book.is_uncertain("evt-1") and book.is_uncertain("evt-1000")


# -- rosters: 500 work items, the oldest goes (docs/decisions.md) --------------------------


def test_five_hundred_rosters_are_kept_and_a_five_hundred_and_first_takes_the_oldests_rights() -> (
    None
):
    roster = Roster({})
    for n in range(500):
        roster.add(_item(n), ["U0PERSON01"])
    assert len(roster.snapshot()) == 500
    roster.add(_item(500), ["U0PERSON01"])
    kept = roster.snapshot()
    assert len(kept) == 500
    assert _item(0) not in kept  # only rights taken away, never given
    assert kept[_item(1)] == frozenset({"U0PERSON01"})
    assert kept[_item(500)] == frozenset({"U0PERSON01"})


# -- the delivery policy's memory: 500 work items, 20 decisions each -----------------------


def test_the_room_remembers_what_it_told_500_work_items_and_forgets_the_oldest_past_it() -> None:
    log = DeliveryLog({})
    for n in range(500):
        log.put(_item(n), Told(done=f"{n}.0"))
    assert all(log.get(_item(n)) == Told(done=f"{n}.0") for n in range(500))
    log.put(_item(500), Told(done="500.0"))
    assert log.get(_item(0)) == Told()  # forgotten: its room hears the next events in full
    assert log.get(_item(1)) == Told(done="1.0")
    assert log.get(_item(500)) == Told(done="500.0")


def _why(n: int) -> Why:
    return Why(at=float(n), event_type="comment.agent", node=f"n{n}", action="post", rule="post")


def test_why_keeps_twenty_decisions_per_work_item_and_the_twenty_first_pushes_out_the_first() -> (
    None
):
    log = DeliveryLog({})
    for n in range(20):
        log.note(_item(7), _why(n))
    assert [w.node for w in log.why(_item(7))] == [f"n{n}" for n in range(20)]
    log.note(_item(7), _why(20))
    assert [w.node for w in log.why(_item(7))] == [f"n{n}" for n in range(1, 21)]


def test_why_is_kept_for_five_hundred_work_items_and_the_oldest_goes_past_it() -> None:
    log = DeliveryLog({})
    for n in range(500):
        log.note(_item(n), _why(n))
    assert len(log.items()) == 500
    log.note(_item(500), _why(500))
    assert log.why(_item(0)) == []
    assert [w.node for w in log.why(_item(1))] == ["n1"]
    assert len(log.items()) == 500


# -- posted messages mapped to their work item: 5 000 --------------------------------------


def _full_index(count: int) -> dict[str, Any]:
    """A store whose message index holds ``count`` messages, as Memory.index writes them,
    oldest first (built directly: 5 000 calls each copying the index would be slow)."""
    store: dict[str, Any] = {}
    Memory(store).index(CHANNEL, "0.000001", _item(0))
    (key,) = (k for k, v in store.items() if isinstance(v, dict) and v.get(f"{CHANNEL}:0.000001"))
    store[key] = {f"{CHANNEL}:{n}.000001": _item(n) for n in range(count)}
    return store


def test_five_thousand_posted_messages_still_find_their_work_item() -> None:
    store = _full_index(4999)
    memory = Memory(store)
    memory.index(CHANNEL, "4999.000001", _item(4999))
    assert memory.locate(CHANNEL, "0.000001") == _item(0)
    assert memory.locate(CHANNEL, "4999.000001") == _item(4999)


def test_the_five_thousand_and_first_posted_message_forgets_the_oldest() -> None:
    store = _full_index(5000)
    memory = Memory(store)
    memory.index(CHANNEL, "5000.000001", _item(5000))
    assert memory.locate(CHANNEL, "0.000001") == ""  # a press on it is refused as unmapped
    assert memory.locate(CHANNEL, "1.000001") == _item(1)
    assert memory.locate(CHANNEL, "5000.000001") == _item(5000)
