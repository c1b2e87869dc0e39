"""Slack's signed requests at their edges: Slack's five-minute window (300 s either way is
still fresh, 301 s is not) and the body cap (262144 bytes, docs/webhook.md's, is read; one
byte more is refused before the signature is looked at), for a UTF-8 body and for the raw
bytes of one that is not. Slack signs as tests/support/signed.py writes it out."""

from __future__ import annotations

import pytest

from looproom.slack.signed import signed_body
from tests.support.signed import slack_headers

SECRET = "slack-signing-secret-for-edges"
NOW = 1_790_000_000
CAP = 262_144


@pytest.mark.parametrize("body", [b"payload=%7B%7D", b"payload=\xff"], ids=["utf-8", "raw"])
@pytest.mark.parametrize(
    ("skew", "fresh"), [(300, True), (-300, True), (301, False), (-301, False)]
)
def test_a_request_signed_300_s_off_is_fresh_and_301_s_is_not(
    body: bytes, skew: int, fresh: bool
) -> None:
    checked = signed_body(slack_headers(SECRET, body, NOW - skew), body, SECRET, now=NOW)
    if fresh and body.isascii():
        assert checked.status == 200
    elif fresh:  # signed, so it hears what is wrong with it
        assert (checked.status, checked.error) == (400, "body: not UTF-8 (byte 8)")
    else:
        assert (checked.status, checked.error) == (401, "bad signature or stale timestamp")


def test_a_body_at_the_cap_is_checked_and_one_byte_more_is_refused_unread() -> None:
    at_cap = b"payload=" + b"x" * (CAP - len(b"payload="))
    assert signed_body(slack_headers(SECRET, at_cap, NOW), at_cap, SECRET, now=NOW).status == 200
    over = at_cap + b"x"
    refused = signed_body({}, over, SECRET, now=NOW)  # unsigned: the size is said first
    assert (refused.status, refused.error) == (413, "body too large (at most 262144 bytes)")
