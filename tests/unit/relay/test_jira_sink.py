"""The Jira sink against the loopback fake of Jira: once, waited out, never a secret said."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from looproom.durable.outcome import Delivered, Failed, RetryLater
from looproom.relay import jira_body
from looproom.relay.jira_sink import JiraSink, relay_key
from looproom.settings import jira_config
from tests.fakes import jira_api
from tests.fakes.jira_api import FakeJira

ENV = {"THELOOP_JIRA_EMAIL": jira_api.EMAIL, "THELOOP_JIRA_TOKEN": jira_api.TOKEN}
BODY = "the-loop start\n\n🗣️ _the-loop — control command from `octocat`._\n\n" + (
    '<!-- the-loop:event {"actor":{"slack":"U1"},"source":"slack","ts":"t","type":"x"} -->\n'
)
TARGET = {"sink": "jira", "key": "OPS-12", "body": BODY, "as": "relay"}


@pytest.fixture
def fake() -> Iterator[FakeJira]:
    with FakeJira({"OPS-12"}) as server:
        yield server


def _site(url: str, deployment: str = "cloud", **api: object) -> jira_config.JiraSite:
    raw = {"site": "acme.atlassian.net", "deployment": deployment, "projects": {"OPS": {}}}
    site = jira_config.parse({**raw, "api": api} if api else raw, "jira", {"THELOOP_JIRA_API": url})
    assert site is not None
    return site


def test_a_decision_lands_as_one_adf_comment_with_its_key_and_a_link(fake: FakeJira) -> None:
    outcome = JiraSink(_site(fake.url), env=ENV).send(TARGET, key="relay:k1", unsure=False)
    [comment] = fake.posted()
    assert isinstance(outcome, Delivered)
    assert (
        outcome.detail
        == f"https://acme.atlassian.net/browse/OPS-12?focusedCommentId={comment['id']}"
    )
    assert comment["body"]["type"] == "doc" and relay_key(comment) == "relay:k1"
    texts = [n["content"][0]["text"] for n in comment["body"]["content"]]
    assert texts[0] == "the-loop start" and jira_body.RELAY_LINE in texts


def test_on_data_center_the_body_is_wiki_markup_and_the_token_a_bearer() -> None:
    with FakeJira({"OPS-12"}, deployment="data-center") as fake:
        sink = JiraSink(_site(fake.url, "data-center"), env={"THELOOP_JIRA_TOKEN": jira_api.TOKEN})
        assert isinstance(sink.send(TARGET, key="relay:k1", unsure=False), Delivered)
        [comment] = fake.posted()
    assert isinstance(comment["body"], str) and comment["body"].startswith("the\\-loop start")


def test_an_attempt_that_landed_unanswered_is_found_not_posted_again(fake: FakeJira) -> None:
    sink = JiraSink(_site(fake.url), env=ENV)
    fake.add("OPS-12", {"type": "doc", "version": 1, "content": []})  # someone else's
    fake.fail("/comment", kind="land_then_drop")
    first = sink.send(TARGET, key="relay:k1", unsure=False)
    assert isinstance(first, RetryLater)
    again = sink.send(TARGET, key="relay:k1", unsure=True)
    assert isinstance(again, Delivered) and "focusedCommentId" in again.detail
    assert [relay_key(c) for c in fake.posted()] == ["", "relay:k1"]


def test_the_look_reads_every_page_before_it_posts(fake: FakeJira) -> None:
    sink = JiraSink(_site(fake.url), env=ENV)
    assert isinstance(sink.send(TARGET, key="relay:early", unsure=False), Delivered)
    for _ in range(230):
        fake.add("OPS-12", {"type": "doc", "version": 1, "content": []})
    assert isinstance(sink.send(TARGET, key="relay:early", unsure=True), Delivered)
    assert isinstance(sink.send(TARGET, key="relay:late", unsure=True), Delivered)
    keys = [relay_key(c) for c in fake.posted()]
    assert keys.count("relay:early") == 1 and keys.count("relay:late") == 1


def test_a_rate_limit_is_waited_out_as_jira_asks(fake: FakeJira) -> None:
    fake.fail("/comment", 429, headers={"Retry-After": "7"})
    outcome = JiraSink(_site(fake.url), env=ENV).send(TARGET, key="relay:k1", unsure=False)
    assert isinstance(outcome, RetryLater) and outcome.after == 7.0
    assert fake.posted() == []


def test_a_server_error_is_retried_and_a_refusal_said_in_jiras_words(fake: FakeJira) -> None:
    sink = JiraSink(_site(fake.url), env=ENV)
    fake.fail("/comment", 503)
    assert isinstance(sink.send(TARGET, key="relay:k1", unsure=False), RetryLater)
    gone = sink.send({**TARGET, "key": "OPS-99"}, key="relay:k2", unsure=False)
    assert isinstance(gone, Failed) and "Issue does not exist" in gone.reason


def test_a_wrong_credential_is_refused_and_never_said_or_logged(
    fake: FakeJira, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    secret = "wrong-but-secret-token-4711"
    env = {"THELOOP_JIRA_EMAIL": jira_api.EMAIL, "THELOOP_JIRA_TOKEN": secret}
    outcome = JiraSink(_site(fake.url), env=env).send(TARGET, key="relay:k1", unsure=False)
    assert isinstance(outcome, Failed) and "not authenticated" in outcome.reason
    assert secret not in repr(outcome) and secret not in caplog.text


def test_a_missing_credential_names_the_variables_and_waits(fake: FakeJira) -> None:
    outcome = JiraSink(_site(fake.url), env={}).send(TARGET, key="relay:k1", unsure=False)
    assert isinstance(outcome, RetryLater)
    assert "THELOOP_JIRA_EMAIL" in outcome.reason and "THELOOP_JIRA_TOKEN" in outcome.reason
    assert fake.requests == []


def test_the_credential_comes_from_the_named_variables_or_a_file(
    fake: FakeJira, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(jira_api.TOKEN + "\n", encoding="utf-8")
    site = _site(fake.url, emailEnv="ACME_JIRA_USER", tokenEnv=["ACME_JIRA_KEY"])
    env = {"ACME_JIRA_USER": jira_api.EMAIL, "THELOOP_JIRA_TOKEN_FILE": str(token_file)}
    assert isinstance(JiraSink(site, env=env).send(TARGET, key="k", unsure=False), Delivered)
    assert "ACME_JIRA_KEY" in repr(site.token_env) and jira_api.TOKEN not in repr(site)


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"deployment": "cloud"}, "jira.site"),
        ({"site": "acme.atlassian.net", "deployment": "server"}, "jira.deployment"),
        ({"site": "acme.atlassian.net", "deployment": "cloud-scoped"}, "jira.cloudId"),
        ({"site": "a.b", "deployment": "cloud", "projects": ["OPS"]}, "jira.projects"),
        ({"site": "a.b", "deployment": "cloud", "api": {"tokenEnv": "x y"}}, "jira.api.tokenEnv"),
    ],
)
def test_a_bad_block_is_refused_naming_the_key(raw: dict[str, object], named: str) -> None:
    with pytest.raises(jira_config.JiraConfigError) as refused:
        jira_config.parse(raw, "jira", {})
    assert any(error.startswith(named) for error in refused.value.errors)


def test_the_loops_own_block_is_read_when_its_config_is_named(tmp_path: Path) -> None:
    theirs = tmp_path / "config.yaml"
    theirs.write_text(
        "integrations:\n  jira:\n    site: ops.example.com\n    deployment: data-center\n"
        "    projects: {SEC: {repository: acme/api}}\n",
        encoding="utf-8",
    )
    site = jira_config.resolve(str(theirs), {"site": "x.y", "deployment": "cloud"}, {})
    assert site is not None and (site.site, site.rest, site.projects) == (
        "ops.example.com",
        "2",
        ("SEC",),
    )
    assert site.key_of("jira:ops.example.com/SEC-3") == "SEC-3"
    assert "not a ticket of the configured Jira site" in site.refusal("jira:x.y/SEC-3")


def test_the_doctor_says_whose_credential_it_is_or_what_is_missing(fake: FakeJira) -> None:
    from looproom.doctor import jira_check

    ok = jira_check.finding(JiraSink(_site(fake.url), env=ENV))
    assert ok.level == "ok" and jira_api.ACCOUNT in ok.says
    missing = jira_check.finding(JiraSink(_site(fake.url), env={}))
    assert missing.level == "problem" and "THELOOP_JIRA_TOKEN" in missing.says
