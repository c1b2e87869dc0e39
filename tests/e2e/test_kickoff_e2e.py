"""A new work item from Slack opened once, end to end, even when the bot is killed mid-way.

A real errbot on SlackV3 against the loopback fakes: a member asks the bot, at the top of
the kickoff room, for a new work item. The request is stored before the issue is created;
the bot is killed with SIGKILL while its create is on the way to GitHub — before GitHub
made the issue, or after it made it but before the bot heard — and started again. Either
way exactly one issue exists, and the work item's thread says so once. Killed as it posts
that line in Slack, or as it posts the menu that asks which repository, it says each once
when it is back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, StartBot, relaying
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

POST = "chat.postMessage"

ALICE = "U0ALICE01"
SETTINGS = """
slack:
  channel: "#the-loop"
  authorizedUsers: [U0ALICE01]
  kickoff: {repo: %s}
people: {U0ALICE01: alice-gh}
"""
TIMEOUT = 60.0
OPENED, MENU = "🆕 Opened", "which repository"


def said_in(slack: FakeSlack, asked: dict[str, Any], words: str) -> list[dict[str, Any]]:
    """The bot's messages in the thread of ``asked`` that say ``words``."""
    return [m for m in slack.thread(LOOP, asked["ts"]) if words in str(m.get("text", ""))]


def killed_posting(bot: SlackBot, slack: FakeSlack, words: str) -> None:
    """The bot is killed while its post saying ``words`` waits for Slack's answer."""

    def posting() -> bool:
        return any(words in str(c.args.get("text", "")) for c in slack.calls_to(POST))

    wait_for(posting, TIMEOUT, f"the post saying {words!r}")
    bot.process.kill()
    slack.release()
    bot.process.start(timeout=START_TIMEOUT)


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
        relaying(slack_bot, SETTINGS % "acme/api", github, loop, "e2e-signing") as bot,
    ):
        held, release = _held(github, create_first=create_first)
        asked = bot.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "")
        wait_for(held.is_set, TIMEOUT, "the create on its way to GitHub")
        bot.process.kill()
        release.set()
        assert len(github.opened) == (1 if create_first else 0)
        bot.process.start(timeout=START_TIMEOUT)

        (said,) = wait_for(lambda: said_in(fake_slack, asked, OPENED), TIMEOUT, "the line")
        assert [o[2] for o in github.opened] == ["Retry the webhook on 502"]
        assert "github:acme/api#1" in said["text"]
        assert "<!-- theloop:kickoff message:" in github.opened[0][3]


def test_a_bot_killed_as_it_posts_the_opened_line_posts_it_once(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """The line lands in Slack, the bot dies before it hears (and before its queue records
    the request done): started again, it finds the issue and the line, and posts neither
    again — as a second request, carried out after it, shows."""
    with (
        FakeGitHub({"acme/api": set()}) as github,
        FakeLoop({}) as loop,
        relaying(slack_bot, SETTINGS % "acme/api", github, loop, "e2e-signing") as bot,
    ):
        fake_slack.fail(POST, "land_then_hang")
        asked = bot.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "")
        killed_posting(bot, fake_slack, OPENED)
        later = bot.say(ALICE, f"<@{BOT_USER}> Cache the schema", "")
        wait_for(lambda: said_in(fake_slack, later, OPENED), TIMEOUT, "the second line")
        (said,) = said_in(fake_slack, asked, OPENED)
        assert "github:acme/api#1" in said["text"]
        assert [o[2] for o in github.opened] == ["Retry the webhook on 502", "Cache the schema"]


