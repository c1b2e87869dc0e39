"""Buttons and checkboxes: the controls drawn,
the signed HTTP request verified, a press judged — stale, second and forged presses relay
nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import urllib.parse
from dataclasses import replace
from typing import Any

import pytest

from looproom.decide import judging, kinds, presses
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.verdict import ADMITTED, IGNORED, REFUSED
from looproom.events import Event
from looproom.room import buttons
from looproom.room import checklist as checklists
from looproom.room.memory import ItemState, observe
from tests.fakes.slack_api import block_errors
from tests.support.corpus import MESSAGES

ITEM, ALICE, BOT = "github:acme/api#7", "U0ALICE01", "U0THELOOP"
POLICY = AccessPolicy(BOT, frozenset({ALICE}))
SECRET, NOW = "signing-secret-for-tests", 1_800_000_000.0

#: The thread's work item, which the room was shown: the bound admits it.
SHOWN = Bound(lambda _ref: True).refusal


def event(name: str) -> Event:
    raw = json.loads(next(MESSAGES.glob(f"{name}-*.json")).read_text("utf-8"))
    raw.pop("origin", None)
    return Event.from_wire({**raw, "workItem": ITEM})


def posted(*shown: tuple[str, str]) -> ItemState:
    current = ItemState()
    for name, ts in shown:
        current = observe(current, event(name), "C1", ts)
    return current


def payload(action_id: str, ts: str, *, member: str = ALICE, **extra: Any) -> dict[str, Any]:
    action = {"action_id": action_id, "value": extra.pop("value", ""), "block_id": "b"}
    return {
        "type": "block_actions",
        "user": {"id": member},
        "channel": {"id": "C1"},
        "container": {"type": "message", "message_ts": ts, "channel_id": "C1"},
        "message": {"ts": ts, "text": "the message", "blocks": extra.pop("blocks", [])},
        "actions": [action],
        **extra,
    }


def judge(body: dict[str, Any], state: ItemState, policy: AccessPolicy = POLICY) -> Any:
    press = presses.read(body)
    assert press is not None
    return judging.judge_press(
        press, lambda _c, _ts: ITEM, lambda _i: state, policy, "T", bound=SHOWN
    )


# -- the controls ------------------------------------------------------------------------


def _elements(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for b in blocks if b["type"] == "actions" for e in b["elements"]]


def test_an_approval_pending_message_carries_open_approve_and_request_changes() -> None:
    pending = replace(event("06"), url="https://github.com/acme/api/issues/7")
    blocks = buttons.blocks_for(pending, interactive=True)
    assert [e["action_id"] for e in _elements(blocks)] == [
        buttons.OPEN,
        buttons.APPROVE,
        buttons.CHANGES,
    ]
    assert block_errors(blocks) == []
    assert [e["action_id"] for e in _elements(buttons.blocks_for(pending, interactive=False))] == [
        buttons.OPEN
    ]


def test_an_ask_with_a_default_offers_it_in_one_press() -> None:
    (button,) = [
        e for e in _elements(buttons.blocks_for(event("15"), interactive=True)) if "url" not in e
    ]
    assert button["action_id"] == buttons.DEFAULT and button["value"] == "Option 1 is fine"


def test_the_checklist_becomes_checkboxes_pre_ticked_as_drawn_and_an_execute_button() -> None:
    blocks = buttons.blocks_for(event("01"), interactive=True)
    assert block_errors(blocks) == []
    boxes = [e for e in _elements(blocks) if e["type"] == "checkboxes"]
    phases = [b for b in boxes if b["action_id"].startswith(buttons.PHASES)]
    assert [len(b["options"]) for b in phases] == [10, 8]  # Slack allows ten per element
    ticked = {o["value"] for b in phases for o in b.get("initial_options", [])}
    assert "design" in ticked and "brainstorming" not in ticked
    assert phases[0]["options"][4]["text"]["text"] == "5. `design`"
    assert _elements(blocks)[-1]["action_id"] == buttons.EXECUTE


def test_the_outer_loop_question_is_its_own_box_and_its_press_is_relayed() -> None:
    rows = checklists.parse(event("01").text)
    assert rows is not None
    blocks = buttons.blocks_for(event("01"), interactive=True)
    (outer,) = [e for e in _elements(blocks) if e["action_id"] == buttons.OUTER_LOOP]
    assert [o["value"] for o in outer["initial_options"]] == ["outer-loop-on-pull-request"]
    assert any("Where should the outer loop happen?" in str(b.get("text")) for b in blocks)
    block_id = f"{buttons.SELECTION}:{rows.fingerprint}:outer"
    unticked = {block_id: {buttons.OUTER_LOOP: {"selected_options": []}}}
    assert presses.ticked(unticked, rows) == {"outer-loop-on-pull-request": False}
    relayed = checklists.rows(rows, ticks=presses.ticked(unticked, rows))
    assert "- [ ] `outer-loop-on-pull-request`" in relayed


def test_the_selection_in_slack_shows_none_of_githubs_instructions() -> None:
    blocks = buttons.blocks_for(event("20"), interactive=True)
    said = json.dumps(blocks, ensure_ascii=False)
    assert "the-loop execute" not in said and "Start your reply" not in said


def test_a_room_that_cannot_be_pressed_is_sent_to_github_for_the_checklist() -> None:
    blocks = buttons.blocks_for(event("01"), interactive=False)
    assert "on GitHub>" in blocks[0]["elements"][0]["text"] and _elements(blocks) == []


# -- the signed HTTP request --------------------------------------------------------------


def signed(body: bytes, *, secret: str = SECRET, ts: int = int(NOW)) -> dict[str, str]:
    base = f"v0:{ts}:".encode() + body
    signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(ts), "X-Slack-Signature": signature}


def form(body: dict[str, Any]) -> bytes:
    return urllib.parse.urlencode({"payload": json.dumps(body)}).encode()


def test_a_signed_request_is_read() -> None:
    body = form(payload(buttons.APPROVE, "200.0"))
    checked = presses.verify(signed(body), body, SECRET, NOW)
    assert checked.status == 200 and checked.payload is not None
    assert checked.payload["actions"][0]["action_id"] == buttons.APPROVE


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (signed(b"x", secret="wrong"), 401),
        (signed(b"x", ts=int(NOW) - 301), 401),
        ({"X-Slack-Signature": "v0=00"}, 401),
        ({"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"}, 401),
    ],
)
def test_forged_or_stale_requests_are_401(headers: dict[str, str], status: int) -> None:
    assert presses.verify(headers, b"x", SECRET, NOW).status == status


def test_no_signing_secret_fails_closed_and_a_bad_body_is_400() -> None:
    assert presses.verify(signed(b"x"), b"x", "", NOW).status == 503
    assert presses.verify(signed(b"payload=nope"), b"payload=nope", SECRET, NOW).status == 400


@pytest.mark.parametrize(
    ("field", "value"),
    [("channel", "C1"), ("user", ["U0ALICE"]), ("message", 7), ("state", "x"), ("actions", {})],
)
def test_a_signed_payload_of_the_wrong_shape_is_400_naming_the_field(
    field: str, value: Any
) -> None:
    body = form(payload(buttons.APPROVE, "200.0") | {field: value})
    checked = presses.verify(signed(body), body, SECRET, NOW)
    assert (checked.status, checked.payload) == (400, None) and field in checked.error
    # Socket Mode hands the payload over unverified in shape: reading it must not raise.
    presses.read(json.loads(urllib.parse.parse_qs(body.decode())["payload"][0]))


# -- judging a press ----------------------------------------------------------------------

GATE = posted(("01", "100.0"), ("06", "200.0"))


def test_approve_on_the_gate_message_is_the_gates_answer() -> None:
    verdict = judge(payload(buttons.APPROVE, "200.0"), GATE)
    assert verdict.status == ADMITTED and verdict.settles == "gate"
    assert (
        verdict.decision.kind == kinds.APPROVE and verdict.decision.gate == "requirements-approval"
    )


def test_the_same_button_pressed_twice_has_one_key() -> None:
    first = judge(payload(buttons.APPROVE, "200.0"), GATE).decision
    again = judge(payload(buttons.APPROVE, "200.0"), GATE).decision
    assert first.key == again.key


def test_a_press_on_a_gate_already_answered_relays_nothing() -> None:
    answered = replace(
        GATE, gate=replace(GATE.gate, answered_by="U0BOB0001", answered_at="10:00 UTC")
    )
    verdict = judge(payload(buttons.APPROVE, "200.0"), answered)
    assert verdict.reason == "already-answered" and "<@U0BOB0001>" in verdict.text


def test_a_press_on_an_older_message_is_stale() -> None:
    verdict = judge(payload(buttons.APPROVE, "150.0"), GATE)
    assert verdict.reason == "stale" and verdict.decision is None


def test_request_changes_asks_for_the_reason_and_relays_nothing() -> None:
    verdict = judge(payload(buttons.CHANGES, "200.0"), GATE)
    assert verdict.status == REFUSED and "changes <why>" in verdict.text


def test_unauthorized_and_own_presses_relay_nothing() -> None:
    refused = judge(payload(buttons.APPROVE, "200.0", member="U0MALLORY"), GATE)
    assert refused.reason == "unauthorized" and "slack.authorizedUsers" in refused.text
    empty = judge(payload(buttons.APPROVE, "200.0"), GATE, replace(POLICY, authorized=frozenset()))
    assert empty.reason == "unauthorized"
    assert judge(payload(buttons.APPROVE, "200.0", member=BOT), GATE).status == IGNORED


def test_a_collaborators_press_on_a_gate_is_refused_naming_the_act() -> None:
    policy = replace(POLICY, collaborators=frozenset({"U0CAROL01"}))
    pressed = payload(buttons.APPROVE, "200.0", member="U0CAROL01")
    refused = judge(pressed, GATE, policy)
    assert refused.reason == "act-not-granted" and "`gate.feedback`" in refused.text


def test_ticking_a_box_or_opening_a_link_is_not_a_decision() -> None:
    assert judge(payload(f"{buttons.PHASES}:0", "100.0"), GATE).status == IGNORED
    assert judge(payload(buttons.OPEN, "200.0"), GATE).status == IGNORED
    assert presses.read(payload("someone-else:approve", "200.0")) is None
    assert presses.read({"type": "view_submission"}) is None


def test_a_press_on_a_message_that_is_not_ours_is_refused() -> None:
    press = presses.read(payload(buttons.APPROVE, "200.0"))
    assert press is not None
    verdict = judging.judge_press(
        press, lambda _c, _t: "", lambda _i: GATE, POLICY, "T", bound=SHOWN
    )
    assert verdict.reason == "unmapped"


def test_defaults_are_fine_answers_with_the_stated_default() -> None:
    verdict = judge(payload(buttons.DEFAULT, "300.0"), posted(("15", "300.0")))
    assert verdict.decision.kind == kinds.ANSWER and verdict.decision.words == "Option 1 is fine"


def _execute_press(state: ItemState, values: dict[str, Any], fingerprint: str = "") -> Any:
    rows = state.rows()
    body = payload(buttons.EXECUTE, "100.0", value=fingerprint or rows.fingerprint)
    body["state"] = {"values": values}
    return judge(body, state)


def test_execute_composes_the_boxes_as_the_press_left_them() -> None:
    state = posted(("01", "100.0"))
    tag = f"{buttons.SELECTION}:{state.rows().fingerprint}:phases"
    first_ten = [r.token for r in state.rows().phases[:10]]
    chosen = [{"value": t} for t in first_ten if t not in ("design",)] + [
        {"value": "brainstorming"}
    ]
    values = {f"{tag}:0": {f"{buttons.PHASES}:0": {"selected_options": chosen}}}
    verdict = _execute_press(state, values)
    rows = verdict.decision.rows
    assert "- [ ] design" in rows and "- [x] brainstorming" in rows
    # The second group was not in the state: its drawn ticks stand (fail closed).
    assert "- [x] human-approval" in rows and "- [ ] design-critic-review" in rows


def test_a_press_on_a_checklist_that_changed_since_is_stale() -> None:
    verdict = _execute_press(posted(("01", "100.0")), {}, fingerprint="0" * 12)
    assert verdict.reason == "stale" and "changed" in verdict.text


def test_after_a_press_the_controls_give_way_to_who_did_what_when() -> None:
    blocks = buttons.blocks_for(replace(event("06"), url="https://x.test/7"), interactive=True)
    body = payload(
        buttons.APPROVE,
        "200.0",
        blocks=[{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}, *blocks],
    )
    press = presses.read(body)
    assert press is not None
    decision = judge(body, GATE).decision
    line = presses.pressed_line(press, decision, NOW)
    after = presses.after_press(press, line)
    assert [e["action_id"] for e in _elements(after)] == [buttons.OPEN]
    assert f"pressed by <@{ALICE}>" in after[-1]["elements"][0]["text"]
    assert "UTC" in line and block_errors(after) == []


# -- where a press is found, and what its decision carries ----------------------------------


def _judge_at(
    body: dict[str, Any], where: dict[tuple[str, str], str], state: ItemState = GATE
) -> Any:
    press = presses.read(body)
    assert press is not None
    locate = lambda channel, ts: where.get((channel, ts), "")  # noqa: E731
    return judging.judge_press(press, locate, lambda _i: state, POLICY, "T", bound=SHOWN)


def test_a_presss_decision_is_keyed_by_the_message_and_the_button() -> None:
    # A second press of the same button on the same message is the same decision.
    verdict = _judge_at(payload(buttons.APPROVE, "200.0"), {("C1", "200.0"): ITEM})
    made = verdict.decision
    assert made is not None
    assert (made.work_item, made.member, made.at) == (ITEM, ALICE, "T")
    assert (made.origin, made.channel, made.ts, made.thread) == (
        f"C1:200.0:{buttons.APPROVE}",
        "C1",
        "200.0",
        "200.0",
    )


def test_a_press_in_a_thread_is_found_by_its_thread_when_its_message_is_not_known() -> None:
    body = payload(buttons.APPROVE, "250.0")
    body["container"]["thread_ts"] = "200.0"
    body["message"]["thread_ts"] = "200.0"
    # Found through its thread, it is judged against that work item's gate (which was
    # drawn on another message, so it is stale); found nowhere, it says so.
    verdict = _judge_at(body, {("C1", "200.0"): ITEM})
    assert (verdict.status, verdict.reason) == (REFUSED, "stale")
    assert _judge_at(body, {("C2", "200.0"): ITEM}).text == (
        "This message is not one of the-loop's questions any more."
    )


def test_a_press_on_a_work_item_no_sink_can_reach_is_refused_saying_why() -> None:
    item = "linear:ENG-1"
    verdict = _judge_at(payload(buttons.APPROVE, "200.0"), {("C1", "200.0"): item})
    assert verdict.status == REFUSED and verdict.decision is None
    assert verdict.text.startswith("linear:ENG-1 is not a GitHub issue")


def test_what_a_press_is_let_pass_or_refused_for_is_logged_with_why() -> None:
    found = {("C1", "200.0"): ITEM}
    box = _judge_at(payload(f"{buttons.PHASES}:0", "200.0"), found)
    assert (box.status, box.reason) == (IGNORED, "not-a-decision")
    own = _judge_at(payload(buttons.APPROVE, "200.0", member=BOT), found)
    assert (own.status, own.reason) == (IGNORED, "self-authored")
    elsewhere = _judge_at(payload(buttons.APPROVE, "200.0"), {("C1", "200.0"): "linear:ENG-1"})
    assert (elsewhere.status, elsewhere.reason) == (REFUSED, "unwritable")


def test_a_press_on_a_work_item_the_room_was_never_shown_is_refused_with_the_bounds_reason() -> (
    None
):
    press = presses.read(payload(buttons.APPROVE, "200.0"))
    assert press is not None
    never = Bound(lambda _ref: False)
    verdict = judging.judge_press(
        press,
        lambda _c, _ts: "github:elsewhere/repo#9",
        lambda _i: GATE,
        POLICY,
        "T",
        bound=never.refusal,
    )
    assert (verdict.status, verdict.reason) == (REFUSED, "not-the-operators")
    assert verdict.text == never.refusal("github:elsewhere/repo#9") != ""


def test_a_work_items_own_collaborator_is_heard_on_it_by_pressing_too() -> None:
    # Listed for this work item alone (the roster), they may answer its ask with a press.
    policy = replace(POLICY, roster={ITEM: frozenset({"U0EVE0001"})})
    pressed = payload(buttons.DEFAULT, "300.0", member="U0EVE0001")
    verdict = judge(pressed, posted(("15", "300.0")), policy)
    assert verdict.status == ADMITTED and verdict.decision is not None
    assert verdict.decision.member == "U0EVE0001"
