"""Every control verb we relay is read by the real the-loop as the command meant.

Each record is parsed with the-loop's own ``parse_command`` and ``ControlConfig``, with
its default keywords and with a deployment's renamed ones — read by our loader from a
the-loop CLI config file, as ``THELOOP_LOOP_CONFIG`` names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from the_loop.channels.envelope import parse as parse_envelope
from the_loop.control import DEFAULT_KEYWORDS, ControlConfig, parse_command
from the_loop.instance import parse_address

from looproom import verb_names
from looproom.decide import judging, kinds
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.judging import Received, Where
from looproom.decide.verdict import ADMITTED
from looproom.relay import forms, records
from looproom.relay.decision import Decision
from looproom.room.memory import ItemState
from looproom.settings import keywords

WORK_ITEM = "github:acme/api#7"
MEMBER = "U0123ABC"
AT = "2026-11-30T10:00:00Z"
#: What a member types for each verb, and the words the-loop must find after the keyword.
TYPED = {
    verb_names.START: ("start", ""),
    verb_names.STOP: ("stop", ""),
    verb_names.PAUSE: ("pause", ""),
    verb_names.RESUME: ("resume", ""),
    verb_names.CONTRIBUTE: ("contribute", ""),
    verb_names.CLEANUP: ("cleanup", ""),
    verb_names.DO: ("!do fix the flaky retry test", "fix the flaky retry test"),
    verb_names.REVIEW: ("!review focus on the migration", "focus on the migration"),
    verb_names.EXECUTE: ("execute", ""),
}
RENAMED = {
    "start": "loop go",
    "stop": "loop halt",
    "pause": "loop hold",
    "resume": "loop carry-on",
    "contribute": "loop help-out",
    "cleanup": "loop tidy",
    "do": "loop task",
    "review": "loop critique",
    "execute": "loop run",
}

#: The thread's work item, which the room was shown: the bound admits it.
SHOWN = Bound(lambda _ref: True).refusal


def relayed(typed: str, keywords_: keywords.Keywords) -> Decision:
    """What the room records when an authorized member types ``typed`` in the thread."""
    addressed = typed.startswith("!")
    said = Received(MEMBER, typed.lstrip("!"), "C1", "400.0", "100.0", addressed=addressed)
    destinations = forms.Destinations(github=True, keywords=keywords_)
    policy = AccessPolicy("UBOT", frozenset({MEMBER}), destinations=destinations)
    verdict = judging.judge_typed(
        said, Where(WORK_ITEM, thread_bound=True), lambda _i: ItemState(), policy, AT, bound=SHOWN
    )
    assert verdict.status == ADMITTED and verdict.decision is not None, verdict
    return verdict.decision


def body(decision: Decision, keywords_: keywords.Keywords) -> str:
    destinations = forms.Destinations(github=True, keywords=keywords_)
    target: dict[str, Any] = kinds.target(decision, destinations)
    assert target["sink"] == forms.GITHUB and target["number"] == 7
    return str(target["body"])


@pytest.mark.parametrize("command", sorted(TYPED))
def test_each_verb_is_the_command_the_loop_reads_with_its_default_keywords(command: str) -> None:
    typed, words = TYPED[command]
    text = body(relayed(typed, keywords.Keywords()), keywords.Keywords())
    result = parse_command(text, ControlConfig())
    assert result.command == command and not result.ambiguous
    assert text.startswith(f"the-loop {command}")
    if words:
        assert text.split("\n", 1)[0] == f"the-loop {command} {words}"
    envelope = parse_envelope(text)
    assert envelope is not None and envelope.type == "control.command"


@pytest.mark.parametrize("command", sorted(TYPED))
def test_each_verb_follows_a_deployments_renamed_keywords(command: str, tmp_path: Path) -> None:
    config = tmp_path / "cli-config.yaml"
    routing = {"routing": {"control": {"keywords": RENAMED}}}
    config.write_text(yaml.safe_dump(routing), encoding="utf-8")
    ours = keywords.from_loop_config(str(config))
    text = body(relayed(TYPED[command][0], ours), ours)
    theirs = ControlConfig.from_mapping(routing["routing"]["control"])
    assert parse_command(text, theirs).command == command
    # The default words would be prose to this deployment: nothing of them remains.
    assert parse_command(text, ControlConfig()).command is None


def test_a_command_the_deployment_switched_off_is_refused_not_relayed(tmp_path: Path) -> None:
    switched_off = keywords.parse({"stop": ""}, "relay.keywords")
    said = Received(MEMBER, "stop", "C1", "400.0", "100.0")
    destinations = forms.Destinations(github=True, keywords=switched_off)
    policy = AccessPolicy("UBOT", frozenset({MEMBER}), destinations=destinations)
    verdict = judging.judge_typed(
        said, Where(WORK_ITEM, thread_bound=True), lambda _i: ItemState(), policy, AT, bound=SHOWN
    )
    assert verdict.reason == "unwritable" and "switched off" in verdict.text
    assert ControlConfig.from_mapping({"keywords": {"stop": ""}}).keyword("stop") == ""


def test_the_one_table_of_default_keywords_is_the_loops_own() -> None:
    assert dict(keywords.DEFAULTS) == DEFAULT_KEYWORDS


@pytest.mark.parametrize("command", sorted(DEFAULT_KEYWORDS))
def test_a_quoted_record_breaks_every_default_keyword(command: str) -> None:
    quoted = records.defang(f"{DEFAULT_KEYWORDS[command]} github:acme/api#7")
    assert parse_command(quoted, ControlConfig()).command is None


@pytest.mark.parametrize(
    "typed", ["start instance:team-b", "start Instance:Team-B", "pause instance:team-b"]
)
def test_an_instance_address_is_the_one_the_loop_reads(typed: str) -> None:
    """``start instance:team-b``: where the-loop's instances take only the work items a
    start names them in (its ``addressed`` scope), the address rides on the keyword's line,
    and the-loop reads both the command and the instance from it."""
    text = body(relayed(typed, keywords.Keywords()), keywords.Keywords())
    result = parse_command(text, ControlConfig())
    assert result.command == typed.split()[0] and not result.ambiguous
    address = parse_address(text)
    assert address.name == "team-b" and not address.ambiguous


@pytest.mark.parametrize("typed", ["!start instance:", "!start instance:Bad_Name", "!start team-b"])
def test_anything_else_after_a_bare_verb_is_still_refused(typed: str) -> None:
    said = Received(MEMBER, typed.lstrip("!"), "C1", "400.0", "100.0", addressed=True)
    policy = AccessPolicy("UBOT", frozenset({MEMBER}), destinations=forms.Destinations(github=True))
    verdict = judging.judge_typed(
        said, Where(WORK_ITEM, thread_bound=True), lambda _i: ItemState(), policy, AT, bound=SHOWN
    )
    assert verdict.status != ADMITTED and "takes nothing after the work item" in verdict.text
