"""Looking for an issue the kickoff may have opened already reaches as far as
`docs/decisions.md` says: the newest 500 issues the bot opened since the request, five
pages of 100. Ours, with 499 newer ones, is found; with 500 newer it is past the reach.
Against the loopback GitHub, which pages and sorts as GitHub does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looproom.kickoff.body import marked, marker
from looproom.kickoff.github import IssueMaker
from tests.fakes.github_api import TOKEN, FakeGitHub

DOCUMENTED_REACH = 5 * 100
KEY = "message:C1:1800000000.000100"
SINCE = "2000-01-01T00:00:00Z"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub({"acme/api": {7}}) as fake:
        yield fake


def _ours_then(github: FakeGitHub, newer: int) -> IssueMaker:
    """Ours opened, then ``newer`` issues of the bot's after it (put in the fake directly,
    each a copy of ours with its own number and words)."""
    maker = IssueMaker(github.url, TOKEN, timeout=5)
    ours = maker.open("acme/api", "Ours", marked("Ours\n", KEY), ())
    assert ours.number
    (first,) = github.issue_objects["acme/api"]
    for n in range(newer):
        number = ours.number + 1 + n
        github.issues["acme/api"].add(number)
        body = marked("x\n", f"message:C1:{n}.0")
        github.issue_objects["acme/api"].append({**first, "number": number, "body": body})
    return maker


def test_ours_among_the_newest_500_is_found(github: FakeGitHub) -> None:
    maker = _ours_then(github, DOCUMENTED_REACH - 1)
    found = maker.find("acme/api", marker(KEY), SINCE)
    assert found is not None and found.ref == "github:acme/api#8"


def test_ours_with_500_newer_is_past_the_reach(github: FakeGitHub) -> None:
    maker = _ours_then(github, DOCUMENTED_REACH)
    assert maker.find("acme/api", marker(KEY), SINCE) is None
    pages = [
        r.query.get("page", "1")
        for r in github.requests
        if r.method == "GET" and r.path.endswith("/issues")
    ]
    assert pages == ["1", "2", "3", "4", "5"]
