"""The room's newer verbs, read back by the real the-loop as what they were meant to be.

Collaborators and collaboration channels are relayed as the-loop's control commands and
parsed here with its own ``control.parse_command``; an operator's own command word is read
by ``ControlConfig`` from the same CLI config as the renamed keywords; a pasted GitHub
link names the work item the-loop's slash command resolves; a kickoff's ``<repo>:`` prefix
picks the repository the-loop's kickoff grammar picks; ``@bot help public`` is told from
``help`` as the-loop tells them; and the instance and standing calls are bodies the-loop's
API models accept.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from the_loop.api.routes import RestartBody, StandingControlBody, StandingSayBody
from the_loop.channels import verbs as their_verbs
from the_loop.channels.commands import resolve_work_item
from the_loop.channels.envelope import parse as parse_envelope
from the_loop.channels.kickoff import resolve_target
from the_loop.control import ControlConfig, parse_command

from looproom import workitem
from looproom.decide import judging, kinds
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.judging import Received, Where
from looproom.decide.verdict import ADMITTED
from looproom.from_slack import room_help
from looproom.kickoff import prefix
from looproom.relay import forms, standing
from looproom.relay.decision import Decision
from looproom.room.memory import ItemState
from looproom.settings import keywords

WORK_ITEM = "github:acme/api#7"
MEMBER, EVE, BOT = "U0123ABC", "U0EVE0001", "U0BOT0001"
AT = "2026-11-30T10:00:00Z"

#: The thread's work item, which the room was shown: the bound admits it.
SHOWN = Bound(lambda _ref: True).refusal


def relayed(
    typed: str, said: keywords.Keywords, channel: str = "C1", where: str = WORK_ITEM
) -> Decision:
    """What the room records when a decider types ``typed`` in the work item's thread."""
    destinations = forms.Destinations(github=True, keywords=said)
    policy = AccessPolicy(BOT, frozenset({MEMBER}), destinations=destinations)
    message = Received(MEMBER, typed, channel, "400.0", "100.0")
    verdict = judging.judge_typed(
        message, Where(where, thread_bound=True), lambda _i: ItemState(), policy, AT, bound=SHOWN
    )
    assert verdict.status == ADMITTED and verdict.decision is not None, verdict
    return verdict.decision


def body(decision: Decision, said: keywords.Keywords) -> str:
    target: dict[str, Any] = kinds.target(decision, forms.Destinations(github=True, keywords=said))
    assert target["sink"] == forms.GITHUB and target["number"] == 7
    return str(target["body"])


@pytest.mark.parametrize("verb", [kinds.ADD_COLLABORATOR, kinds.REMOVE_COLLABORATOR])
def test_collaborators_are_the_command_and_the_people_the_loop_reads(verb: str) -> None:
    said = keywords.Keywords()
    text = body(relayed(f"{verb} <@{EVE}|eve> @Dana-Smith", said), said)
    result = parse_command(text, ControlConfig())
    assert result.command == verb and not result.ambiguous
    assert result.slack == [EVE] and result.subjects == ["dana-smith"]
    envelope = parse_envelope(text)
    assert envelope is not None and envelope.type == "control.command"


def test_a_collaborator_command_follows_a_deployments_renamed_keyword(tmp_path: Path) -> None:
    routing = {"routing": {"control": {"keywords": {"add-collaborator": "loop invite"}}}}
    config = tmp_path / "cli.yaml"
    config.write_text(yaml.safe_dump(routing), encoding="utf-8")
    ours = keywords.from_loop_config(str(config))
    text = body(relayed(f"add-collaborator <@{EVE}>", ours), ours)
    theirs = ControlConfig.from_mapping(routing["routing"]["control"])
    assert parse_command(text, theirs).slack == [EVE]
    assert parse_command(text, ControlConfig()).command is None


@pytest.mark.parametrize(
    ("typed", "channel", "ref"),
    [
        ("add-channel <#C0WAR0001|war-room>", "C1", "slack@C0WAR0001"),
        ("add-channel #war-room", "C1", "slack@#war-room"),
        ("add-channel C0WAR0001", "C1", "slack@C0WAR0001"),
        ("remove-channel <#C0WAR0001>", "C1", "slack@C0WAR0001"),
        ("remove-channel", "C0WAR0001", "slack@C0WAR0001"),  # the room it is typed in
    ],
)
def test_a_channel_is_the_command_and_the_room_the_loop_reads(
    typed: str, channel: str, ref: str
) -> None:
    said = keywords.Keywords()
    text = body(relayed(typed, said, channel=channel), said)
    result = parse_command(text, ControlConfig())
    assert result.command == typed.split()[0] and result.subjects == [ref]
    assert not result.refusal


@pytest.mark.parametrize(
    ("typed", "mode"), [("all", "all"), ("mentions", "mentions"), ("addressed", "mentions")]
)
def test_a_channel_that_listens_to_everything_is_read_with_its_mode(typed: str, mode: str) -> None:
    """``add-channel #room --listen all``: the flag as the-loop's own parser reads it (this
    room's word ``addressed`` is the-loop's ``mentions``)."""
    said = keywords.Keywords()
    text = body(relayed(f"add-channel <#C0WAR0001|war-room> --listen {typed}", said), said)
    result = parse_command(text, ControlConfig())
    assert result.command == "add-channel" and result.subjects == ["slack@C0WAR0001"]
    assert result.listen == mode and not result.refusal


