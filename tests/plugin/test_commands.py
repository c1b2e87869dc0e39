"""Typed decisions in a real Errbot (testbot): the grammar, its refusals, authorization.

The typed commands and why each refusal says what it says; who may decide (an empty
allow-list denies everyone); and that the bot's own messages, other bots' and edits are
never taken as input. On the Test backend the member id is the person string, so
``slack.authorizedUsers`` lists ``gbin@localhost`` (the test sender). With no GitHub token
and no the-loop API configured, decisions land in the embedded default, the local JSONL
ledger.

No read waits for the bot to fall quiet: each stops at the message that ends what it waits
for — a refusal (said after the decision was judged and, if admitted, stored), or the
relay's "recorded" reply (said after the ledger line was written).
"""

from __future__ import annotations

import json
import queue
from pathlib import Path
from typing import Any

import pytest
from errbot.backends.base import Message

from tests.support.messages import event
from tests.support.wait import wait_for

extra_plugin_dir = str(Path(__file__).resolve().parents[2] / "plugins")

ITEM = "github:acme/api#7"
SETTINGS = """
    slack:
      subscribe: [session.awaiting_input, phase-approval-pending, comment.agent]
      authorizedUsers: [gbin@localhost]
"""
#: A bound on waiting for the bot to say something, never an expectation of speed.
TIMEOUT = 10.0
#: What the relay says once a decision has landed (its ledger line is written by then).
LANDED = "✅ recorded — moving on"


def _heard_until(testbot: Any, words: str) -> list[str]:
    """What the bot says, in order, up to the first message holding ``words`` — as read:
    the Test backend draws `code` as plain text."""
    heard: list[str] = []

    def arrived() -> bool:
        while not any(words in said for said in heard):
            try:
                heard.append(testbot.pop_message(block=False).replace("`", ""))
            except queue.Empty:
                return False
        return True

    wait_for(arrived, TIMEOUT, lambda: f"the bot to say {words!r}; it said {heard}")
    return heard


def _say(testbot: Any, text: str, until: str) -> list[str]:
    """Send ``text``; what the bot says up to the message holding ``until``."""
    testbot.push_message(text)
    return _heard_until(testbot, until)


def _show(testbot: Any, post_event: Any, name: str) -> None:
    """the-loop sends a corpus event about ``ITEM``; the bot posts it."""
    wire = event(name, id=f"corpus-{name}", workItem=ITEM)
    assert post_event(json.dumps(wire).encode()).status_code == 202
    _heard_until(testbot, "acme/api#7")


def _ledger(plugin: Any) -> list[dict[str, Any]]:
    return plugin._core.decisions.relay.sinks.ledger.lines()


def _sentinel(testbot: Any) -> list[str]:
    """An unknown member's ``!execute``, which the desk refuses: sent once the acts before
    it have returned, so anything they made the bot say comes before its refusal. What
    the bot said up to that refusal, the refusal left out."""
    testbot.bot.sender = testbot.bot.build_identifier("mallory@localhost")
    return _say(testbot, f"!execute {ITEM}", until="mallory@localhost is not there")[:-1]


@pytest.fixture
def checklist(testbot: Any, post_event: Any) -> Any:
    _show(testbot, post_event, "01")
    return testbot


@pytest.mark.theloop_yaml(SETTINGS)
def test_execute_without_relays_the_checklist_the_member_asked_for(
    checklist: Any, plugin: Any
) -> None:
    said = _say(checklist, f"!execute {ITEM} without 2, 5", until=LANDED)
    assert said[0] == "👀" and "✅" in said and said[-1].startswith(LANDED)
    (line,) = _ledger(plugin)
    assert line["kind"] == "execute" and line["actor"] == {"slack": "gbin@localhost"}
    assert line["body"].startswith(
        "the-loop execute\n\n- [ ] brainstorming\n- [ ] brainstorm-approval"
    )
    assert "- [ ] design\n" in line["body"] and "- [x] test-planning" in line["body"]


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
def test_a_refusal_says_why_and_relays_nothing(
    checklist: Any, plugin: Any, typed: str, refusal: str
) -> None:
    said = _say(checklist, typed, until=refusal.replace("`", ""))
    assert "👀" not in said, said
    assert plugin._core.decisions.relay.queue.depth() == 0 and _ledger(plugin) == []


