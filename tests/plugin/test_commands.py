"""Typed decisions in a real Errbot (testbot): the grammar, its refusals, authorization.

Issue 4 "Typed commands" and "Authorization"; seed 004 D6 (the bot's own messages are never
input; an empty allow-list denies everyone). On the Test backend the member id is the
person string, so ``slack.authorizedUsers`` lists ``gbin@localhost`` (the test sender).
With no GitHub token and no the-loop API configured, decisions land in the embedded
default, the local JSONL ledger.
"""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path
from typing import Any

import pytest
from errbot.backends.base import Message

from tests.support.corpus import MESSAGES

extra_plugin_dir = str(Path(__file__).resolve().parents[2] / "plugins")

ITEM = "github:acme/api#7"
SETTINGS = """
    slack:
      subscribe: [session.awaiting_input, phase-approval-pending, comment.agent]
      authorizedUsers: [gbin@localhost]
"""


def _plugin(testbot: Any) -> Any:
    return testbot.bot.plugin_manager.get_plugin_obj_by_name("TheLoop")


def _heard(testbot: Any, *, settle: float = 0.3) -> list[str]:
    """Everything the bot says until it has been quiet for ``settle`` seconds."""
    said = []
    while True:
        try:
            said.append(testbot.pop_message(timeout=settle))
        except queue.Empty:
            return said


def _say(testbot: Any, text: str) -> list[str]:
    """What the bot answers, as read (the Test backend draws `code` as plain text)."""
    testbot.push_message(text)
    return [said.replace("`", "") for said in _heard(testbot)]


def _event(post_event: Any, name: str, **changes: Any) -> None:
    raw = json.loads(next(MESSAGES.glob(f"{name}-*.json")).read_text("utf-8"))
    raw.pop("origin", None)
    raw.update({"id": f"corpus-{name}", "workItem": ITEM, **changes})
    assert post_event(json.dumps(raw).encode()).status_code == 202


def _ledger(testbot: Any) -> list[dict[str, Any]]:
    return _plugin(testbot)._relay.sinks.ledger.lines()


