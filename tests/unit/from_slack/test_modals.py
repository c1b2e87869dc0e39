"""The forms and shortcuts as Slack sends them back: read only when they are ours.

A submission carries the metadata we put in the form; one whose metadata is not ours,
or whose form we never drew, is read as nothing. A shortcut without its message, member
or trigger is nothing to act on.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.from_slack import modals, shortcuts

OPENED = modals.FormOrigin("C0LOOP0001", "1700000001.000001", "1700000002.000002")


def submission(view: dict[str, Any], values: dict[str, Any], member: str = "U1") -> dict:
    return {
        "type": "view_submission",
        "user": {"id": member},
        "view": {**view, "id": "V1", "state": {"values": values}},
    }


def test_the_decision_form_is_filled_in_from_the_message_and_read_back() -> None:
    view = modals.decision_view(OPENED, "  keep v1  ")
    inputs = {b["block_id"]: b for b in view["blocks"] if b["type"] == "input"}
    assert inputs["what"]["element"]["initial_value"] == "keep v1"
    assert inputs["kind"]["optional"] is True and inputs["why"]["optional"] is True
    values = {
        "kind": {"kind": {"type": "static_select", "selected_option": {"value": "tech"}}},
        "what": {"what": {"type": "plain_text_input", "value": "keep v1 "}},
        "why": {"why": {"type": "plain_text_input", "value": "clients pin it"}},
    }
    read = modals.read_submission(submission(view, values))
    assert read == modals.Submitted(
        modals.DECISION_VIEW,
        "U1",
        "V1",
        OPENED,
        {"kind": "tech", "what": "keep v1", "why": "clients pin it"},
    )


def test_an_empty_message_leaves_the_decision_blank_and_a_long_one_is_cut_to_fit() -> None:
    blank = modals.decision_view(OPENED, "")
    assert "initial_value" not in blank["blocks"][1]["element"]
    long = modals.decision_view(OPENED, "x" * 5000)
    assert len(long["blocks"][1]["element"]["initial_value"]) == 3000


@pytest.mark.parametrize(
    "metadata", ["", "not json", "[]", '{"channel": "C1"}', '{"thread": "1.0"}']
)
def test_a_form_whose_metadata_is_not_ours_is_nothing(metadata: str) -> None:
    view = {**modals.changes_view(OPENED, "design-approval"), "private_metadata": metadata}
    assert modals.read_submission(submission(view, {})) is None


def test_a_form_we_never_drew_is_nothing() -> None:
    view = {**modals.changes_view(OPENED, ""), "callback_id": "someone_elses"}
    assert modals.read_submission(submission(view, {})) is None
    assert modals.read_submission({"type": "block_actions"}) is None


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(
    st.recursive(
        st.none() | st.text() | st.integers(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
def test_any_payload_is_read_without_raising(payload: Any) -> None:
    for raw in (payload, {"type": "view_submission", "view": payload, "user": payload}):
        if isinstance(raw, dict):
            modals.read_submission(raw)
            shortcuts.read({**raw, "type": "message_action"})


def test_a_shortcut_is_read_with_its_thread_and_trigger() -> None:
    payload = {
        "type": "message_action",
        "callback_id": shortcuts.RECORD_DECISION,
        "trigger_id": "T1",
        "user": {"id": "U1"},
        "channel": {"id": "C1"},
        "message": {"ts": "2.0", "thread_ts": "1.0", "text": "keep v1"},
    }
    assert shortcuts.read(payload) == shortcuts.Shortcut(
        shortcuts.RECORD_DECISION, "U1", "C1", "2.0", "1.0", "keep v1", "T1"
    )
    parent = {**payload, "message": {"ts": "1.0", "text": "x"}}
    read = shortcuts.read(parent)
    assert read is not None and read.thread == "1.0"
    assert shortcuts.read({**payload, "trigger_id": ""}) is None
    assert shortcuts.read({**payload, "callback_id": "other"}) is None
