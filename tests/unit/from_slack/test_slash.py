"""``/the-loop``: help, status, a verb on a work item — answered ephemerally, judged like typing."""

from __future__ import annotations

import dataclasses
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from the_loop.channels.commands import resolve_work_item

from looproom.assembly import Activation
from looproom.events import Event
from looproom.from_slack import slash
from looproom.relay import forms
from looproom.settings import KickoffSettings, Settings, jira_config, keywords
from tests.support import signed
from tests.support.rooms import plain_room

ITEM = "github:acme/api#7"
OPS_12 = "jira:acme.atlassian.net/OPS-12"
ALICE, CAROL, MALLORY = "U0ALICE01", "U0CAROL01", "U0MALLORY"
SECRET = "slash-signing-secret"


@pytest.fixture
def room(tmp_path: Path) -> Iterator[Activation]:
    settings = Settings(
        authorized_users=frozenset({ALICE}),
        collaborators=frozenset({CAROL}),
        channel="C1",
        rooms=(("acme/*", "C1"),),
    )
    with plain_room(tmp_path, settings, {"THELOOP_SLACK_SIGNING_SECRET": SECRET}) as built:
        yield built


def payload(text: str, member: str = ALICE, trigger: str = "t1") -> dict[str, Any]:
    return {
        "command": "/the-loop",
        "text": text,
        "user_id": member,
        "channel_id": "C1",
        "trigger_id": trigger,
    }


def ask(room: Activation, text: str, **fields: Any) -> dict[str, Any]:
    answer = room.decisions.slash.answer(payload(text, **fields))
    assert answer is not None and answer["response_type"] == "ephemeral"
    return answer


def test_help_lists_every_verb_and_the_forms(room: Activation) -> None:
    text = ask(room, "help")["text"]
    assert "/the-loop status" in text and "/the-loop new [<repo>:] <title>" in text
    assert all(f"`{verb}`" in text for verb in ("start", "stop", "do", "review", "execute"))
    assert ask(room, "")["text"] == text


def test_an_unknown_word_is_answered_with_the_help(room: Activation) -> None:
    assert ask(room, "launch")["text"].startswith("`launch` is not something")


def test_another_command_or_a_payload_without_a_member_is_not_ours(room: Activation) -> None:
    assert room.decisions.slash.answer({**payload("help"), "command": "/other"}) is None
    assert room.decisions.slash.answer({**payload("help"), "user_id": ""}) is None


def test_a_verb_names_its_work_item_and_is_recorded_once(room: Activation) -> None:
    first = ask(room, f"start {ITEM}")["text"]
    assert first.startswith("👀 Recorded the start request for `github:acme/api#7`")
    again = ask(room, f"start {ITEM}")["text"]  # the same trigger: Slack's redelivery
    assert "already recorded" in again
    fresh = ask(room, f"stop {ITEM}", trigger="t2")["text"]
    assert fresh.startswith("👀 Recorded the stop request")
    assert len(room.decisions.relay.queue.list()) == 2


def test_a_verb_on_another_trackers_work_item_is_refused_with_the_reason(room: Activation) -> None:
    # No Jira ledger is configured: no ticket is the operator's, so the bound says why.
    refused = ask(room, "start jira:OPS-12")["text"]
    assert "`jira:OPS-12` is not a work item of this room" in refused
    assert "no Jira site is configured" in refused
    assert "slack.authorizedUsers" in ask(room, "start jira:OPS-12", member=MALLORY)["text"]
    assert room.decisions.relay.queue.list() == []


def test_a_verb_without_a_work_item_says_how_to_name_one(room: Activation) -> None:
    assert "github:owner/repo#7" in ask(room, "start")["text"]


def test_the_grants_hold_for_the_slash_command_too(room: Activation) -> None:
    assert "`control.command`" in ask(room, f"start {ITEM}", member=CAROL)["text"]
    assert "slack.authorizedUsers" in ask(room, f"start {ITEM}", member=MALLORY)["text"]
    assert room.decisions.relay.queue.list() == []


def test_status_shows_where_each_work_item_is_what_it_waits_on_and_who_is_asked(
    room: Activation,
) -> None:
    assert "follows no work item" in ask(room, "status")["text"]
    gate = Event.from_wire(
        {
            "id": "g1",
            "eventType": "phase-approval-pending",
            "workItem": ITEM,
            "detail": {"node": "design-approval"},
        }
    )
    room.memory.observe(gate, "C1", "100.0")
    text = ask(room, "status")["text"]
    assert "`github:acme/api#7`" in text and "`design-approval` gate" in text
    assert f"<@{ALICE}>" in text and f"<@{CAROL}>" not in text  # a collaborator cannot approve
    assert "`github:acme/api#9`" in ask(room, "status acme/api#9")["text"]
    assert "is not a work item ref" in ask(room, "status nonsense")["text"]


