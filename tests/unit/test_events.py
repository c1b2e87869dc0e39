"""The webhook's event schema: strict, every problem named."""

from __future__ import annotations

import json

import pytest

from looproom.events import Event, SchemaError
from tests.support.corpus import MESSAGES


def _wire(**fields: object) -> dict[str, object]:
    return {"eventType": "phase-approval-pending", "workItem": "github:o/r#7", **fields}


def test_a_minimal_event_is_accepted_with_empty_defaults() -> None:
    event = Event.from_wire(_wire())
    assert (event.event_type, event.work_item, event.text, dict(event.detail)) == (
        "phase-approval-pending",
        "github:o/r#7",
        "",
        {},
    )


def test_every_bad_field_is_named_at_once() -> None:
    with pytest.raises(SchemaError) as caught:
        Event.from_wire({"eventType": 3, "detail": {"node": 1}, "txt": "typo"})
    assert caught.value.errors == [
        "txt: unknown field",
        "eventType: expected a string, got number",
        "workItem: required",
        "detail.node: expected a string, got number",
    ]


@pytest.mark.parametrize("body", [[], "x", None, 3])
def test_a_body_that_is_not_an_object_is_refused(body: object) -> None:
    with pytest.raises(SchemaError, match="body: expected a JSON object"):
        Event.from_wire(body)


def test_a_blank_required_field_is_refused() -> None:
    with pytest.raises(SchemaError, match="workItem: must not be empty"):
        Event.from_wire(_wire(workItem="  "))


def test_unknown_event_types_are_admitted_but_marked() -> None:
    assert not Event.from_wire(_wire(eventType="x-custom.notify")).known
    assert Event.from_wire(_wire()).known


def test_the_delivery_key_is_the_id_else_a_content_digest() -> None:
    assert Event.from_wire(_wire(id="abc")).delivery_key == "abc"
    first, again = Event.from_wire(_wire(text="hi")), Event.from_wire(_wire(text="hi"))
    assert first.delivery_key == again.delivery_key
    assert first.delivery_key != Event.from_wire(_wire(text="other")).delivery_key


def test_the_wire_form_round_trips() -> None:
    event = Event.from_wire(_wire(id="k", detail={"node": "n"}, actor={"ids": {"github": "o"}}))
    assert Event.from_wire(json.loads(event.to_json())) == event


@pytest.mark.skipif(not MESSAGES.is_dir(), reason="shared/corpus is not beside the checkout")
def test_every_real_the_loop_message_is_a_valid_event() -> None:
    for path in sorted(MESSAGES.glob("*.json")):
        body = json.loads(path.read_text())
        body.pop("origin")
        assert Event.from_wire(body).work_item.startswith("github:"), path.name
