"""The GitHub client against the loopback fake of GitHub's REST API: one method per
endpoint, its pages followed only under the configured base, and the shared HTTP rules
(no token to another host, no POST turned GET, a capped answer) as each endpoint meets them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from looproom.clients.github import GitHub
from looproom.durable.outcome import Delivered, Failed, RetryLater
from looproom.relay.sinks import GitHubSink
from tests.fakes.github_api import LOGIN, TOKEN, FakeGitHub

COMMENTS = "/repos/acme/api/issues/7/comments"
TARGET = {"repo": "acme/api", "number": 7, "body": "approved"}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub({"acme/api": {7}}) as fake:
        yield fake


@pytest.fixture
def elsewhere() -> Iterator[FakeGitHub]:
    """A host an attacker holds: another loopback address."""
    fake = FakeGitHub()
    fake.host = "127.0.0.2"
    with fake:
        yield fake


def client(github: FakeGitHub, **options: object) -> GitHub:
    return GitHub(github.url, TOKEN, timeout=5, **options)  # type: ignore[arg-type]


# -- one method per endpoint ---------------------------------------------------------------


def test_the_user_is_the_tokens_login_and_a_wrong_token_is_no_login(github) -> None:
    assert client(github).user().value == LOGIN
    refused = GitHub(github.url, "ghp_wrong", timeout=5).user()
    assert refused.value is None and refused.status == 401
    failed = refused.outcome()
    assert isinstance(failed, Failed) and "Bad credentials" in failed.reason


def test_a_repository_and_a_pull_request_are_read(github) -> None:
    github.pulls[("acme/api", 3)] = {"title": "Retry", "additions": 2}
    assert client(github).repository("acme/api").value["has_issues"] is True
    assert client(github).pull("acme/api", 3).value["title"] == "Retry"
    assert client(github).pull("acme/api", 4).value is None


def test_every_page_of_comments_is_read_oldest_first_and_no_more_than_asked(github) -> None:
    for n in range(230):
        github._create(("acme/api", 7), f"comment {n}")
    pages = list(client(github).comment_pages("acme/api", 7, pages=10))
    bodies = [c["body"] for page in pages for c in page.value]
    assert bodies == [f"comment {n}" for n in range(230)]
    assert [page.more for page in pages] == [True, True, False]
    two = list(client(github).comment_pages("acme/api", 7, pages=2))
    assert len(two) == 2 and two[-1].more  # a third page exists, and was not read


def test_a_comment_posted_is_the_comment_github_made(github) -> None:
    made = client(github).post_comment("acme/api", 7, "hello")
    assert made.value is not None and made.value["html_url"].endswith(f"#issuecomment-{1001}")
    assert github.posted() == ["hello"]


def test_an_issue_opened_and_listed_by_its_creator(github) -> None:
    opened = client(github).open_issue("acme/api", "Flaky", "body", ["the-loop"])
    assert opened.value is not None and opened.value["number"] == 8
    query = {"state": "all", "creator": LOGIN}
    (page,) = client(github).issue_pages("acme/api", query, pages=5)
    assert [issue["number"] for issue in page.value] == [8]


# -- the shared rules, as GitHub's endpoints meet them -----------------------------------------


def test_a_comment_post_answered_301_is_not_delivered_and_says_why(github) -> None:
    moved = f"{github.url}/repositories/42/issues/7/comments"
    github.fail(COMMENTS, 301, headers={"Location": moved})
    outcome = GitHubSink(github.url, TOKEN, timeout=5).send(TARGET, unsure=False, since="")
    assert isinstance(outcome, Failed)
    assert "not delivered" in outcome.reason and "301" in outcome.reason
    assert moved in outcome.reason
    assert github.posted() == [] and [r.method for r in github.requests] == ["POST"]


def test_a_comment_on_a_renamed_repository_lands_at_its_new_name_once(github) -> None:
    github.issues["acme/api-renamed"] = {7}
    github.moved["acme/api"] = "acme/api-renamed"
    outcome = GitHubSink(github.url, TOKEN, timeout=5).send(TARGET, unsure=False, since="")
    assert isinstance(outcome, Delivered) and "acme/api-renamed" in outcome.detail
    assert github.posted("acme/api-renamed") == ["approved"]


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_to_another_host_carries_no_token_there(github, elsewhere, status) -> None:
    github.fail("/", status, headers={"Location": f"{elsewhere.url}{COMMENTS}"}, times=10)
    sink = GitHubSink(github.url, TOKEN, timeout=5)
    outcome = sink.send(TARGET, unsure=True, since="2000-01-01T00:00:00Z")
    assert elsewhere.requests == []
    assert isinstance(outcome, RetryLater | Failed) and elsewhere.url in outcome.reason
    assert client(github).user().value is None and elsewhere.requests == []


def test_a_next_page_on_another_host_is_not_followed(github, elsewhere) -> None:
    link = f'<{elsewhere.url}{COMMENTS}?page=2>; rel="next"'
    github.fail(COMMENTS, 200, headers={"Link": link}, body=[])
    (page,) = client(github).comment_pages("acme/api", 7, pages=5)
    assert (page.value, page.more, elsewhere.requests) == ([], False, [])


def test_a_listing_over_the_cap_is_no_listing_and_is_tried_again(github) -> None:
    github._create(("acme/api", 7), "x" * 2000)
    size = len(json.dumps(github.comments[("acme/api", 7)]).encode())
    (whole,) = client(github, max_bytes=size).comment_pages("acme/api", 7, pages=5)
    assert whole.value is not None and len(whole.value) == 1
    (cut,) = client(github, max_bytes=size - 1).comment_pages("acme/api", 7, pages=5)
    assert cut.value is None and cut.answer.over_cap
    assert isinstance(cut.outcome(), RetryLater)