def _wait_for_ledger(testbot: Any, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while len(_ledger(testbot)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return _ledger(testbot)


@pytest.fixture
def checklist(testbot: Any, post_event: Any) -> Any:
    _event(post_event, "01")
    _heard(testbot)
    return testbot


@pytest.mark.theloop_yaml(SETTINGS)
def test_execute_without_relays_the_checklist_the_member_asked_for(checklist: Any) -> None:
    said = _say(checklist, f"!execute {ITEM} without 2, 5")
    assert said[0] == "👀"
    (line,) = _wait_for_ledger(checklist, 1)
    assert line["kind"] == "execute" and line["actor"] == {"slack": "gbin@localhost"}
    assert line["body"].startswith(
        "the-loop execute\n\n- [ ] brainstorming\n- [ ] brainstorm-approval"
    )
    assert "- [ ] design\n" in line["body"] and "- [x] test-planning" in line["body"]
    later = said[1:] + _heard(checklist)
    assert "✅" in later and any(text.startswith("✅ recorded — moving on") for text in later)


@pytest.mark.theloop_yaml(SETTINGS)
@pytest.mark.parametrize(
    ("typed", "refusal"),
    [
        (f"!execute {ITEM} without 5, 21", "There is no phase 21 on this checklist"),
        (f"!skip {ITEM} desing", "`desing` is not a phase this checklist offers"),
        (f"!skip {ITEM} brainstorm", "`brainstorm` could be 1. `brainstorming` or 2."),
        (f"!changes {ITEM}", "`changes` needs the reason"),
        (f"!approve {ITEM}", "No gate is open on github:acme/api#7"),
        ("!execute", "This room is not bound to one work item"),
        ("!execute #7", "`#7` needs a repository"),
    ],
)
def test_a_refusal_says_why_and_relays_nothing(checklist: Any, typed: str, refusal: str) -> None:
    said = _say(checklist, typed)
    assert any(refusal.replace("`", "") in text for text in said), said
    assert "👀" not in said and _ledger(checklist) == []


@pytest.mark.theloop_yaml(SETTINGS)
def test_approve_answers_the_open_gate_once(checklist: Any, post_event: Any) -> None:
    _event(post_event, "06")
    _heard(checklist)
    assert _say(checklist, f"!approve {ITEM} ship it")[0] == "👀"
    (line,) = _wait_for_ledger(checklist, 1)
    assert line["body"].startswith("approved\n\nship it\n\n🗣️ _the-loop — answer to the open gate")
    again = _say(checklist, f"!changes {ITEM} on second thought")
    assert any("already answered by" in text for text in again), again
    assert len(_ledger(checklist)) == 1


@pytest.mark.theloop_yaml(SETTINGS)
def test_an_approval_the_loop_would_read_as_changes_is_refused(
    checklist: Any, post_event: Any
) -> None:
    _event(post_event, "06")
    _heard(checklist)
    said = _say(checklist, f"!approve {ITEM} but please change the title")
    assert any("reads as a change request" in text for text in said) and _ledger(checklist) == []


@pytest.mark.theloop_yaml(SETTINGS.replace("[gbin@localhost]", "[]"))
def test_an_empty_allow_list_denies_everyone(checklist: Any) -> None:
    said = _say(checklist, f"!execute {ITEM}")
    assert "⚠️" in said
    assert any("slack.authorizedUsers" in t and "nobody may" in t for t in said)
    assert _ledger(checklist) == [] and _plugin(checklist)._relay.queue.depth() == 0


@pytest.mark.theloop_yaml(SETTINGS)
def test_an_unknown_member_is_refused_with_the_remedy(checklist: Any) -> None:
    checklist.bot.sender = checklist.bot.build_identifier("mallory@localhost")
    said = _say(checklist, f"!execute {ITEM}")
    assert any("mallory@localhost is not there" in text for text in said), said
    assert _ledger(checklist) == []


@pytest.mark.theloop_yaml(SETTINGS)
def test_the_commands_are_in_errbots_help(testbot: Any) -> None:
    help_text = " ".join(_say(testbot, "!help"))
    assert all(f"!{verb}" in help_text for verb in ("execute", "skip", "approve", "changes"))


@pytest.mark.theloop_yaml(SETTINGS)
def test_the_bots_own_messages_and_other_bots_are_never_input(checklist: Any) -> None:
    plugin = _plugin(checklist)
    own = Message(f"execute {ITEM}", frm=plugin.bot_identifier, to=plugin.bot_identifier)
    plugin.callback_message(own)
    other = Message(f"execute {ITEM}", frm=checklist.bot.build_identifier("gbin@localhost"))
    other.extras["slack_event"] = {"channel": "C1", "ts": "5.0", "bot_id": "B0OTHER"}
    plugin.callback_message(other)
    assert _heard(checklist) == [] and plugin._relay.queue.depth() == 0


@pytest.mark.theloop_yaml(SETTINGS)
def test_an_edited_message_is_not_taken_as_a_new_decision(checklist: Any) -> None:
    plugin = _plugin(checklist)
    edit = Message(f"execute {ITEM}", frm=checklist.bot.build_identifier("gbin@localhost"))
    edit.extras["slack_event"] = {"channel": "C1", "ts": "6.0", "subtype": "message_changed"}
    plugin.callback_message(edit)
    assert _heard(checklist) == [] and plugin._relay.queue.depth() == 0


@pytest.mark.theloop_yaml(SETTINGS)
def test_decisions_not_relayed_yet_are_listed_by_the_queue_command(checklist: Any) -> None:
    plugin = _plugin(checklist)
    plugin._relay.stop()  # hold the relay so the decision waits
    assert _say(checklist, f"!execute {ITEM}")[0] == "👀"
    listing = " ".join(_say(checklist, "!theloop queue"))
    assert (
        "Decisions not relayed yet" in listing and f"execute · {ITEM} by gbin@localhost" in listing
    )