def test_an_operators_own_word_arms_the_work_item_on_its_loop(tmp_path: Path) -> None:
    control = {
        "commands": {
            "ship": {"graph": "pdlc-adhoc-loop", "keyword": "loop deliver"},
            "triage": {"graph": "pdlc-review-loop"},
        }
    }
    config = tmp_path / "cli.yaml"
    config.write_text(yaml.safe_dump({"routing": {"control": control}}), encoding="utf-8")
    ours = keywords.from_loop_config(str(config), kinds.VERBS)
    theirs = ControlConfig.from_mapping(control)
    assert set(ours.custom) == set(theirs.custom_commands)
    for typed, loop in (("ship", "pdlc-adhoc-loop"), ("triage", "pdlc-review-loop")):
        text = body(relayed(typed, ours), ours)
        result = parse_command(text, theirs)
        assert (result.command, result.loop) == ("start", loop), text
    # Typed as the keyword's last word, too, as the-loop's room composes it.
    text = body(relayed("deliver", ours), ours)
    assert text.startswith("loop deliver\n")
    assert parse_command(text, theirs).loop == "pdlc-adhoc-loop"


def test_an_operators_word_may_not_shadow_a_verb_of_the_room(tmp_path: Path) -> None:
    control = {"commands": {"approve": {"graph": "pdlc-adhoc-loop"}}}
    config = tmp_path / "cli.yaml"
    config.write_text(yaml.safe_dump({"routing": {"control": control}}), encoding="utf-8")
    with pytest.raises(keywords.KeywordError, match="already a verb"):
        keywords.from_loop_config(str(config), kinds.VERBS)


@pytest.mark.parametrize(
    "link",
    [
        "https://github.com/acme/api/issues/7",
        "https://github.com/acme/api/pull/7",
        "https://github.com/Acme/API.js/pull/12",
        "https://github.com/acme/api/issues/7/",
    ],
)
def test_a_pasted_link_names_the_work_item_the_loop_resolves(link: str) -> None:
    theirs = resolve_work_item(link, {})
    ours = workitem.resolve_typed(link)
    assert ours is not None and str(ours) == theirs.ref
    assert str(workitem.resolve_typed(f"<{link}|{theirs.ref}>")) == theirs.ref  # Slack's link
    said = keywords.Keywords()
    if theirs.ref == WORK_ITEM:
        text = body(relayed(f"start <{link}>", said, where=""), said)
        assert parse_command(text, ControlConfig()).command == "start"


REPOS = ("acme/api", "acme/web", "other/web")


@pytest.mark.parametrize(
    "typed",
    [
        "acme/web: Flaky teardown",
        "api: Flaky teardown\nIt fails one run in ten.",
        "web: ambiguous between two",
        "Bug: the teardown is flaky",
        "acme/nope: Flaky teardown",
        "just a title",
    ],
)
def test_a_kickoff_prefix_picks_the_repository_the_loop_picks(typed: str) -> None:
    theirs = resolve_target(typed, SimpleNamespace(kickoff_repo=""), {"repositories": REPOS})
    repo, words, refusal = prefix.split(typed, REPOS)
    if theirs.outcome == "resolved":
        assert (repo, words, refusal) == (theirs.repo, theirs.text, "")
    elif theirs.outcome == "unknown-repo":
        assert repo == "" and refusal
    else:  # no prefix read, or a bare one naming several: nothing is picked, nothing refused
        assert (repo, refusal) == ("", "")


@pytest.mark.parametrize(
    "text",
    ["help", "help public", "HELP Public please", "help me out", "helpful", "say help public"],
)
def test_help_and_help_public_are_told_apart_as_the_loop_tells_them(text: str) -> None:
    verb = their_verbs.parse_verb(text)
    theirs = "" if verb is None or verb.name != "help" else "private"
    if verb is not None and their_verbs.wants_public_help(verb):
        theirs = "public"
    assert room_help.asked(f"<@{BOT}> {text}", BOT) == theirs


def test_the_instance_and_standing_calls_are_bodies_the_loops_api_accepts() -> None:
    assert RestartBody.model_validate({"withUpgrade": True}).withUpgrade is True
    control = StandingControlBody.model_validate({"name": "triage", "verb": "restart"})
    assert (control.name, control.verb) == ("triage", "restart")
    decision = Decision(
        kinds.REPLY, "standing:triage", MEMBER, "C1:1.0", AT, words="look at the queue"
    )
    target = kinds.target(decision, forms.Destinations(loop=True))
    assert (target["sink"], target["path"]) == (forms.LOOP, standing.SAY_PATH)
    say = StandingSayBody.model_validate(target["json"])
    assert (say.name, say.text, say.actor) == ("triage", "look at the queue", f"slack:{MEMBER}")