@pytest.mark.parametrize("kind", ["hang", "land_then_hang"], ids=["unposted", "posted"])
def test_a_bot_killed_as_it_posts_the_repository_menu_asks_once_when_it_is_back(
    slack_bot: StartBot, fake_slack: FakeSlack, kind: str
) -> None:
    """Several repositories: the request is taken, the menu is on its way — not in Slack
    yet, or in Slack with no answer — and the bot is killed. Started again, it asks once,
    and the pick opens one issue."""
    with (
        FakeGitHub({"acme/api": set(), "acme/web": set()}) as github,
        FakeLoop({}) as loop,
        relaying(slack_bot, SETTINGS % "[acme/api, acme/web]", github, loop, "e2e-signing") as bot,
    ):
        fake_slack.fail(POST, kind)
        asked = bot.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "")
        killed_posting(bot, fake_slack, MENU)
        (menu,) = wait_for(lambda: said_in(fake_slack, asked, MENU), TIMEOUT, "the menu")
        select = menu["blocks"][1]["elements"][0]
        (web,) = (o for o in select["options"] if o["text"]["text"] == "acme/web")
        pick = {
            "type": "block_actions",
            "user": {"id": ALICE},
            "channel": {"id": LOOP},
            "container": {"type": "message", "message_ts": menu["ts"], "channel_id": LOOP},
            "actions": [{"action_id": select["action_id"], "selected_option": web}],
        }
        assert fake_slack.push_envelope(pick, kind="interactive") is not None
        wait_for(lambda: said_in(fake_slack, asked, OPENED), TIMEOUT, "the opened line")
        assert [(o[0], o[2]) for o in github.opened] == [("acme/web", "Retry the webhook on 502")]
        # The one menu, edited by the pick, and the line: nothing else in the thread.
        thread = [m["text"] for m in fake_slack.thread(LOOP, asked["ts"])]
        assert len(thread) == 2 and thread[0].startswith("Opening it in `acme/web`")
        assert thread[1].startswith(OPENED)


def test_a_kickoff_message_with_a_screenshot_names_it_in_the_new_issue(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """As the-loop's kickoff: the issue links what was attached — its name, type, size
    and Slack permalink — and fetches nothing (no session reads a path yet)."""
    with (
        FakeGitHub({"acme/api": set()}) as github,
        FakeLoop({}) as loop,
        relaying(slack_bot, SETTINGS % "acme/api", github, loop, "e2e-signing") as bot,
    ):
        shot = fake_slack.add_file("502 trace.png", b"\x89PNG\r\n\x1a\n" + b"p" * 90, "image/png")
        asked = bot.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "", files=[shot])
        wait_for(lambda: said_in(fake_slack, asked, OPENED), TIMEOUT, "the opened line")
        ((_repo, _number, title, body),) = [o[:4] for o in github.opened]
        assert title == "Retry the webhook on 502"
        assert f"📎 502_trace.png (image/png, 98 B) — {shot['permalink']}" in body
        assert fake_slack.downloads == [] and "files-pri" not in body


def test_a_kickoff_typed_while_the_bot_was_down_opens_its_work_item_when_it_is_back(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """The kickoff room was read quiet at start and then only heard live; a request typed
    while the bot was down is read when it is back, and the one heard live is not again."""
    with (
        FakeGitHub({"acme/api": set()}) as github,
        FakeLoop({}) as loop,
        relaying(slack_bot, SETTINGS % "acme/api", github, loop, "e2e-signing") as bot,
    ):
        room = fake_slack.channel_id(LOOP)
        read = fake_slack.calls_to
        wait_for(
            lambda: [c for c in read("conversations.history") if c.args.get("channel") == room],
            TIMEOUT,
            "the start's read of the kickoff room",
        )
        live = bot.say(ALICE, f"<@{BOT_USER}> Retry the webhook on 502", "")
        wait_for(lambda: said_in(fake_slack, live, OPENED), TIMEOUT, "the live request opened")
        bot.process.kill()
        away = fake_slack.say(LOOP, ALICE, f"<@{BOT_USER}> Page the on-call on 5xx")
        bot.process.start(timeout=START_TIMEOUT)
        wait_for(lambda: said_in(fake_slack, away, OPENED), TIMEOUT, "the request said away")
        titles = [o[2] for o in github.opened]
        assert titles == ["Retry the webhook on 502", "Page the on-call on 5xx"]
