"""The phase-selection checklist as last seen, and the ``without``/``skip`` resolution —
a typo refuses the whole clause — on real checklists (tests/data/messages)."""

from __future__ import annotations

import json

import pytest

from looproom.room import checklist as checklists
from looproom.room.checklist import Refused, Unticked
from tests.support.corpus import MESSAGES


def shown(name: str) -> checklists.Checklist:
    path = next(MESSAGES.glob(f"{name}-*.json"))
    parsed = checklists.parse(json.loads(path.read_text(encoding="utf-8"))["text"])
    assert parsed is not None
    return parsed


def test_the_default_checklist_reads_as_eighteen_numbered_phases() -> None:
    rows = shown("01")
    assert len(rows.phases) == 18
    assert (rows.phases[0].token, rows.phases[0].ticked) == ("brainstorming", False)
    assert (rows.phases[4].token, rows.phases[4].ticked) == ("design", True)
    assert rows.phases[-1].token == "design-critic-review"
    assert [r.token for r in rows.settings][:3] == [
        "outer-loop-on-pull-request",
        "claude-artifact",
        "explainer",
    ]
    assert rows.always == ()


def test_a_contribution_checklist_names_what_always_runs() -> None:
    assert shown("18").always == ("goal-definition",)


def test_text_without_the_hooks_marker_is_no_checklist() -> None:
    assert checklists.parse("- [x] design\n- [ ] tests") is None


@pytest.mark.parametrize(
    ("items", "tokens"),
    [
        (("2", "5"), ("brainstorm-approval", "design")),
        (("design", "tests"), None),  # `tests` is no phase here: the whole clause is refused
        (("design",), ("design",)),  # the exact name beats design-approval's prefix
        (("secur",), ("security-review",)),  # a unique prefix of three or more
        (("DESIGN", "5"), ("design",)),  # the same phase twice is one phase
        (("verification", "3"), ("requirements-definition", "verification")),  # checklist order
    ],
)
def test_a_clause_resolves_to_phases_or_is_refused_whole(
    items: tuple[str, ...], tokens: tuple[str, ...] | None
) -> None:
    found = checklists.leave_out(shown("01"), items, "without")
    if tokens is None:
        assert isinstance(found, Refused) and found.reason == checklists.UNKNOWN
    else:
        assert found == Unticked(tokens)


def test_an_ambiguous_prefix_names_every_candidate() -> None:
    found = checklists.leave_out(shown("01"), ("brainstorm",), "skip")
    assert isinstance(found, Refused) and found.reason == checklists.AMBIGUOUS
    assert "1. `brainstorming` or 2. `brainstorm-approval`" in found.text


@pytest.mark.parametrize("item", ["d", "de"])
def test_a_prefix_shorter_than_three_selects_nothing(item: str) -> None:
    found = checklists.leave_out(shown("01"), (item,), "skip")
    assert isinstance(found, Refused) and found.reason == checklists.UNKNOWN


def test_what_always_runs_is_refused_as_unskippable() -> None:
    found = checklists.leave_out(shown("18"), ("goal-definition",), "skip")
    assert isinstance(found, Refused) and found.reason == checklists.UNSKIPPABLE


def test_an_empty_clause_is_refused_with_what_is_offered() -> None:
    found = checklists.leave_out(shown("01"), (), "skip")
    assert isinstance(found, Refused) and found.reason == checklists.EMPTY
    assert "18. `design-critic-review`" in found.text


def test_markup_is_refused_by_position_and_never_echoed() -> None:
    found = checklists.leave_out(shown("01"), ("design", "<!channel>"), "without")
    assert isinstance(found, Refused)
    assert "word 2 after `without`" in found.text and "<!channel>" not in found.text


def test_a_setting_is_not_a_phase() -> None:
    found = checklists.leave_out(shown("01"), ("explainer",), "skip")
    assert isinstance(found, Refused) and found.reason == checklists.UNKNOWN


def test_rows_untick_what_was_left_out_and_carry_the_settings() -> None:
    lines = checklists.rows(shown("01"), untick=("design",))
    assert "- [ ] design" in lines and "- [x] test-planning" in lines
    assert "- [ ] brainstorming" in lines  # unticked on the checklist: stays unticked
    assert "- [x] `outer-loop-on-pull-request`" in lines
    assert "- [x] `pr-sessions-cross-repository`" in lines


def test_a_press_state_overrides_the_drawn_ticks() -> None:
    lines = checklists.rows(shown("01"), ticks={"brainstorming": True, "design": False})
    assert "- [x] brainstorming" in lines and "- [ ] design" in lines


def test_the_default_loop_says_it_is_the_default() -> None:
    assert not checklists.DEFAULT.seen
    assert "default work-item loop" in checklists.DEFAULT.offered()
    assert "default" not in shown("01").offered()


def test_the_fingerprint_changes_with_any_tick() -> None:
    rows = shown("01")
    text = json.loads(next(MESSAGES.glob("01-*.json")).read_text("utf-8"))["text"]
    changed = checklists.parse(text.replace("- [x] design\n", "- [ ] design\n", 1))
    assert changed is not None and changed.fingerprint != rows.fingerprint
    assert checklists.parse(text).fingerprint == rows.fingerprint  # type: ignore[union-attr]
