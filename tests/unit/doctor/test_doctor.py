"""The doctor against loopback fakes of Slack, GitHub and the-loop: each finding, its remedy."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk import WebClient
from slack_sdk.socket_mode import SocketModeClient

from looproom.doctor import echo
from looproom.doctor.examine import SlackSide, examine
from looproom.doctor.findings import EVIDENCE, NOTE, OK, PROBLEM, Finding, report
from looproom.settings import Environment, Settings
from looproom.slack.transport import SlackTransport
from tests.fakes import github_api
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.support.wait import wait_for

ENV = Environment(
    slack_bot_token=BOT_TOKEN,
    slack_app_token=APP_TOKEN,
    webhook_secret="s3cret",
    backend="SlackV3",
)
SETTINGS = Settings(channel="#the-loop")


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def transport(slack: FakeSlack) -> SlackTransport:
    return SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))


def _socket(slack: FakeSlack) -> Iterator[SocketModeClient]:
    client = SocketModeClient(
        app_token=APP_TOKEN, web_client=WebClient(token=BOT_TOKEN, base_url=slack.url)
    )
    client.connect()
    wait_for(client.is_connected, 10, "a Socket Mode connection to the fake")
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def socket(slack: FakeSlack) -> Iterator[SocketModeClient]:
    yield from _socket(slack)


def _about(found: list[Finding], subject: str) -> list[Finding]:
    return [f for f in found if f.subject.startswith(subject)]


def _run(transport: SlackTransport, settings: Settings = SETTINGS, **env: str) -> list[Finding]:
    environment = Environment(**{**ENV.__dict__, **env})
    side = SlackSide(transport, no_socket_why="no socket in this test", connected=True)
    return examine(environment, settings, side)


# -- the token and its scopes ------------------------------------------------------------------


def test_a_valid_token_with_every_scope_is_in_order(transport: SlackTransport) -> None:
    found = _run(transport)
    assert [f.level for f in _about(found, "Slack bot token")] == [OK]
    assert [f.level for f in _about(found, "Slack scopes")] == [OK]


def test_too_few_scopes_names_each_missing_one_with_the_remedy(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.scopes = "chat:write,channels:read,users:read,team:read"
    scopes = _about(_run(transport), "Slack scopes")
    missing = {f.says.split("`")[1] for f in scopes}
    assert {f.level for f in scopes} == {PROBLEM}
    assert missing == {
        "channels:history",
        "commands",
        "files:read",
        "groups:history",
        "groups:read",
        "im:history",
        "im:read",
        "im:write",
        "mpim:history",
        "mpim:read",
        "reactions:read",
        "reactions:write",
    }
    assert all("reinstall the app" in f.remedy for f in scopes)


def test_a_refused_token_says_so_and_checks_nothing_else_of_slack(slack: FakeSlack) -> None:
    bad = SlackTransport(WebClient(token="xoxb-not-it", base_url=slack.url))
    found = _run(bad)
    token = _about(found, "Slack bot token")
    assert token[0].level == PROBLEM and "invalid_auth" in token[0].says
    assert "THELOOP_SLACK_BOT_TOKEN" in token[0].remedy
    assert not _about(found, "room")


# -- rooms -------------------------------------------------------------------------------------


def test_a_room_the_bot_is_not_in_says_invite_the_bot(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.add_channel("api-loop", "C0APILOOP1", member=False)
    settings = Settings(channel="#the-loop", rooms=(("acme/api", "#api-loop"),))
    rooms = _about(_run(transport, settings), "room")
    assert [f.level for f in rooms] == [OK, PROBLEM]
    assert "not in it" in rooms[1].says
    assert rooms[1].remedy.startswith("invite @theloop to #api-loop")


def test_a_private_room_hidden_from_the_listing_is_found_among_the_bots_own(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    hidden = slack.add_channel("war-room", private=True, listed=False)
    rooms = _about(_run(transport, Settings(channel="war-room")), "room")
    assert [(f.level, hidden in f.says) for f in rooms] == [(OK, True)]


def test_a_listing_cut_short_says_use_the_channel_id_not_no_such_room(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.page_limit = 1  # ten pages of one room each: fewer than the workspace has
    for n in range(12):
        slack.add_channel(f"room-{n:02d}", member=False)
    rooms = _about(_run(transport, Settings(channel="#beyond-the-listing")), "room")
    assert rooms[0].level == PROBLEM
    assert "use the channel id" in rooms[0].remedy
    assert "no room" not in rooms[0].says


def test_a_room_nobody_can_find_says_so_and_how_a_private_one_shows(
    transport: SlackTransport,
) -> None:
    rooms = _about(_run(transport, Settings(channel="#typo-room")), "room")
    assert rooms[0].level == PROBLEM
    assert "no room #typo-room that the bot can see" in rooms[0].says
    assert "invite @theloop" in rooms[0].remedy


def test_no_room_configured_is_a_problem(transport: SlackTransport) -> None:
    rooms = _about(_run(transport, Settings()), "rooms")
    assert rooms[0].level == PROBLEM and "slack.channel" in rooms[0].remedy


# -- how events arrive -------------------------------------------------------------------------


def test_bot_events_cannot_be_read_so_it_says_how_to_test_with_one_message(
    transport: SlackTransport,
) -> None:
    events = _about(_run(transport), "bot events")[0]
    assert events.level == NOTE and "cannot tell" in events.says
    assert "`!theloop`" in events.remedy and "message.channels" in events.remedy


def test_with_neither_token_the_room_polls_and_is_told_what_a_poll_cannot_hear(
    transport: SlackTransport,
) -> None:
    found = _run(transport, slack_app_token="", slack_signing_secret="")
    (polled,) = _about(found, "events by poll")
    assert polled.level == NOTE and "every 30 s" in polled.says
    assert "no button, press, slash command" in polled.says
    assert "THELOOP_SLACK_APP_TOKEN" in polled.remedy
    assert _about(found, "bot events") == []  # a poll reads; no subscription is involved


def test_a_socket_that_is_not_connected_is_a_problem(transport: SlackTransport) -> None:
    side = SlackSide(transport, no_socket_why="-", connected=False)
    found = examine(ENV, SETTINGS, side)
    assert _about(found, "Socket Mode")[0].level == PROBLEM


# -- the second consumer -----------------------------------------------------------------------


def test_every_echo_back_is_no_sign_of_a_second_consumer_and_leaves_no_litter(
    slack: FakeSlack, transport: SlackTransport, socket: SocketModeClient
) -> None:
    slack.echo_posts = True
    side = SlackSide(transport, socket, own_socket=True, connected=True)
    probe = _about(examine(ENV, SETTINGS, side), echo.SUBJECT)[0]
    assert probe.level == OK and "3/3" in probe.says and "not proof" in probe.says
    assert slack.messages("the-loop") == []  # every probe message deleted again


def test_a_second_connection_taking_echoes_is_labelled_evidence(
    slack: FakeSlack, transport: SlackTransport, socket: SocketModeClient
) -> None:
    slack.echo_posts = True
    for _other in _socket(slack):  # another copy of the bot, on the same app token
        side = SlackSide(transport, socket, own_socket=True, connected=True)
        probe = _about(examine(ENV, SETTINGS, side, window=2.0), echo.SUBJECT)[0]
    assert probe.level == EVIDENCE
    assert "another connection" in probe.says and "not proof" in probe.says
    assert "one app token, one running bot" in probe.remedy


def test_a_dropped_echo_is_evidence_and_says_events_may_be_off(
    slack: FakeSlack, transport: SlackTransport, socket: SocketModeClient
) -> None:
    slack.echo_posts = False  # Slack sends nothing back: the echoes are dropped
    side = SlackSide(transport, socket, own_socket=True, connected=True)
    probe = _about(examine(ENV, SETTINGS, side, window=0.5), echo.SUBJECT)[0]
    assert probe.level == EVIDENCE and "0/3" in probe.says
    assert "message events may also be off" in probe.says


def test_without_a_socket_the_probe_says_why_it_did_not_run(transport: SlackTransport) -> None:
    probe = _about(_run(transport), echo.SUBJECT)[0]
    assert probe.level == EVIDENCE and "no socket in this test" in probe.says


def test_the_bots_own_connection_is_listened_on_without_acknowledging(
    slack: FakeSlack, transport: SlackTransport, socket: SocketModeClient
) -> None:
    # In chat the backend acknowledges its own envelopes; the probe only listens.
    slack.echo_posts = True
    side = SlackSide(transport, socket, own_socket=False, connected=True)
    probe = _about(examine(ENV, SETTINGS, side), echo.SUBJECT)[0]
    assert probe.level == OK
    assert slack.envelope_acks == {}
    assert socket.socket_mode_request_listeners == []  # detached again


# -- the webhook and the relay's peers ---------------------------------------------------------


def test_an_unset_webhook_secret_on_slack_is_a_problem_with_the_remedy(
    transport: SlackTransport,
) -> None:
    secret = _about(_run(transport, webhook_secret=""), "webhook secret")[0]
    assert secret.level == PROBLEM and "503" in secret.says
    assert "THELOOP_WEBHOOK_SECRET" in secret.remedy


def test_github_token_and_each_relay_repository(transport: SlackTransport) -> None:
    with FakeGitHub({"acme/api": {7}, "acme/quiet": {1}}) as github:
        github.no_issues.add("acme/quiet")
        settings = Settings(
            channel="#the-loop",
            rooms=(("acme/api", "#the-loop"), ("acme/quiet", "#the-loop"), ("acme/*", "x")),
            relay_repos={"acme/gone": "/srv/gone"},
        )
        found = _run(transport, settings, github_token=github_api.TOKEN, github_api=github.url)
    assert _about(found, "GitHub token")[0].says == f"valid, as {github_api.LOGIN}"
    repos = {f.subject: f.level for f in _about(found, "GitHub acme/")}
    assert repos == {
        "GitHub acme/api": OK,
        "GitHub acme/gone": PROBLEM,
        "GitHub acme/quiet": PROBLEM,
    }


def test_a_refused_github_token_is_a_problem(transport: SlackTransport) -> None:
    with FakeGitHub() as github:
        found = _run(transport, github_token="ghp_wrong", github_api=github.url)
    assert _about(found, "GitHub token")[0].level == PROBLEM


def test_the_loops_api_reachable_or_not(transport: SlackTransport) -> None:
    with FakeLoop() as loop:
        up = _about(_run(transport, loop_api=loop.url), "the-loop's API")[0]
        url = loop.url
    down = _about(_run(transport, loop_api=url), "the-loop's API")[0]
    assert (up.level, down.level) == (OK, PROBLEM)


def test_off_slack_the_doctor_still_checks_the_rest() -> None:
    env = Environment(backend="Text")
    found = examine(env, Settings(), SlackSide(), local_secret=True)
    assert [f.subject for f in found] == ["Slack", "grants", "webhook secret", "GitHub"]
    assert found[2].level == OK and "local" in found[2].says


def test_the_report_leads_with_the_count_and_gives_each_remedy() -> None:
    text = report([Finding(OK, "a", "fine"), Finding(PROBLEM, "b", "broken", "fix b")])
    assert text.splitlines()[0] == "theloop doctor: 1 problem(s), 0 to look into"
    assert "❌ b: broken\n    → fix b" in text


# -- attention -------------------------------------------------------------------------------


def test_attention_quiet_is_said_and_direct_messages_without_im_write_are_a_problem(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    quiet = _about(_run(transport), "Attention")
    assert [f.level for f in quiet] == [NOTE] and "quiet" in quiet[0].says
    direct = Settings.from_mapping({"attention": {"rooms": {"#the-loop": {"direct": True}}}})
    (on,) = _about(_run(transport, direct), "Attention")
    assert (on.level, on.says) == (
        OK,
        "direct messages, reminders and escalation on for rooms #the-loop",
    )
    slack.scopes = slack.scopes.replace("im:write,", "")
    (lacking,) = _about(_run(transport, direct), "Attention")
    assert lacking.level == PROBLEM and "lacks `im:write`" in lacking.says


def test_the_home_tab_is_said_as_the_bot_last_published_one(transport: SlackTransport) -> None:
    def home(tab: bool | None) -> Finding:
        side = SlackSide(transport, no_socket_why="no socket here", connected=True, home_tab=tab)
        (found,) = _about(examine(ENV, SETTINGS, side), "App Home")
        return found

    unknown, off, on = home(None), home(False), home(True)
    assert unknown.level == NOTE and "cannot tell" in unknown.says
    assert off.level == PROBLEM and "not_enabled" in off.says
    assert "App Home → Show Tabs → Home Tab" in off.remedy
    assert on.level == OK


def test_the_grants_in_force_are_named_and_the_peers_default_said_beside_ours(
    transport: SlackTransport,
) -> None:
    """Unset, ``slack.publish`` grants more than the-loop's own room does by default
    (replies only): the doctor names the acts, and how to have the peer's."""
    (unset,) = _about(_run(transport, Settings()), "grants")
    assert unset.level == NOTE and "`gate.feedback`" in unset.says
    assert "`instance.command`" not in unset.says
    assert "slack.publish: [work-item.reply]" in unset.remedy
    narrow = Settings(publish=frozenset())
    (only,) = _about(_run(transport, narrow), "grants")
    assert only.level == OK and only.says == "the room grants `work-item.reply` (`slack.publish`)"
