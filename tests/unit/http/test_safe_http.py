"""The shared HTTP client's three rules, against loopback fakes: a credential never goes
to another origin, a method is never changed by a redirect, and what is read is capped."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from looproom.durable.outcome import Failed, RetryLater
from looproom.http.client import MOST_REDIRECTS, http, outcome_of
from tests.fakes.github_api import TOKEN, FakeGitHub

AUTH = {"Authorization": f"Bearer {TOKEN}"}
COMMENTS = "/repos/acme/api/issues/7/comments"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


@pytest.fixture
def elsewhere() -> Iterator[FakeGitHub]:
    """Another host: a loopback address of its own, so another origin by host, not port."""
    fake = FakeGitHub()
    fake.host = "127.0.0.2"
    with fake:
        yield fake


def test_a_post_answered_301_is_not_resent_as_a_get_and_says_where_it_pointed(github) -> None:
    moved = f"{github.url}/repositories/42/issues/7/comments"
    github.fail(COMMENTS, 301, headers={"Location": moved})
    answer = http("POST", github.url + COMMENTS, AUTH, {"body": "hi"}, 5.0)
    assert (answer.status, answer.moved_to) == (301, moved)
    assert [r.method for r in github.requests] == ["POST"]  # no GET followed it
    failed = outcome_of(answer, "GitHub", 0.0)
    assert isinstance(failed, Failed)
    assert "not delivered" in failed.reason and "301" in failed.reason
    assert f"{github.url}/repositories/42/issues/7/comments" in failed.reason


@pytest.mark.parametrize("status", [302, 303])
def test_no_redirect_turns_a_post_into_a_get(github, status: int) -> None:
    github.fail(COMMENTS, status, headers={"Location": github.url + COMMENTS})
    answer = http("POST", github.url + COMMENTS, AUTH, {"body": "hi"}, 5.0)
    assert answer.status == status
    assert [r.method for r in github.requests] == ["POST"]
    assert isinstance(outcome_of(answer, "GitHub", 0.0), Failed)


def test_a_moved_repository_takes_the_post_at_its_new_name_once(github) -> None:
    # GitHub answers a write to a renamed repository with 307: same origin, same method.
    github.issues["acme/api-v2"] = {7}
    github.moved["acme/api"] = "acme/api-v2"
    answer = http("POST", github.url + COMMENTS, AUTH, {"body": "hi"}, 5.0)
    assert answer.status == 201 and outcome_of(answer, "GitHub", 0.0) is None
    assert github.posted("acme/api-v2") == ["hi"]
    assert [(r.method, r.status) for r in github.requests] == [("POST", 307), ("POST", 201)]


def test_a_get_follows_a_301_on_its_own_origin(github) -> None:
    github.issues["acme/api-v2"] = {7}
    github.moved["acme/api"] = "acme/api-v2"
    answer = http("GET", github.url + COMMENTS, AUTH, None, 5.0)
    assert (answer.status, answer.json()) == (200, [])


@pytest.mark.parametrize(("method", "status"), [("GET", 301), ("GET", 302), ("POST", 307)])
def test_a_redirect_to_another_host_is_not_followed_and_names_it(
    github, elsewhere, method: str, status: int
) -> None:
    github.fail(COMMENTS, status, headers={"Location": f"{elsewhere.url}/steal?token=x"})
    data = {"body": "hi"} if method == "POST" else None
    answer = http(method, github.url + COMMENTS, AUTH, data, 5.0)
    assert elsewhere.requests == []  # neither the token nor anything else reached it
    assert answer.status == status
    assert f"moved to {elsewhere.url}/steal" in answer.error
    assert "token=x" not in answer.error  # a query may be a capability: never shown
    assert isinstance(outcome_of(answer, "GitHub", 0.0), Failed)


def test_another_port_on_the_same_host_is_another_origin(github) -> None:
    with FakeGitHub() as other:
        github.fail(COMMENTS, 302, headers={"Location": other.url + COMMENTS})
        answer = http("GET", github.url + COMMENTS, AUTH, None, 5.0)
        assert (answer.status, other.requests) == (302, [])


def test_a_redirect_loop_on_one_origin_ends(github) -> None:
    github.fail(COMMENTS, 302, headers={"Location": github.url + COMMENTS}, times=100)
    answer = http("GET", github.url + COMMENTS, AUTH, None, 5.0)
    assert answer.status == 302
    assert len(github.requests) == MOST_REDIRECTS + 1


def test_a_body_at_the_cap_is_read_and_one_byte_past_it_is_refused(github) -> None:
    scripted = "x" * 5000
    size = len(json.dumps(scripted).encode())  # what the fake sends
    github.fail(COMMENTS, 200, body=scripted, times=2)
    at_cap = http("GET", github.url + COMMENTS, AUTH, None, 5.0, max_bytes=size)
    assert (at_cap.status, at_cap.json()) == (200, scripted)
    past = http("GET", github.url + COMMENTS, AUTH, None, 5.0, max_bytes=size - 1)
    assert (past.status, past.over_cap, past.sent, past.body) == (0, True, True, b"")
    assert f"over the {size - 1:,} bytes" in past.error
    retry = outcome_of(past, "GitHub", 0.0)
    assert isinstance(retry, RetryLater) and "may have acted" in retry.reason


def test_no_cookie_an_answer_sets_goes_back_with_the_next_request(github) -> None:
    github.fail("/user", 200, headers={"Set-Cookie": "session=abc; Path=/"}, body={})
    http("GET", github.url + "/user", AUTH, None, 5.0)
    http("GET", github.url + "/user", AUTH, None, 5.0)
    assert all("Cookie" not in r.headers for r in github.requests)


def test_a_refused_connection_is_unsent_and_retried(github) -> None:
    url = github.url + COMMENTS
    github.stop()
    answer = http("POST", url, AUTH, {"body": "hi"}, 5.0)
    assert (answer.status, answer.sent) == (0, False)
    retry = outcome_of(answer, "GitHub", 0.0)
    assert isinstance(retry, RetryLater) and "unreachable" in retry.reason


def test_five_redirects_on_one_origin_are_followed_and_a_sixth_is_the_answer(github) -> None:
    # docs/security.md: at most 5 redirects on one origin.
    here = {"Location": github.url + COMMENTS}
    github.fail(COMMENTS, 302, headers=here, times=5)
    followed = http("GET", github.url + COMMENTS, AUTH, None, 5.0)
    assert followed.status == 200 and len(github.requests) == 6
    github.requests.clear()
    github.fail(COMMENTS, 302, headers=here, times=6)
    stopped = http("GET", github.url + COMMENTS, AUTH, None, 5.0)
    assert stopped.status == 302 and len(github.requests) == 6