@pytest.mark.theloop_yaml(SETTINGS)
def test_approve_answers_the_open_gate_once(checklist: Any, post_event: Any, plugin: Any) -> None:
    _show(checklist, post_event, "06")
    assert _say(checklist, f"!approve {ITEM} ship it", until=LANDED)[0] == "👀"
    (line,) = _ledger(plugin)
    assert line["body"].startswith("approved\n\nship it\n\n🗣️ _the-loop — answer to the open gate")
    again = _say(checklist, f"!changes {ITEM} on second thought", until="already answered by")
    assert "👀" not in again, again
    assert plugin._core.decisions.relay.queue.depth() == 0 and len(_ledger(plugin)) == 1


@pytest.mark.theloop_yaml(SETTINGS)
def test_an_approval_the_loop_would_read_as_changes_is_refused(
    checklist: Any, post_event: Any, plugin: Any
) -> None:
    _show(checklist, post_event, "06")
    said = _say(
        checklist, f"!approve {ITEM} but please change the title", until="reads as a change request"
    )
    assert "👀" not in said and _ledger(plugin) == []


@pytest.mark.theloop_yaml(SETTINGS.replace("[gbin@localhost]", "[]"))
def test_an_empty_allow_list_denies_everyone(checklist: Any, plugin: Any) -> None:
    said = _say(checklist, f"!execute {ITEM}", until="slack.authorizedUsers")
    assert "⚠️" in said and "nobody may" in said[-1], said
    assert _ledger(plugin) == [] and plugin._core.decisions.relay.queue.depth() == 0


@pytest.mark.theloop_yaml(SETTINGS)
def test_an_unknown_member_is_refused_with_the_remedy(checklist: Any, plugin: Any) -> None:
    checklist.bot.sender = checklist.bot.build_identifier("mallory@localhost")
    said = _say(checklist, f"!execute {ITEM}", until="mallory@localhost is not there")
    assert "👀" not in said and _ledger(plugin) == []


@pytest.mark.theloop_yaml(SETTINGS)
def test_the_commands_are_in_errbots_help(testbot: Any) -> None:
    help_text = testbot.exec_command("!help")
    assert all(f"!{verb}" in help_text for verb in ("execute", "skip", "approve", "changes"))


@pytest.mark.theloop_yaml(SETTINGS)
def test_the_bots_own_messages_and_other_bots_are_never_input(checklist: Any, plugin: Any) -> None:
    own = Message(f"execute {ITEM}", frm=plugin.bot_identifier, to=plugin.bot_identifier)
    plugin.callback_message(own)
    other = Message(f"execute {ITEM}", frm=checklist.bot.build_identifier("gbin@localhost"))
    other.extras["slack_event"] = {"channel": "C1", "ts": "5.0", "bot_id": "B0OTHER"}
    plugin.callback_message(other)
    assert _sentinel(checklist) == ["⚠️"]  # the sentinel's own; nothing before it
    assert plugin._core.decisions.relay.queue.depth() == 0


@pytest.mark.theloop_yaml(SETTINGS)
def test_an_edited_message_is_not_taken_as_a_new_decision(checklist: Any, plugin: Any) -> None:
    edit = Message(f"execute {ITEM}", frm=checklist.bot.build_identifier("gbin@localhost"))
    edit.extras["slack_event"] = {"channel": "C1", "ts": "6.0", "subtype": "message_changed"}
    plugin.callback_message(edit)
    assert _sentinel(checklist) == ["⚠️"]  # the sentinel's own; nothing before it
    assert plugin._core.decisions.relay.queue.depth() == 0


@pytest.mark.theloop_yaml(SETTINGS)
def test_decisions_not_relayed_yet_are_listed_by_the_queue_command(
    checklist: Any, plugin: Any
) -> None:
    plugin._core.decisions.relay.stop()  # hold the relay so the decision waits
    assert _say(checklist, f"!execute {ITEM}", until="👀") == ["👀"]
    listing = checklist.exec_command("!theloop queue")
    assert (
        "Decisions not relayed yet" in listing and f"execute · {ITEM} by gbin@localhost" in listing
    )
