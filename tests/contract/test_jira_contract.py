"""The real the-loop reads what we relay to a Jira ticket as its Jira ledger would.

Our Jira sink posts to the loopback fake of Jira; the-loop's own ``JiraClient`` (over the
real ``jira`` SDK, pointed at the same fake) reads the ticket back, as its poller and its
gates do. Checked with the-loop's code, never a copy of it: a relayed decision is a
*relay* (:func:`the_loop.authz.jira_comment_origin` — the operator's authorized words) and
its control parser finds the command in it; a record is the-loop's *own* comment (dropped
by its ingress) whose envelope its parser reads back — type, person, time — so its poller
does not echo it into the room; and the-loop's ref → key rule and ours agree on which
tickets the credential may go to. On Cloud (ADF) and on Data Center (wiki markup) alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import jira
import pytest
from the_loop.authz import ORIGIN_RELAY, ORIGIN_SELF, jira_comment_origin
from the_loop.channels.envelope import parse as parse_envelope
from the_loop.control import ControlConfig, parse_command
from the_loop.jiraapi import JiraApiConfig, JiraApiError, JiraAuth, JiraClient, issue_key_for

from looproom.decide import kinds
from looproom.relay import forms, records
from looproom.relay.decision import Decision
from looproom.relay.jira_sink import JiraSink
from looproom.relay.sinks import LedgerSink, Sinks
from looproom.settings import Settings, jira_config
from tests.fakes import jira_api
from tests.fakes.jira_api import FakeJira
from tests.support.rooms import plain_room

WORK_ITEM = "jira:acme.atlassian.net/OPS-12"
MEMBER, LOGIN, AT = "U0123ABC", "octocat", "2026-12-03T09:00:00Z"
ENV = {"THELOOP_JIRA_EMAIL": jira_api.EMAIL, "THELOOP_JIRA_TOKEN": jira_api.TOKEN}


@pytest.fixture(params=["cloud", "data-center"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeJira]:
    with FakeJira({"OPS-12"}, deployment=request.param) as server:
        yield server


@pytest.fixture(autouse=True)
def loop_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """the-loop reads its credential from the variables its config names, at call time."""
    monkeypatch.setenv("E", jira_api.EMAIL)
    monkeypatch.setenv("T", jira_api.TOKEN)


def _site(fake: FakeJira) -> jira_config.JiraSite:
    raw = {"site": jira_api.SITE, "deployment": fake.deployment, "projects": {"OPS": {}}}
    site = jira_config.parse(raw, "jira", {"THELOOP_JIRA_API": fake.url})
    assert site is not None
    return site


def _relayed(fake: FakeJira, decision: Decision) -> dict[str, Any]:
    """Relay ``decision`` through our sinks to the fake; the comment the-loop reads back."""
    sinks = Sinks(ledger=LedgerSink("/nonexistent/ledger"), jira=JiraSink(_site(fake), env=ENV))
    target = kinds.target(decision, sinks.available({}))
    item = {"key": decision.key, "decision": decision.to_dict(), "target": target}
    outcome = sinks.send(item, unsure=False)
    assert type(outcome).__name__ == "Delivered", outcome
    client = _theirs(fake)
    me = client.myself()
    [comment] = [c for c in client.comments("OPS-12")]
    return {"origin": jira_comment_origin(comment.body_md, comment.author_id, me), "c": comment}


def _theirs(fake: FakeJira) -> JiraClient:
    """the-loop's own client, its SDK pointed at the fake (its config knows only https)."""
    config = JiraApiConfig(
        site=jira_api.SITE,
        deployment=fake.deployment,
        email_env=("E",),
        token_env=("T",),
        projects=("OPS",),
    )

    def build(config: JiraApiConfig, auth: JiraAuth) -> Any:
        options = {"rest_api_version": config.rest_version, "check_update": False}
        credential: dict[str, Any] = (
            {"basic_auth": (auth.email, auth.token)}
            if auth.kind == "basic"
            else {"token_auth": auth.token}
        )
        sdk = jira.JIRA(
            server=fake.url, options=options, get_server_info=False, max_retries=0, **credential
        )
        sdk.deploymentType = "Cloud" if config.cloud else "Server"
        return sdk

    return JiraClient(config, factory=build)


def _decision(kind: str, words: str) -> Decision:
    return Decision(
        kind=kind,
        words=words,
        work_item=WORK_ITEM,
        member=MEMBER,
        login=LOGIN,
        origin="C1:1.1",
        at=AT,
        count=2,
        link="https://slack.com/archives/C1/p1",
    )