def test_over_http_only_a_signed_command_is_answered(room: Activation) -> None:
    body = urllib.parse.urlencode(payload("help")).encode()
    answer = room.routes.command(signed.slack_headers(SECRET, body), body)
    assert answer.status == 200 and answer.body["response_type"] == "ephemeral"
    forged = room.routes.command(signed.slack_headers("not-the-secret", body), body)
    assert forged.status == 401
    stale = room.routes.command(signed.slack_headers(SECRET, body, int(time.time()) - 600), body)
    assert stale.status == 401
    other = urllib.parse.urlencode({**payload("help"), "command": "/x"}).encode()
    assert room.routes.command(signed.slack_headers(SECRET, other), other).status == 400


def test_without_a_signing_secret_the_http_route_fails_closed() -> None:
    checked = slash.verify({}, b"command=%2Fthe-loop", "", time.time())
    assert checked.status == 503


def test_the_manifest_points_slack_at_the_route_the_server_serves() -> None:
    from looproom import manifest
    from looproom.server import app

    assert manifest.COMMANDS_PATH == app.COMMANDS
    assert manifest.SLASH_COMMAND == slash.COMMAND


def test_status_adds_the_loops_own_view_and_says_when_it_cannot_be_had(tmp_path: Path) -> None:
    from tests.fakes.loop_api import FakeLoop

    with FakeLoop({ITEM: False}) as loop:
        loop.work_items[ITEM] = {"ref": ITEM, "control": {"command": "pause"}}
        settings = Settings(authorized_users=frozenset({ALICE}))
        with plain_room(tmp_path, settings, {"THELOOP_LOOP_API": loop.url}) as built:
            built.memory.index("C1", "100.0", ITEM)
            built.memory.put(ITEM, built.memory.get(ITEM))
            text = ask(built, f"status {ITEM}")["text"]
            assert "the-loop: last command `pause`" in text
            loop.stop()
            alone = ask(built, "status")["text"]
            assert "shown from the room's memory alone" in alone and f"`{ITEM}`" in alone


def test_with_the_jira_ledger_a_verb_names_a_jira_work_item_as_a_github_one(
    tmp_path: Path,
) -> None:
    """A Jira ticket of the configured site, long or short form, is judged as if the
    verb were typed in its thread; one of another site is refused, saying why."""
    raw = {"site": "acme.atlassian.net", "deployment": "cloud", "projects": {"OPS": {}}}
    site = jira_config.parse(raw, "jira")
    settings = Settings(authorized_users=frozenset({ALICE}), channel="C1", jira=site)
    with plain_room(tmp_path, settings) as room:
        long = ask(room, "do jira:acme.atlassian.net/OPS-12 fix the flaky test")["text"]
        assert long.startswith(f"👀 Recorded the ad-hoc task for `{OPS_12}`")
        short = ask(room, "pause jira:OPS-12", trigger="t2")["text"]
        assert short.startswith(f"👀 Recorded the pause request for `{OPS_12}`")
        elsewhere = ask(room, "start jira:other.example/OPS-3", trigger="t3")["text"]
        assert "not a ticket of the configured Jira site" in elsewhere
        refused = ask(room, "start jira:OPS-12", member=MALLORY, trigger="t4")["text"]
        assert "slack.authorizedUsers" in refused
        relayed = [forms.decision_of(item.payload) for item in room.decisions.relay.queue.list()]
        assert [(d.kind, d.work_item, d.words) for d in relayed] == [
            ("do", OPS_12, "fix the flaky test"),
            ("pause", OPS_12, ""),
        ]


def test_a_work_item_the_operator_never_configured_is_refused(room: Activation) -> None:
    """What a slash command names is bounded as in the-loop: a repository the settings
    name, or a work item the room was shown — never any repository the token can reach."""
    elsewhere = ask(room, "start github:stranger/repo#3")["text"]
    assert "is not a work item of this room" in elsewhere and "`stranger/repo`" in elsewhere
    assert (
        "slack.authorizedUsers" in ask(room, "start github:stranger/repo#3", member=MALLORY)["text"]
    )  # who may not start anything is told that, and nothing of the settings
    room.decisions.desk.memory.observe(
        Event.from_wire(
            {"id": "e1", "eventType": "comment.agent", "workItem": "github:stranger/repo#4"}
        )
    )
    shown = ask(room, "start github:stranger/repo#4", trigger="t2")["text"]
    assert shown.startswith("👀 Recorded the start request for `github:stranger/repo#4`")
    assert ask(room, "start github:ACME/web#9", trigger="t3")["text"].startswith("👀 Recorded")
    assert len(room.decisions.relay.queue.list()) == 2


