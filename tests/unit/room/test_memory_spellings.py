"""The room's memory knows a work item by any spelling of it: GitHub's owner and
repository names ignore letter case, and a page link names the same issue."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from looproom.room.memory import ItemState, Memory

SHOWN = "github:Acme/api#7"  # as the-loop sent it


def _shown() -> Memory:
    memory = Memory({})
    memory.put(SHOWN, ItemState())
    return memory


@given(st.lists(st.booleans(), min_size=7, max_size=7))
def test_any_letter_case_of_the_owner_and_repository_finds_it(upper: list[bool]) -> None:
    name = "acmeapi"
    cased = "".join(c.upper() if u else c for c, u in zip(name, upper, strict=True))
    typed = f"github:{cased[:4]}/{cased[4:]}#7"
    memory = _shown()
    assert memory.knows(typed) and memory.spelling(typed) == SHOWN


def test_a_page_link_finds_it_and_another_number_does_not() -> None:
    memory = _shown()
    assert memory.spelling("https://github.com/ACME/API/issues/7") == SHOWN
    assert not memory.knows("github:acme/api#8")
    assert not memory.knows("github:acme/apis#7")
    assert memory.spelling("github:acme/api#8") == "github:acme/api#8"


def test_a_state_put_under_another_spelling_updates_the_one_shown() -> None:
    store: dict[str, Any] = {}
    memory = Memory(store)
    memory.put(SHOWN, ItemState())
    memory.put("github:acme/API#7", ItemState())
    assert [key for key in store if key.startswith("item:")] == [f"item:{SHOWN}"]


def test_a_memory_kept_before_spellings_learns_them_when_it_opens() -> None:
    store: dict[str, Any] = {f"item:{SHOWN}": ItemState().to_dict()}
    assert Memory(store).knows("github:acme/API#7")
