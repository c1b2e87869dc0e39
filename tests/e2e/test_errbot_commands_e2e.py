"""Errbot's own commands that read Slack answer admins only, in a real SlackV3 bot.

Errbot's ChatRoom plugin lists the rooms the bot is in (``!room list``), a room's members
(``!room occupants``) and its topic (``!room topic``), and Utils' ``!whoami <someone>``
looks a person up — each through the bot's own read scopes, so a member who asked would
learn what a private room holds without being in it. The shipped ``config.py`` makes them
admins-only, in a direct message, with Errbot's ``ACCESS_CONTROLS``: here a member who is
not an admin asks in a DM and learns nothing (the bot does not even read the room), and
the admin asks the same and is answered.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e import slackbot
from tests.e2e.slackbot import LOOP, SlackBot
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ADMIN, MEMBER, INSIDER = "U0ALICE01", "U0BOB0001", "U0CAROL01"
DMS = {ADMIN: "D0ALICE01", MEMBER: "D0BOB0001"}
PRIVATE, PRIVATE_NAME, TOPIC = "C0SECRET01", "acquisition", "Initech closes on Friday"
TIMEOUT = 60.0
#: What a private room would give away: its id, name, topic and the member only it has.
SECRETS = (PRIVATE, PRIVATE_NAME, "Initech", INSIDER)
REFUSED = "not allowed to access this command"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    people = [(ADMIN, "alice"), (MEMBER, "bob"), (INSIDER, "carol")]
    with FakeSlack(channels=[(LOOP, "the-loop")], users=people) as fake:
        fake.add_channel(PRIVATE_NAME, PRIVATE, private=True, topic=TOPIC, members=[INSIDER])
        for member, dm in DMS.items():
            fake.add_channel(f"dm-{member}", dm)
        yield fake
        fake.release()


@pytest.fixture
def bot(tmp_path: Path, slack: FakeSlack) -> Iterator[SlackBot]:
    started = slackbot.start(
        tmp_path / "bot",
        'slack:\n  channel: "#the-loop"\n',
        slack,
        {"THELOOP_ADMINS": ADMIN},
    )
    yield started
    started.process.kill()


def ask(slack: FakeSlack, member: str, text: str) -> str:
    """``member`` DMs the bot ``text``; the bot's answer there."""
    dm = DMS[member]
    before = len(slack.messages(dm))
    message = slack.say(dm, member, text)
    message["channel_type"] = "im"
    assert slack.push_envelope({"type": "event_callback", "event": message}) is not None

    def answered() -> str:
        said = [m for m in slack.messages(dm)[before:] if m.get("user") == BOT_USER]
        return "\n".join(str(m.get("text") or "") for m in said)

    return wait_for(answered, TIMEOUT, f"the bot's answer to {text!r}")


COMMANDS = [
    "!room list",
    f"!room occupants {PRIVATE}",
    f"!room topic {PRIVATE}",
    f"!room topic {PRIVATE} renamed",
    f"!room join {PRIVATE}",
    f"!room invite {PRIVATE} <@{MEMBER}>",
    f"!whoami <@{INSIDER}>",
]


def test_a_member_who_is_not_an_admin_learns_nothing_of_a_private_room_an_admin_does(
    bot: SlackBot, slack: FakeSlack
) -> None:
    answers = {command: ask(slack, MEMBER, command) for command in COMMANDS}
    leaks = {c: a for c, a in answers.items() if REFUSED not in a or any(s in a for s in SECRETS)}
    assert not leaks, leaks
    # Refused before the command ran: the bot asked Slack nothing about the room.
    assert slack.calls_to("conversations.members") == []
    assert slack.calls_to("conversations.setTopic") == []
    assert slack.calls_to("conversations.invite") == []
    told = [m for m in slack.messages(DMS[MEMBER]) if m.get("user") == BOT_USER]
    everything = "\n".join(str(m.get("text") or "") for m in told)
    assert len(told) == len(COMMANDS) and not [s for s in SECRETS if s in everything]

    # The admin, in a direct message, is still answered.
    assert PRIVATE_NAME in ask(slack, ADMIN, "!room list")
    assert INSIDER in ask(slack, ADMIN, f"!room occupants {PRIVATE}")
    assert TOPIC in ask(slack, ADMIN, f"!room topic {PRIVATE}")


def test_the_admin_is_refused_in_a_room_where_everyone_would_read_the_answer(
    bot: SlackBot, slack: FakeSlack
) -> None:
    bot.say(ADMIN, "!room list", "")

    def answered() -> str:
        said = [m for m in slack.messages(LOOP) if m.get("user") == BOT_USER]
        return "\n".join(str(m.get("text") or "") for m in said)

    answer = wait_for(answered, TIMEOUT, "the bot's answer in the room")
    assert "chatroom" in answer and PRIVATE_NAME not in answer


def test_a_member_cannot_make_the_bot_ping_a_room_with_echo(
    bot: SlackBot, slack: FakeSlack
) -> None:
    """Utils' ``!echo`` posts what it is given as the bot, which Errbot sends with
    ``link_names``: a member whom the workspace stops from pinging everyone would ping the
    room in the bot's name. Refused for anyone but an admin, in a direct message."""
    bot.say(MEMBER, "!echo @channel the build is on fire <!here>", "")

    def answered() -> list[str]:
        return [str(m.get("text") or "") for m in slack.messages(LOOP) if m.get("user") == BOT_USER]

    said = wait_for(answered, TIMEOUT, "the bot's answer to !echo in the room")
    assert any(REFUSED in text for text in said), said
    assert not [t for t in said if "on fire" in t or "<!channel>" in t or "<!here>" in t]
    assert not [c for c in slack.calls_to("chat.postMessage") if "fire" in str(c.args.get("text"))]
