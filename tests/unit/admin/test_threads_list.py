"""``!theloop threads``: every work item's room and thread, as the-loop's ``channels threads``
lists them — no cap, one work item when named, a bad name said back inert."""

from __future__ import annotations

from looproom.admin.threads import threads_text
from looproom.room.routing import ThreadBinding

ITEM = "github:acme/api#7"


def _threads(n: int) -> list[ThreadBinding]:
    return [
        ThreadBinding(
            f"github:acme/api#{i}", "C0LOOP0001", f"17966{i:05d}.000100", origin="kickoff"
        )
        for i in range(1, n + 1)
    ]


def test_every_thread_is_listed_not_only_the_first_twenty() -> None:
    text = threads_text(_threads(25), lambda: [])
    assert text.startswith("Threads (25):") and len(text.splitlines()) == 26
    assert "origin: kickoff · listens to: mentions" in text


def test_one_work_item_by_its_short_ref_and_what_its_rooms_hear() -> None:
    threads = [
        ThreadBinding(ITEM, "C0LOOP0001", "1796643692.305204", origin="event comment.agent"),
        ThreadBinding(ITEM, "C0WAR0001", "1796643700.000100"),
        ThreadBinding(
            ITEM, "D0ALICE01", "1796643701.000100", origin="event session.awaiting_input"
        ),
        ThreadBinding("github:acme/api#8", "C0LOOP0001", "1796643693.000100"),
    ]
    text = threads_text(threads, lambda: ["C0WAR0001"], "acme/api#7")
    lines = text.splitlines()
    assert lines[0] == "Threads (3):"
    assert "[its thread](https://slack.com/archives/C0LOOP0001/p1796643692305204)" in lines[1]
    assert "opened 2026-12-07T" in lines[1] and "listens to: mentions" in lines[1]
    assert "origin: not recorded" in lines[2] and "listens to: all" in lines[2]
    assert "listens to: all" in lines[3]  # a direct message hears everything
    assert "acme/api#8" not in text


def test_a_work_item_without_a_thread_or_a_bad_name_is_said_so() -> None:
    assert threads_text(_threads(1), lambda: [], "github:acme/web#1") == (
        "No thread carries `github:acme/web#1` here."
    )
    said = threads_text(_threads(1), lambda: [], "<!here> `x`")
    assert said.startswith("`!here x` is not a work item ref")
    assert threads_text([], lambda: []).startswith("No work item has a thread yet")