@pytest.mark.parametrize(
    ("kickoff", "rooms", "named"),
    [
        (("acme/api",), (), "github:acme/api#7"),  # the usual setup: the kickoff's
        (("acme/api",), (("acme/web", "C1"),), "github:acme/web#7"),  # the room's own first
        (("acme/api", "acme/web"), (), ""),  # several: the command must say which
    ],
)
def test_hash_n_is_the_rooms_repository_else_the_kickoffs_one(
    tmp_path: Path, kickoff: tuple[str, ...], rooms: tuple[tuple[str, str], ...], named: str
) -> None:
    settings = Settings(
        authorized_users=frozenset({ALICE}),
        channel="C1",
        rooms=rooms,
        kickoffs=(("C1", KickoffSettings(kickoff)),),
    )
    with plain_room(tmp_path, settings) as room:
        answer = ask(room, "pause #7")["text"]
    if named:
        assert answer.startswith(f"👀 Recorded the pause request for `{named}`")
    else:
        assert "needs a repository" in answer


#: The usual setup: one kickoff repository, no ``rooms:``; and the-loop's own words for it.
ONE_KICKOFF = Settings(
    authorized_users=frozenset({ALICE}),
    channel="C1",
    kickoffs=(("C1", KickoffSettings(("acme/api",))),),
)
THEIRS = {"channels": {"slack": {"kickoff": {"repo": "acme/api"}}}}


@pytest.mark.parametrize(
    ("typed", "kind", "words"),
    [
        ("pause 7", "pause", ""),
        ("execute 7", "execute", ""),
        ("do 7 fix the flaky test", "do", "fix the flaky test"),
    ],
)
def test_a_bare_number_after_a_control_verb_is_the_work_item_the_loop_names(
    tmp_path: Path, typed: str, kind: str, words: str
) -> None:
    """the-loop's own ``/the-loop pause 7`` is ``pause #7``: the same work item here."""
    with plain_room(tmp_path, ONE_KICKOFF) as room:
        answer = ask(room, typed)["text"]
        relayed = [forms.decision_of(item.payload) for item in room.decisions.relay.queue.list()]
    assert answer.startswith("👀 Recorded the ") and f"for `{ITEM}`" in answer
    assert [(d.kind, d.work_item, d.words) for d in relayed] == [(kind, ITEM, words)]
    assert resolve_work_item(typed.split()[1], THEIRS).ref == ITEM


@pytest.mark.parametrize("typed", ["skip 2", "approve 2", "changes 2 tests still fail"])
def test_a_number_after_any_other_verb_keeps_its_meaning(tmp_path: Path, typed: str) -> None:
    """``skip 2`` names a phase, an approval's words are words: no work item is read from
    them, so in a room bound to none they are refused, asking which work item."""
    with plain_room(tmp_path, ONE_KICKOFF) as room:
        answer = ask(room, typed)["text"]
        assert room.decisions.relay.queue.list() == []
    assert "not bound to one work item" in answer and "acme/api#2" not in answer


@given(
    number=st.integers(min_value=0, max_value=999_999_999),
    tail=st.sampled_from(["", " fix it", "\nthe body", " instance:team-b"]),
    verb=st.sampled_from(keywords.COMMANDS),
)
def test_a_bare_number_first_is_read_as_hash_n_up_to_its_nine_digits(
    number: int, tail: str, verb: str
) -> None:
    typed = slash.Slash(ALICE, "C1", verb, f"{number}{tail}")
    assert slash.numbered(typed).rest == f"#{number}{tail}"
    too_long = slash.Slash(ALICE, "C1", verb, f"1{number:09d}{tail}")
    assert slash.numbered(too_long) == too_long  # past ``#N``'s bound, as ``#N`` is


@given(verb=st.sampled_from(["skip", "approve", "changes", "new", "status", "record-decision"]))
def test_after_a_verb_that_is_not_the_loops_a_number_is_left_as_typed(verb: str) -> None:
    typed = slash.Slash(ALICE, "C1", verb, "7 things")
    assert slash.numbered(typed) == typed
    assert slash.numbered(typed, own=True).rest == "#7 things"  # the operator's own word


def test_a_renamed_keywords_last_word_is_its_command_as_the_loop_reads_it(tmp_path: Path) -> None:
    """``/the-loop go 7`` where start is ``loop go``: the-loop's slash command reads a
    control keyword's last word as its command; so does this one."""
    settings = dataclasses.replace(ONE_KICKOFF, relay_keywords={"start": "loop go"})
    with plain_room(tmp_path, settings) as room:
        answer = ask(room, "go 7")["text"]
        relayed = [forms.decision_of(item.payload) for item in room.decisions.relay.queue.list()]
    assert answer.startswith(f"👀 Recorded the start request for `{ITEM}`")
    assert [(d.kind, d.work_item) for d in relayed] == [("start", ITEM)]
