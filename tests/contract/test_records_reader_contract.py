"""``!theloop records`` reads the ticket as the-loop's own ``channels records`` does.

Records are relayed through our sinks to the loopback fake of GitHub, beside a pasted
copy by someone else and a relayed decision; the-loop's ``records_from_comments`` (with
the ledger credential's login, as its verb passes it) and our reader list the same rows
from the same comments: type, person, time, quoted words, rationale, link.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from the_loop.channels.records import RECORD_TYPES, records_from_comments

from looproom.decide import kinds
from looproom.relay.decision import Decision
from looproom.relay.record_reader import RecordReader
from looproom.relay.sinks import GitHubSink, LedgerSink, Sinks
from tests.fakes.github_api import LOGIN, TOKEN, FakeGitHub

WORK_ITEM = "github:acme/api#7"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub({"acme/api": {7}}) as fake:
        yield fake


def _relay(sinks: Sinks, kind: str, words: str, **fields: object) -> None:
    decision = Decision(
        kind=kind,
        words=words,
        work_item=WORK_ITEM,
        member="U0123ABC",
        login="octocat",
        origin=f"C1:{words}",
        at="2026-12-03T09:00:00Z",
        **fields,  # type: ignore[arg-type]
    )
    target = kinds.target(decision, sinks.available({}))
    item = {"key": decision.key, "decision": decision.to_dict(), "target": target}
    sinks.send(item, unsure=False)


def test_our_reader_and_the_loops_list_the_same_records(github: FakeGitHub, tmp_path: Path) -> None:
    sink = GitHubSink(github.url, TOKEN)
    sinks = Sinks(ledger=LedgerSink(tmp_path / "ledger.jsonl"), github=sink)
    _relay(sinks, kinds.CONTEXT, "the thread, line one\nline two", count=2, link="https://s/p1")
    _relay(
        sinks, kinds.DECISION, "use Postgres", topic="tech", why="it scales", link="https://s/p2"
    )
    _relay(sinks, kinds.APPROVE, "ship it")  # a relayed decision: no record
    pasted = github.posted()[1]
    github.comments[("acme/api", 7)].append(
        {
            **github.comments[("acme/api", 7)][1],
            "id": 1,
            "user": {"login": "mallory"},
            "body": pasted,
        }
    )

    ours, problem = RecordReader(sinks.ledger, sink).read(WORK_ITEM)
    login, comments = sink.comments("acme/api", 7)
    assert problem == "" and login == LOGIN and not isinstance(comments, str)
    rows = [
        {"body": c["body"], "author": c["user"]["login"], "url": c["html_url"]} for c in comments
    ]
    theirs = records_from_comments(rows, RECORD_TYPES, LOGIN)
    assert [r.type for r in theirs] == ["context.added", "decision.recorded"]
    assert [(o.kind, dict(o.actor), o.at, o.text, o.why, o.url) for o in ours] == [
        (t.type, dict(t.actor), t.ts, t.text, t.why, t.url) for t in theirs
    ]
    # Where each was said: the decision's "discussed at" as the-loop reads it, and the
    # thread its context line names.
    assert ours[1].discussed_at == theirs[1].discussed_at == "https://s/p2"
    assert ours[0].discussed_at == "https://s/p1" and "from <https://s/p1>" in theirs[0].summary
