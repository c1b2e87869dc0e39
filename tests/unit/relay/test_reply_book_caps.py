"""The book of our replies the-loop's log is counted against, at its default bounds, as
`docs/decisions.md` gives them: each (work item, person) pair's last 50 replies, for the
500 pairs most recently answered, none settled three days or more before the newest.
Exactly each bound kept, one past it forgotten."""

from __future__ import annotations

from looproom.relay.reply_lookup import ReplyBook, Sent

ITEM, PERSON = "github:acme/api#7", "slack:U0PERSON01"
DAY = 86_400.0


def _sent(n: int, settled: float = 0.0) -> Sent:
    at = settled or 1000.0 + n
    return Sent(f"k{n}", at - 1.0, at, True)


def _keys(book: ReplyBook, item: str = ITEM, person: str = PERSON) -> list[str]:
    return [s.key for s in book.others(item, person, "none of them")]


def test_fifty_replies_of_one_person_to_one_work_item_are_all_counted() -> None:
    book = ReplyBook({})
    for n in range(50):
        book.note(ITEM, PERSON, _sent(n))
    assert _keys(book) == [f"k{n}" for n in range(50)]


def test_the_fifty_first_reply_pushes_out_the_oldest() -> None:
    book = ReplyBook({})
    for n in range(51):
        book.note(ITEM, PERSON, _sent(n))
    assert _keys(book) == [f"k{n}" for n in range(1, 51)]


def test_five_hundred_pairs_are_kept_and_the_five_hundred_and_first_forgets_the_oldest() -> None:
    store: dict[str, object] = {}
    book = ReplyBook(store)
    for n in range(500):
        book.note(f"github:acme/api#{n}", PERSON, _sent(n))
    assert _keys(ReplyBook(store), "github:acme/api#0") == ["k0"]
    book.note("github:acme/api#500", PERSON, _sent(500))
    again = ReplyBook(store)  # what a restart reads
    assert _keys(again, "github:acme/api#0") == []
    assert _keys(again, "github:acme/api#1") == ["k1"]
    assert _keys(again, "github:acme/api#500") == ["k500"]


def test_a_reply_settled_just_under_three_days_before_the_newest_is_kept_and_at_three_it_goes() -> (
    None
):
    start = 1_000_000.0
    kept = ReplyBook({})
    kept.note(ITEM, PERSON, _sent(0, start))
    kept.note(ITEM, PERSON, _sent(1, start + 3 * DAY - 1.0))
    assert _keys(kept) == ["k0", "k1"]
    gone = ReplyBook({})
    gone.note(ITEM, PERSON, _sent(0, start))
    gone.note(ITEM, PERSON, _sent(1, start + 3 * DAY))
    assert _keys(gone) == ["k1"]
