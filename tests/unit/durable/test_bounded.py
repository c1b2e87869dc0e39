"""Bounded records: whatever is touched is kept as the newest, and the oldest go past the cap."""

from hypothesis import given
from hypothesis import strategies as st

from looproom.durable.bounded import claimed_once, touched


@given(st.lists(st.sampled_from("abcdefgh")), st.integers(min_value=1, max_value=5))
def test_the_cap_most_recently_touched_keys_are_kept_newest_last(keys: list[str], cap: int) -> None:
    mapping: dict[str, int] = {}
    for n, key in enumerate(keys):
        mapping = touched(mapping, key, n, cap)
    newest_first = list(dict.fromkeys(reversed(keys)))[:cap]
    assert list(mapping) == list(reversed(newest_first))
    assert all(mapping[key] == max(i for i, k in enumerate(keys) if k == key) for key in mapping)


def test_the_mapping_touched_is_not_changed() -> None:
    original = {"a": 1, "b": 2}
    assert touched(original, "a", 3, 1) == {"a": 3}
    assert original == {"a": 1, "b": 2}


@given(st.lists(st.sampled_from("abcdefgh")))
def test_a_key_is_claimed_once_however_often_it_is_asked_within_the_cap(keys: list[str]) -> None:
    store: dict[str, dict[str, int]] = {}
    firsts = [claimed_once(store, "claims", key, n, 8) for n, key in enumerate(keys)]
    assert [key for key, first in zip(keys, firsts, strict=True) if first] == list(
        dict.fromkeys(keys)
    )
    assert store.get("claims", {}) == {key: keys.index(key) for key in dict.fromkeys(keys)}


def test_a_claim_pushed_past_the_cap_may_be_claimed_again() -> None:
    store: dict[str, dict[str, bool]] = {}
    assert claimed_once(store, "claims", "a", True, 2)
    assert claimed_once(store, "claims", "b", True, 2)
    assert not claimed_once(store, "claims", "a", True, 2)
    assert claimed_once(store, "claims", "c", True, 2)
    assert list(store["claims"]) == ["b", "c"]
    assert claimed_once(store, "claims", "a", True, 2)
