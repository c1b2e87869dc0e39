"""A new work item from Slack opened once, end to end, even when the bot is killed mid-way.

A real errbot on SlackV3 against the loopback fakes: a member asks the bot, at the top of
the kickoff room, for a new work item. The request is stored before the issue is created;
the bot is killed with SIGKILL while its create is on the way to GitHub — before GitHub
made the issue, or after it made it but before the bot heard — and started again. Either
way exactly one issue exists, and the work item's thread says so once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, START_TIMEOUT, StartBot, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ALICE = "U0ALICE01"
SETTINGS = """
slack:
  channel: "#the-loop"
  authorizedUsers: [U0ALICE01]
  kickoff: {repo: acme/api}
people: {U0ALICE01: alice-gh}
"""
TIMEOUT = 60.0


def _held(github: FakeGitHub, *, create_first: bool) -> tuple[threading.Event, threading.Event]:
    """The first ``POST …/issues`` is held (the issue made first, or not at all) until
    ``release``; ``held`` is set once it arrived. Later ones are answered as GitHub does."""
    held, release = threading.Event(), threading.Event()
    answered: Callable[[Any], Any] = github.route

    def route(request: Any) -> Any:
        if request.method != "POST" or not request.path.endswith("/issues") or held.is_set():
            return answered(request)
        answer = answered(request) if create_first else (503, {}, {"message": "held"})
        held.set()
        release.wait(TIMEOUT)
        return answer

    github.route = route  # type: ignore[method-assign]
    return held, release


@pytest.mark.parametrize("create_first", [False, True], ids=["before-github", "after-github"])
def test_a_bot_killed_between_the_claim_and_the_issue_opens_it_once(
    slack_bot: StartBot, fake_slack: FakeSlack, create_first: bool
) -> None:
    with (
        FakeGitHub({"acme/api": set()}) as github,
        FakeLoop({}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, "e2e-signing") as bot,
    ):
        held, release = _held(github, create_first=create_first)
        asked = bot.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "")
        wait_for(held.is_set, TIMEOUT, "the create on its way to GitHub")
        bot.process.kill()
        release.set()
        assert len(github.opened) == (1 if create_first else 0)
        bot.process.start(timeout=START_TIMEOUT)

        def opened_said() -> list[dict[str, Any]]:
            thread = fake_slack.thread(LOOP, asked["ts"])
            return [m for m in thread if str(m.get("text", "")).startswith("🆕 Opened")]

        (said,) = wait_for(opened_said, TIMEOUT, "the work item's thread")
        assert [o[2] for o in github.opened] == ["Retry the webhook on 502"]
        assert "github:acme/api#1" in said["text"]
        assert "<!-- theloop:kickoff message:" in github.opened[0][3]
