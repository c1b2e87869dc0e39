"""Admins written as Slack member ids, as mentions or as handles, in a real SlackV3 bot.

``THELOOP_ADMINS`` documents member ids; people also paste a mention (``<@U…>``) or write a
handle. Each form must reach the admin when the bot has something to tell them — here, that
its port is taken and the-loop's events reach nobody — and an admin written as a mention is
still let into the admin commands, which Errbot matches by member id. Errbot's own warning
(the plugin failed to start) reaches the admins written as ids or mentions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.botproc import BotProcess
from tests.e2e.slackbot import LOOP, START_TIMEOUT, slack_env
from tests.fakes.slack_api import FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ADMINS = {"U0ALICE01": "D0ALICE01", "U0BOB0001": "D0BOB0001", "U0CAROL01": "D0CAROL01"}
WRITTEN = "U0ALICE01, <@U0BOB0001>, @carol"
TIMEOUT = 60.0


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    people = [("U0ALICE01", "alice"), ("U0BOB0001", "bob"), ("U0CAROL01", "carol")]
    with FakeSlack(channels=[(LOOP, "the-loop")], users=people) as fake:
        for member, dm in ADMINS.items():
            fake.add_channel(f"dm-{member}", dm)
        yield fake
        fake.release()


def test_every_form_of_admin_is_told_and_a_mention_is_let_into_admin_commands(
    tmp_path: Path, slack: FakeSlack, taken_port: int
) -> None:
    env = {**slack_env(slack), "THELOOP_ADMINS": WRITTEN}
    bot = BotProcess(tmp_path, backend="SlackV3", env=env, port=taken_port)
    (tmp_path / "theloop.yaml").write_text('slack:\n  channel: "#the-loop"\n', encoding="utf-8")
    bot.start(timeout=START_TIMEOUT)
    try:

        def told() -> list[str]:
            return [
                dm
                for dm in ADMINS.values()
                if any("unreachable" in str(m.get("text")) for m in slack.messages(dm))
            ]

        wait_for(lambda: len(told()) == len(ADMINS), TIMEOUT, lambda: f"admins told: {told()}")
        assert "Unparseable" not in bot.log_text()

        bob_dm = ADMINS["U0BOB0001"]
        message = slack.say(bob_dm, "U0BOB0001", "!theloop status")
        message["channel_type"] = "im"
        assert slack.push_envelope({"type": "event_callback", "event": message}) is not None

        def answered() -> str:
            texts = [str(m.get("text") or "") for m in slack.messages(bob_dm)]
            return next((t for t in texts if "NOT LISTENING" in t or "privileges" in t), "")

        answer = wait_for(answered, TIMEOUT, "bob's status")
        assert "NOT LISTENING" in answer and "privileges" not in answer
    finally:
        bot.kill()


def test_errbot_tells_an_admin_written_as_an_id_that_the_plugin_failed_to_start(
    tmp_path: Path, slack: FakeSlack
) -> None:
    env = {**slack_env(slack), "THELOOP_ADMINS": WRITTEN}
    bot = BotProcess(tmp_path, backend="SlackV3", env=env)
    (tmp_path / "theloop.yaml").write_text("slack:\n  chanel: oops\n", encoding="utf-8")
    bot.start(wait=False)
    try:

        def warned(dm: str) -> bool:
            return any("TheLoop" in str(m.get("text")) for m in slack.messages(dm))

        for member in ("U0ALICE01", "U0BOB0001"):  # an id, and a mention
            wait_for(lambda m=member: warned(ADMINS[m]), TIMEOUT, f"{member} warned")
        assert "Unparseable" not in bot.log_text()
    finally:
        bot.kill()
