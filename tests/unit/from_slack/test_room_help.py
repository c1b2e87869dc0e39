"""``@theloop help``: the grammar of the room it is asked in, not one text for all."""

from __future__ import annotations

from looproom.decide.authorization import AccessPolicy
from looproom.from_slack import room_help
from looproom.relay import forms
from looproom.settings import keywords
from looproom.settings.grants import CONTEXT, REPLY
from looproom.workitem import from_url

BOT = "U0BOT0001"


def policy(**kw: object) -> AccessPolicy:
    said = keywords.parse(
        {"start": "loop go", "cleanup": ""},
        "relay.keywords",
        commands={"ship": {"keyword": "loop deliver"}},
    )
    destinations = forms.Destinations(keywords=said)
    return AccessPolicy(BOT, frozenset({"U0ALICE01"}), destinations=destinations, **kw)  # type: ignore[arg-type]


def test_only_a_mention_of_the_bot_opening_with_help_asks_for_it() -> None:
    assert room_help.asked(f"<@{BOT}> help", BOT) == "private"
    assert room_help.asked(f"<@{BOT}|theloop> help public", BOT) == "public"
    assert room_help.asked(f"<@{BOT}> help me decide", BOT) == "private"
    assert room_help.asked("help", BOT) == ""
    assert room_help.asked("<@U0OTHER01> help", BOT) == ""
    assert room_help.asked(f"<@{BOT}> can you help", BOT) == ""


def test_in_a_work_items_thread_no_ref_is_needed_and_the_deployments_words_are_shown() -> None:
    text = room_help.text(room_help.AskedIn("github:acme/api#7", thread_bound=True), policy())
    assert "about `github:acme/api#7`; no ref is needed" in text
    assert "• `start` — relayed as `loop go`; after a mention, `go` too" in text
    assert "• `cleanup` (switched off in this deployment)" in text
    assert "• `ship` — relayed as `loop deliver` (the operator's own)" in text
    assert "`add-collaborator`" in text and "`add-channel`" in text and "`!do`" in text


def test_a_kickoff_room_with_several_repositories_teaches_the_prefix() -> None:
    room = room_help.AskedIn(repository="acme/api", kickoff=("acme/api", "acme/web"))
    text = room_help.text(room, policy())
    assert "`#7` means `acme/api#7`" in text
    assert "`@theloop <title>` as a new message" in text and "`<repo>: <title>`" in text


def test_what_the_room_is_not_granted_is_said_so() -> None:
    text = room_help.text(room_help.AskedIn(), policy(granted=frozenset({CONTEXT})))
    assert "`approve` <work item> (not granted here: `gate.feedback`)" in text
    assert "Granted here: `context.added`, `work-item.reply`" in text
    assert REPLY in text


def test_a_pasted_link_is_a_work_item_wherever_a_ref_is() -> None:
    assert str(from_url("<https://github.com/acme/api/pull/12/files|PR>")) == "github:acme/api#12"
    assert from_url("https://github.com/acme/api/tree/main") is None
