"""Jira work items, end to end: a real errbot on SlackV3, the fakes of Slack, Jira, the-loop.

the-loop's work item is a Jira ticket (``jira:acme.atlassian.net/OPS-12``) and its ledger
Jira (``jira:`` in theloop.yaml, the shape of the-loop's ``integrations.jira``). A member
approves in the work item's thread: the approval lands once as a relayed comment on the
ticket (the relay marker, the words the gate reads) — also when Jira first asks to wait
(429 + ``Retry-After``) and then fails (502). A member answers the agent's question: the
answer is mirrored on the ticket as the-loop's own record and typed into the session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.e2e.slackbot import LOOP, SlackBot, StartBot, corpus, relaying, slash
from tests.fakes import jira_api
from tests.fakes.github_api import FakeGitHub
from tests.fakes.jira_api import FakeJira
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "jira:acme.atlassian.net/OPS-12"
ALICE = "U0ALICE01"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, phase-approval-pending, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
jira:
  site: acme.atlassian.net
  deployment: cloud
  api: {emailEnv: ACME_JIRA_EMAIL, tokenEnv: ACME_JIRA_TOKEN}
  projects: {OPS: {repository: acme/api}}
"""
TIMEOUT = 120.0  # a bound on waiting on a loaded machine, never an expectation


def _ask(slack: FakeSlack, command: str) -> str:
    """Say ``command`` to the bot in a DM; its answer, once it names the records."""
    dm = slack.channel_id("alice-dm") or slack.add_channel("alice-dm", "D0ALICE01")
    message = {"type": "message", "channel_type": "im", "user": ALICE, "text": command}
    event = {"type": "event_callback", "event": {**message, "channel": dm, "ts": "1800000000.3"}}
    assert slack.push_envelope(event) is not None, "the bot did not ack the command"
    answered = lambda: "\n".join(str(m.get("text") or "") for m in slack.messages(dm))  # noqa: E731
    return wait_for(lambda: "Recorded on" in answered() and answered(), TIMEOUT, "the records")


def _texts(comment: dict[str, object]) -> str:
    return json.dumps(comment["body"], ensure_ascii=False)


@contextmanager
def _relaying(slack_bot: StartBot) -> Iterator[tuple[SlackBot, FakeJira, FakeGitHub, FakeLoop]]:
    """The bot with the settings above, relaying to a fake Jira site (its credential set),
    GitHub and the-loop; killed on the way out."""
    with FakeJira({"OPS-12"}) as jira, FakeGitHub({}) as github, FakeLoop({ITEM: False}) as loop:
        env = {
            "THELOOP_JIRA_API": jira.url,
            "ACME_JIRA_EMAIL": jira_api.EMAIL,
            "ACME_JIRA_TOKEN": jira_api.TOKEN,
        }
        start = lambda yaml, more=None: slack_bot(yaml, {**env, **(more or {})})  # noqa: E731
        with relaying(start, SETTINGS, github, loop, "e2e-signing") as bot:
            yield bot, jira, github, loop


def test_decisions_and_answers_on_a_jira_work_item_land_on_its_ticket_once(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    with _relaying(slack_bot) as (bot, jira, github, loop):
        gate = bot.show(corpus("06") | {"workItem": ITEM}, TIMEOUT)
        jira.fail("/comment", 429, headers={"Retry-After": "1"})
        jira.fail("/comment", 502)
        bot.say(ALICE, "approve looks right", gate["thread_ts"])
        wait_for(lambda: jira.posted(), TIMEOUT, "the approval on the ticket")

        bot.say(ALICE, "record-decision tech: Option 2 — why: it backfills", gate["thread_ts"])
        wait_for(lambda: loop.replies, TIMEOUT, "the decision in the session")

        [approval, record] = jira.posted()
        assert _texts(approval).startswith('{"type": "doc"')
        assert "approved" in _texts(approval) and "[the-loop:relay]" in _texts(approval)
        assert "[the-loop:agent-comment]" in _texts(record)
        assert "Option 2" in _texts(record) and "it backfills" in _texts(record)
        assert loop.replies[0]["ref"] == ITEM and loop.replies[0]["comment"] is False
        statuses = [r.status for r in jira.requests]
        assert statuses[:2] == [429, 502]  # asked to wait, then failed: waited out
        assert [r.status for r in jira.requests if r.method == "POST"][-2:] == [201, 201]
        assert github.requests == []

        # Read back from the ticket: the record, who said it, the link to the comment.
        answer = _ask(fake_slack, f"!theloop records {ITEM}")
        assert "📌 decision — `alice-gh`" in answer and "“Option 2”" in answer
        assert "why: it backfills" in answer
        assert f"focusedCommentId={record['id']}" in answer
        assert "said in <https://slack.com/archives/C0LOOP0001/p" in answer  # its thread
        assert "approved" not in answer  # a relayed decision is no record


def test_a_slash_verb_names_a_jira_ticket_as_people_type_it(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """``/the-loop pause jira:OPS-12``: the short form is the configured site's ticket, and
    the pause lands on it as typed in its thread would; another site's ticket is refused."""
    with _relaying(slack_bot) as (_bot, jira, github, _loop):
        answer = slash(fake_slack, "pause jira:OPS-12", ALICE, "t1")["text"]
        assert answer.startswith(f"👀 Recorded the pause request for `{ITEM}`"), answer
        wait_for(lambda: jira.posted(), TIMEOUT, "the pause on the ticket")
        [pause] = jira.posted()
        assert "the-loop pause" in _texts(pause) and "[the-loop:relay]" in _texts(pause)
        refused = slash(fake_slack, "start jira:elsewhere.example/OPS-3", ALICE, "t2")["text"]
        assert "not a ticket of the configured Jira site" in refused
        assert github.requests == [] and len(jira.posted()) == 1


def test_a_jira_ticket_typed_as_the_work_items_channel_is_relayed_as_the_loop_reads_it(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """``add-channel jira@OPS-13`` typed in Slack: relayed for the-loop to mirror the work
    item there (its parser reads the ticket); nothing moves in Slack; a project the-loop
    does not list, or a ``--listen``, is refused before anything is recorded."""
    with _relaying(slack_bot) as (bot, jira, _github, _loop):
        thread = bot.show(corpus("01") | {"workItem": ITEM}, TIMEOUT)["thread_ts"]
        bot.say(ALICE, "add-channel jira@HR-4", thread)
        bot.say(ALICE, "add-channel jira@OPS-13 --listen all", thread)
        bot.say(ALICE, "add-channel jira@ops-13", thread)
        wait_for(lambda: jira.posted(), TIMEOUT, "the channel on the ticket")
        [declared] = jira.posted()
        words = _texts(declared)
        assert "the-loop add-channel jira@OPS-13" in words and "[the-loop:relay]" in words

        def told(words: str) -> list[str]:
            said = [c.args["text"] for c in fake_slack.calls_to("chat.postEphemeral")]
            return [t for t in said if words in t]

        # The refusals go out off the listener's thread, each in its own time: waited for.
        wait_for(lambda: told("project HR is not one of the-loop's Jira projects"), TIMEOUT, "HR")
        wait_for(lambda: told("`--listen` is for a Slack room"), TIMEOUT, "the --listen refusal")
        assert not any("Moved to" in str(m.get("text")) for m in fake_slack.messages(LOOP))
