"""``!theloop records`` at its documented reaches (`docs/admin.md`): the newest 20 records
listed, the ticket's comments read ten pages of 100 on GitHub and fifty on Jira — and a
ticket busier than that said so in the answer, never a silent "nothing recorded".

Against the loopback GitHub and Jira, which page as the real ones do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from looproom.decide import kinds
from looproom.relay.decision import Decision
from looproom.relay.jira_sink import JiraSink
from looproom.relay.record_reader import Record, RecordReader, render
from looproom.relay.sinks import GitHubSink, LedgerSink, Sinks
from looproom.settings import jira_config
from tests.fakes import jira_api
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.jira_api import FakeJira

GITHUB_REACH, JIRA_REACH, LISTED = 10 * 100, 50 * 100, 20
ISSUE, TICKET = "github:acme/api#7", "jira:acme.atlassian.net/OPS-12"
ENV = {"THELOOP_JIRA_EMAIL": jira_api.EMAIL, "THELOOP_JIRA_TOKEN": jira_api.TOKEN}
EMPTY = {"type": "doc", "version": 1, "content": []}
SHORT = "Only the ticket's first"


def _record(sinks: Sinks, work_item: str) -> None:
    decision = Decision(
        kind=kinds.DECISION,
        words="use Postgres",
        work_item=work_item,
        member="U0ALICE01",
        origin="C1:use Postgres",
        at="2026-12-03T09:00:00Z",
        why="it scales",
    )
    target = kinds.target(decision, sinks.available({}))
    sinks.send({"key": decision.key, "decision": decision.to_dict(), "target": target}, False)


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub({"acme/api": {7}}) as fake:
        yield fake


def _github_answer(github: FakeGitHub, tmp_path: Path, others: int) -> str:
    for n in range(others):
        github._create(("acme/api", 7), f"comment {n}")
    sinks = Sinks(ledger=LedgerSink(tmp_path / "l.jsonl"), github=GitHubSink(github.url, TOKEN))
    _record(sinks, ISSUE)
    return RecordReader(sinks.ledger, sinks.github).answer(ISSUE)


def test_a_record_that_is_the_thousandth_comment_on_github_is_listed(
    github: FakeGitHub, tmp_path: Path
) -> None:
    answer = _github_answer(github, tmp_path, GITHUB_REACH - 1)
    assert answer.startswith(f"Recorded on `{ISSUE}` from Slack (1):")
    assert "“use Postgres”" in answer and SHORT not in answer


def test_past_the_thousandth_comment_on_github_the_answer_says_the_read_stopped_short(
    github: FakeGitHub, tmp_path: Path
) -> None:
    answer = _github_answer(github, tmp_path, GITHUB_REACH)
    assert answer.splitlines() == [
        f"Nothing recorded on `{ISSUE}` from Slack yet.",
        "Only the ticket's first 1,000 comments were read: records after them are not "
        "listed here; the ticket has them.",
    ]


def _jira_answer(tmp_path: Path, others: int) -> str:
    with FakeJira({"OPS-12"}) as jira:
        for _ in range(others):
            jira.add("OPS-12", EMPTY)
        raw = {"site": jira_api.SITE, "deployment": "cloud", "projects": {"OPS": {}}}
        site = jira_config.parse(raw, "jira", {"THELOOP_JIRA_API": jira.url})
        assert site is not None
        sinks = Sinks(ledger=LedgerSink(tmp_path / "l.jsonl"), jira=JiraSink(site, env=ENV))
        _record(sinks, TICKET)
        return RecordReader(sinks.ledger, jira=sinks.jira).answer(TICKET)


def test_a_record_that_is_the_five_thousandth_comment_on_jira_is_listed(tmp_path: Path) -> None:
    answer = _jira_answer(tmp_path, JIRA_REACH - 1)
    assert answer.startswith(f"Recorded on `{TICKET}` from Slack (1):")
    assert SHORT not in answer


def test_past_the_five_thousandth_comment_on_jira_the_answer_says_so(tmp_path: Path) -> None:
    answer = _jira_answer(tmp_path, JIRA_REACH)
    assert answer.startswith(f"Nothing recorded on `{TICKET}` from Slack yet.")
    assert f"{SHORT} 5,000 comments were read" in answer


def _records(count: int) -> list[Record]:
    return [Record("decision.recorded", {"slack": "U0ALICE01"}, text=f"r{n}") for n in range(count)]


def test_twenty_records_are_all_listed() -> None:
    lines = render(ISSUE, _records(LISTED)).splitlines()
    assert lines[0] == f"Recorded on `{ISSUE}` from Slack (20):"
    assert [line.split(".")[0] for line in lines[1::2]] == [str(n) for n in range(1, 21)]
    assert lines[2] == "   “r0”"


def test_of_twenty_one_records_the_newest_twenty_are_listed_and_counted_all() -> None:
    lines = render(ISSUE, _records(LISTED + 1)).splitlines()
    assert lines[0] == f"Recorded on `{ISSUE}` from Slack (21):"
    assert [line.split(".")[0] for line in lines[1::2]] == [str(n) for n in range(2, 22)]
    assert lines[2] == "   “r1”" and "“r0”" not in lines