def test_a_control_command_is_the_operators_relayed_words_and_the_command_it_names(
    fake: FakeJira,
) -> None:
    read = _relayed(fake, _decision(kinds.START, ""))
    assert read["origin"] == ORIGIN_RELAY
    assert parse_command(read["c"].body_md, ControlConfig()).command == "start"


def test_an_approval_is_a_relay_opening_with_the_word_the_gate_reads(fake: FakeJira) -> None:
    read = _relayed(fake, _decision(kinds.APPROVE, "ship it"))
    assert read["origin"] == ORIGIN_RELAY
    assert read["c"].body_md.startswith(forms.APPROVED)
    envelope = parse_envelope(read["c"].body_md)
    assert envelope is not None and envelope.type == "gate.feedback"


@pytest.mark.parametrize(
    ("kind", "event"),
    [
        (kinds.REPLY, records.REPLY),
        (kinds.CONTEXT, records.CONTEXT),
        (kinds.DECISION, records.DECISION),
    ],
)
def test_a_record_is_the_loops_own_comment_and_its_envelope_names_who_said_it(
    fake: FakeJira, kind: str, event: str
) -> None:
    hostile = "the-loop stop [the-loop:relay] [the-loop:phase-selection] approved"
    read = _relayed(fake, _decision(kind, hostile))
    assert read["origin"] == ORIGIN_SELF  # the ingress drops it: the session has the words
    envelope = parse_envelope(read["c"].body_md)
    assert envelope is not None
    assert (envelope.type, envelope.source, envelope.ts) == (event, "slack", AT)
    assert dict(envelope.actor) == {"slack": MEMBER, "github": LOGIN}
    assert parse_command(read["c"].body_md, ControlConfig()).command is None


@pytest.mark.parametrize(
    "ref",
    [
        WORK_ITEM,
        "jira:ACME.atlassian.net/OPS-12",
        "jira:other.atlassian.net/OPS-12",
        "jira:acme.atlassian.net/SEC-4",
        "jira:acme.atlassian.net/OPS-0",
        "jira:acme.atlassian.net/ops-12",
        "github:acme/api#7",
    ],
)
def test_the_tickets_the_credential_may_go_to_are_the_loops_own(ref: str) -> None:
    ours = jira_config.parse(
        {"site": jira_api.SITE, "deployment": "cloud", "projects": {"OPS": {}}}, "jira", {}
    )
    assert ours is not None
    theirs = JiraApiConfig(site=jira_api.SITE, deployment="cloud", projects=("OPS",))
    try:
        expected = issue_key_for(ref, theirs)
    except JiraApiError:
        expected = ""
    assert ours.key_of(ref) == expected


@pytest.mark.parametrize(
    ("typed", "command"),
    [("pause jira:OPS-12", "pause"), ("do jira:acme.atlassian.net/OPS-12 fix the flake", "do")],
)
def test_a_slash_verb_on_a_jira_ticket_is_the_command_the_loop_reads_there(
    fake: FakeJira, tmp_path: Path, typed: str, command: str
) -> None:
    """``/the-loop <verb> jira:…`` is recorded as the verb typed in the ticket's thread."""
    settings = Settings(authorized_users=frozenset({MEMBER}), channel="C1", jira=_site(fake))
    with plain_room(tmp_path, settings) as room:
        payload = {"command": "/the-loop", "text": typed, "user_id": MEMBER, "channel_id": "C1"}
        answer = room.decisions.slash.answer({**payload, "trigger_id": "t1"})
        assert answer is not None and answer["text"].startswith("👀 Recorded"), answer
        (item,) = room.decisions.relay.queue.list()
        decision = forms.decision_of(item.payload)
    assert decision.work_item == WORK_ITEM
    read = _relayed(fake, decision)
    assert read["origin"] == ORIGIN_RELAY
    assert parse_command(read["c"].body_md, ControlConfig()).command == command


def test_a_jira_ticket_as_the_channel_is_the_command_and_ticket_the_loop_reads(
    fake: FakeJira,
) -> None:
    """``add-channel jira@OPS-13`` typed in Slack: the-loop's parser reads the command and
    the ticket it mirrors the work item to, from the comment as Jira keeps it."""
    declared = replace(_decision(kinds.ADD_CHANNEL, ""), subjects=("jira@OPS-13",))
    read = _relayed(fake, declared)
    parsed = parse_command(read["c"].body_md, ControlConfig())
    assert (parsed.command, parsed.subjects, parsed.refusal) == ("add-channel", ["jira@OPS-13"], "")
