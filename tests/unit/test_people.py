"""Admins as operators write them, and mentions as a plain chat shows them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looproom import people
from looproom.settings import Environment


@pytest.mark.parametrize(
    ("written", "matched", "on_slack"),
    [
        ("U0AUTH", "U0AUTH", "<@U0AUTH>"),
        ("<@U0AUTH>", "U0AUTH", "<@U0AUTH>"),
        (" <@U0AUTH|alice> ", "U0AUTH", "<@U0AUTH>"),
        ("W0GRID01", "W0GRID01", "<@W0GRID01>"),
        ("@alice", "@alice", "@alice"),
    ],
)
def test_an_admin_is_matched_by_id_and_told_as_slack_builds_a_person(
    written: str, matched: str, on_slack: str
) -> None:
    assert people.admin_id(written) == matched
    assert people.addressee(written, slack=True) == on_slack


def test_on_a_plain_chat_a_bare_name_is_a_person_and_a_room_stays_a_room() -> None:
    assert people.addressee("localhost", slack=False) == "@localhost"
    assert people.addressee("@localhost", slack=False) == "@localhost"
    assert people.addressee("<@localhost>", slack=False) == "@localhost"
    assert people.addressee("#the-loop", slack=False) == "#the-loop"


def test_the_environment_keeps_each_admin_as_errbots_admin_check_compares_it() -> None:
    env = Environment.from_env({"THELOOP_ADMINS": "U0AUTH, <@U0BOB0001>,@carol"})
    assert env.admins == ("U0AUTH", "U0BOB0001", "@carol")


def test_errbot_warns_each_admin_by_id_on_slack_and_no_glob() -> None:
    admins = ("U0AUTH", "@carol", "U0*", "<@U0BOB0001>")
    assert people.notified(admins, slack=True) == ("<@U0AUTH>", "<@U0BOB0001>")
    assert people.notified(("@localhost",), slack=False) == ("@localhost",)


def test_a_plain_chat_shows_each_mention_as_the_backend_shows_the_person() -> None:
    text = "✅ recorded — moving on: the phase selection of <@localhost>, seen by <@U1|bob>."
    shown = people.plain_mentions(text, lambda member: f"@{member}")
    assert shown == "✅ recorded — moving on: the phase selection of @localhost, seen by @U1."


@given(st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=40))
def test_text_without_a_mention_is_left_as_it_is(text: str) -> None:
    assert people.plain_mentions(text, lambda _member: "MENTION") == text
