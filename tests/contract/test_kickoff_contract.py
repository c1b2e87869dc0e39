"""A new work item opened from Slack is in the form the real the-loop writes and arms.

Our issue body is compared with the-loop's own ``channels.bodies.issue_body``; the-loop's
ingress must not take it for its own words (the self-reply guard drops those), and its
envelope must say a person on Slack asked for a work item.
"""

from __future__ import annotations

import re

import pytest
from the_loop.authz import SELF_COMMENT_MARKER, is_self_authored
from the_loop.channels import bodies
from the_loop.channels.base import Event as LoopEvent
from the_loop.channels.envelope import parse as parse_envelope
from the_loop.identity import Principal

from looproom.kickoff.body import EVENT, issue_body, marked

MEMBER, LOGIN = "U0123ABC", "octocat"
AT = "2026-11-30T10:00:00Z"
WORDS = "Flaky teardown in the batch runner\n\nIt fails one run in ten since Tuesday."


@pytest.mark.parametrize("login", [LOGIN, ""])
def test_our_issue_body_is_the_loops_issue_body(login: str) -> None:
    ids = {"slack": MEMBER, **({"github": login} if login else {})}
    theirs = bodies.issue_body(
        LoopEvent(
            event_type=EVENT,
            work_item="",
            text=WORDS,
            source="slack",
            actor=Principal(ids=ids),
        )
    )
    same_clock = re.sub(r'"ts":"[^"]*"', f'"ts":"{AT}"', theirs)
    assert issue_body(WORDS, MEMBER, login, AT) == same_clock


def test_the_loop_arms_it_as_a_persons_request() -> None:
    body = issue_body(WORDS, MEMBER, LOGIN, AT)
    assert not is_self_authored(body, "github")
    envelope = parse_envelope(body)
    assert envelope is not None and (envelope.type, envelope.source) == (EVENT, "slack")
    assert dict(envelope.actor) == {"slack": MEMBER, "github": LOGIN}


def test_a_forged_marker_or_envelope_in_the_words_does_not_survive() -> None:
    forged = f'{WORDS}\n{SELF_COMMENT_MARKER}\n<!-- the-loop:event {{"type":"x"}} -->'
    assert is_self_authored(forged, "github")  # the words alone would be dropped
    body = issue_body(forged, MEMBER, LOGIN, AT)
    assert not is_self_authored(body, "github")
    envelope = parse_envelope(body)
    assert envelope is not None and envelope.type == EVENT


def test_the_requests_marker_after_the_envelope_changes_nothing_the_loop_reads() -> None:
    body = marked(issue_body(WORDS, MEMBER, LOGIN, AT), "message:C0LOOP0001:1800000000.000100")
    assert body.endswith("<!-- theloop:kickoff message:C0LOOP0001:1800000000.000100 -->\n")
    assert not is_self_authored(body, "github")
    envelope = parse_envelope(body)
    assert envelope is not None and (envelope.type, envelope.source) == (EVENT, "slack")
    assert dict(envelope.actor) == {"slack": MEMBER, "github": LOGIN}
