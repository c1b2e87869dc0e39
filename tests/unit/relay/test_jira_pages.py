"""Jira's look-up before posting again, at its documented reach: up to 50 pages of 100
comments (`docs/decisions.md`). A relayed comment that is the 5 000th on its ticket is
found and not posted twice; one that is the 5 001st is out of reach — posted again, and
the log says the look-up stopped short. Against the loopback Jira, which pages as Jira
does (``startAt``, at most 100 a page, ``total``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from looproom.durable.outcome import Delivered
from looproom.relay.jira_sink import JiraSink, relay_key
from looproom.settings import jira_config
from tests.fakes import jira_api
from tests.fakes.jira_api import FakeJira

DOCUMENTED_REACH = 50 * 100
ENV = {"THELOOP_JIRA_EMAIL": jira_api.EMAIL, "THELOOP_JIRA_TOKEN": jira_api.TOKEN}
TARGET = {"sink": "jira", "key": "OPS-12", "body": "the-loop start", "as": "relay"}
EMPTY = {"type": "doc", "version": 1, "content": []}


@pytest.fixture
def fake() -> Iterator[FakeJira]:
    with FakeJira({"OPS-12"}) as server:
        yield server


def _sink(url: str) -> JiraSink:
    raw = {"site": "acme.atlassian.net", "deployment": "cloud", "projects": {"OPS": {}}}
    site = jira_config.parse(raw, "jira", {"THELOOP_JIRA_API": url})
    assert site is not None
    return JiraSink(site, env=ENV)


def _landed_after(fake: FakeJira, others: int) -> JiraSink:
    """The relay's comment landed after ``others`` comments of someone else's."""
    for _ in range(others):
        fake.add("OPS-12", EMPTY)
    sink = _sink(fake.url)
    assert isinstance(sink.send(TARGET, key="relay:k1", unsure=False), Delivered)
    return sink


def test_the_five_thousandth_comment_is_found_and_not_posted_again(fake: FakeJira) -> None:
    sink = _landed_after(fake, DOCUMENTED_REACH - 1)
    again = sink.send(TARGET, key="relay:k1", unsure=True)
    assert isinstance(again, Delivered) and "focusedCommentId" in again.detail
    assert [relay_key(c) for c in fake.posted()].count("relay:k1") == 1


def test_the_five_thousand_and_first_is_out_of_reach_and_the_log_says_so(
    fake: FakeJira, caplog: pytest.LogCaptureFixture
) -> None:
    sink = _landed_after(fake, DOCUMENTED_REACH)
    with caplog.at_level(logging.WARNING, logger="looproom.relay.jira_sink"):
        assert isinstance(sink.send(TARGET, key="relay:k1", unsure=True), Delivered)
    assert [relay_key(c) for c in fake.posted()].count("relay:k1") == 2
    assert "more than 50 pages of comments on OPS-12" in caplog.text
