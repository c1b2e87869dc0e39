"""``!theloop records``: the records read back from the ledger, GitHub or Jira, with links."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from looproom.decide import kinds
from looproom.relay.decision import Decision
from looproom.relay.jira_sink import JiraSink
from looproom.relay.record_reader import RecordReader
from looproom.relay.sinks import LedgerSink, Sinks
from looproom.settings import jira_config
from tests.fakes import jira_api
from tests.fakes.jira_api import FakeJira

ENV = {"THELOOP_JIRA_EMAIL": jira_api.EMAIL, "THELOOP_JIRA_TOKEN": jira_api.TOKEN}


def _relay(sinks: Sinks, work_item: str, kind: str, words: str, **fields: object) -> None:
    decision = Decision(
        kind=kind,
        words=words,
        work_item=work_item,
        member="U0ALICE01",
        origin=f"C1:{words}",
        at="2026-12-03T09:00:00Z",
        **fields,  # type: ignore[arg-type]
    )
    target = kinds.target(decision, sinks.available({}))
    sinks.send({"key": decision.key, "decision": decision.to_dict(), "target": target}, False)


def test_on_the_embedded_default_the_ledger_is_read(tmp_path: Path) -> None:
    sinks = Sinks(ledger=LedgerSink(tmp_path / "ledger.jsonl"))
    _relay(sinks, "github:acme/api#7", kinds.DECISION, "use Postgres", topic="tech", why="scale")
    _relay(sinks, "github:acme/api#8", kinds.DECISION, "elsewhere", why="other")
    _relay(sinks, "github:acme/api#7", kinds.START, "")
    answer = RecordReader(sinks.ledger).answer("github:acme/api#7")
    assert answer.splitlines() == [
        "Recorded on `github:acme/api#7` from Slack (1):",
        "1. 📌 decision — `slack:U0ALICE01`, 2026-12-03T09:00:00Z",
        "   “use Postgres”",
        "   why: scale",
    ]


def test_a_work_item_the_room_does_not_follow_is_not_read(tmp_path: Path) -> None:
    reader = RecordReader(LedgerSink(tmp_path / "l.jsonl"), known=lambda ref: False)
    assert "does not follow" in reader.answer("github:acme/secret#1")
    assert reader.answer("not a ref").startswith("usage:")
    assert "Nothing recorded" in RecordReader(LedgerSink(tmp_path / "l.jsonl")).answer("acme/api#7")


@pytest.fixture(params=["cloud", "data-center"])
def jira(request: pytest.FixtureRequest) -> Iterator[FakeJira]:
    with FakeJira({"OPS-12"}, deployment=request.param) as fake:
        yield fake


def test_on_jira_only_the_accounts_own_records_are_listed(jira: FakeJira, tmp_path: Path) -> None:
    raw = {"site": jira_api.SITE, "deployment": jira.deployment, "projects": {"OPS": {}}}
    site = jira_config.parse(raw, "jira", {"THELOOP_JIRA_API": jira.url})
    assert site is not None
    sink = JiraSink(site, env=ENV)
    sinks = Sinks(ledger=LedgerSink(tmp_path / "l.jsonl"), jira=sink)
    item = "jira:acme.atlassian.net/OPS-12"
    _relay(sinks, item, kinds.CONTEXT, "first line\nsecond", count=2, link="https://s/p")
    _relay(sinks, item, kinds.APPROVE, "ship it")
    mine = jira.posted()[0]
    jira.add("OPS-12", mine["body"])  # pasted by someone else: text, not a record
    found, problem = RecordReader(sinks.ledger, jira=sink).read(item)
    assert problem == ""
    assert [(r.kind, r.text, r.actor) for r in found] == [
        ("context.added", "first line\nsecond", {"slack": "U0ALICE01"})
    ]
    assert found[0].url.endswith(f"focusedCommentId={mine['id']}")


def test_a_ticket_that_cannot_be_read_is_said(tmp_path: Path) -> None:
    with FakeJira({"OPS-12"}) as fake:
        raw = {"site": jira_api.SITE, "deployment": "cloud", "projects": {"OPS": {}}}
        site = jira_config.parse(raw, "jira", {"THELOOP_JIRA_API": fake.url})
        assert site is not None
        reader = RecordReader(LedgerSink(tmp_path / "l.jsonl"), jira=JiraSink(site, env={}))
        answer = reader.answer("jira:acme.atlassian.net/OPS-12")
    assert answer.startswith("The records of") and "THELOOP_JIRA_TOKEN" in answer


def test_records_said_in_its_thread_and_in_its_channel_each_link_where(tmp_path: Path) -> None:
    """A work item's records come from its thread in the main room and from its
    collaboration channel alike; each says where it was said, like the-loop's own list."""
    sinks = Sinks(ledger=LedgerSink(tmp_path / "ledger.jsonl"))
    in_thread = "https://acme.slack.com/archives/C0LOOP0001/p1800000000000100"
    in_channel = "https://acme.slack.com/archives/C0OPS00001/p1800000000000200"
    _relay(sinks, "github:acme/api#7", kinds.CONTEXT, "logs attached", count=3, link=in_thread)
    _relay(sinks, "github:acme/api#7", kinds.DECISION, "use Postgres", link=in_channel)
    _relay(sinks, "github:acme/api#7", kinds.REPLY, "Option 2")
    lines = RecordReader(sinks.ledger).answer("github:acme/api#7").splitlines()
    assert lines[0] == "Recorded on `github:acme/api#7` from Slack (3):"
    assert lines[1].startswith("1. 📎 context")
    assert lines[3] == f"   said in [this thread]({in_thread})"
    assert lines[4].startswith("2. 📌 decision")
    assert lines[6] == "   why: none given"  # recorded without its reason, as it may be
    assert lines[7] == f"   said in [this thread]({in_channel})"
    assert lines[8].startswith("3. 💬 reply") and len(lines) == 10  # a reply names no thread
