"""Opening an issue once against the loopback fake of GitHub: created, found again by its
marker among the bot's own issues, never by anyone else's words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from looproom.kickoff.body import marked, marker
from looproom.kickoff.github import IssueMaker
from tests.fakes.github_api import LOGIN, TOKEN, FakeGitHub

KEY = "message:C1:1800000000.000100"
SINCE = "2000-01-01T00:00:00Z"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub({"acme/api": {7}}) as fake:
        yield fake


def test_an_opened_issue_is_found_again_by_its_marker(github: FakeGitHub) -> None:
    maker = IssueMaker(github.url, TOKEN, timeout=5)
    assert maker.find("acme/api", marker(KEY), SINCE) is None
    opened = maker.open("acme/api", "Flaky", marked("Flaky\n", KEY), ())
    assert opened.ref == "github:acme/api#8" and not opened.error
    found = maker.find("acme/api", marker(KEY), SINCE)
    assert found is not None and (found.ref, found.url) == (opened.ref, opened.url)
    assert maker.find("acme/api", marker("message:C1:1.0"), SINCE) is None


def test_the_same_marker_in_someone_elses_issue_is_not_taken_for_ours(
    github: FakeGitHub,
) -> None:
    maker = IssueMaker(github.url, TOKEN, timeout=5)
    maker.open("acme/api", "Flaky", marked("Flaky\n", KEY), ())
    github.issue_objects["acme/api"][0]["user"] = {"login": "mallory"}  # not the bot's
    assert maker.find("acme/api", marker(KEY), SINCE) is None
    (listing,) = [r for r in github.requests if r.method == "GET" and r.path.endswith("/issues")]
    assert listing.query["creator"] == LOGIN and listing.query["state"] == "all"


def test_the_search_reads_every_page_of_a_busy_repository(github: FakeGitHub) -> None:
    maker = IssueMaker(github.url, TOKEN, timeout=5)
    maker.open("acme/api", "Ours", marked("Ours\n", KEY), ())
    for n in range(150):  # newer issues push ours to the second page
        maker.open("acme/api", f"Other {n}", marked("x\n", f"message:C1:{n}.0"), ())
    found = maker.find("acme/api", marker(KEY), SINCE)
    assert found is not None and found.ref == "github:acme/api#8"


@pytest.mark.parametrize(("status", "retry"), [(502, True), (429, True), (404, False)])
def test_what_github_says_decides_whether_to_wait_or_give_up(
    github: FakeGitHub, status: int, retry: bool
) -> None:
    github.fail("/issues", status, times=1)
    opened = IssueMaker(github.url, TOKEN, timeout=5).open("acme/api", "Flaky", "body", ())
    assert opened.number == 0 and opened.error and opened.retry is retry
