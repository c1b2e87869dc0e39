"""Running the loop from Slack, end to end: a real errbot on the real SlackV3 backend.

The bot runs on Socket Mode against the loopback fake of Slack, with loopback fakes of
GitHub and the-loop's control plane. Members type every control verb in a work item's
thread and each lands once as the comment the-loop reads — in the keyword this deployment
renamed; a collaborator's decision is refused while their answer goes through; a work
item on a tracker we cannot write is refused with the reason, never a false ✅.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from the_loop.channels.commands import resolve_work_item
from the_loop.channels.verbs import compose_keyword, strip_mention
from the_loop.control import ControlConfig, parse_command

from tests.e2e.slackbot import (
    LOOP,
    START_TIMEOUT,
    SlackBot,
    StartBot,
    corpus,
    relaying,
    slash,
    slash_command,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support import signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO, NUMBER = "MadaraUchiha-314/the-loop", 260
ALICE, CAROL = "U0ALICE01", "U0CAROL01"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, comment.human, phase-approval-pending, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
  collaborators: ["@carol"]
people: {U0ALICE01: alice-gh}
relay:
  keywords: {start: "loop go"}
"""
TIMEOUT = 60.0
SIGNING_SECRET = "e2e-slack-signing-secret"


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub
    loop: FakeLoop

    def show(self, event: dict[str, Any]) -> dict[str, Any]:
        """the-loop sends ``event``; the room's message for it, once posted and delivered
        (the bot knows its question only then; a person takes longer to answer it)."""
        message = self.bot.show(event, TIMEOUT)
        self.bot.process.wait_delivered(TIMEOUT)
        return message

    def say(self, member: str, text: str, thread_ts: str) -> dict[str, Any]:
        return self.bot.say(member, text, thread_ts)

    def slash(self, text: str, member: str = ALICE, trigger: str = "t1") -> str:
        """``/the-loop <text>`` over Socket Mode: what the member alone is shown."""
        return str(slash(self.slack, text, member, trigger)["text"])

    def slash_over_http(self, text: str, secret: str = SIGNING_SECRET) -> tuple[int, dict]:
        body = urllib.parse.urlencode(slash_command(text, ALICE, "h1")).encode()
        headers = signed.slack_headers(secret, body)
        process = self.bot.process
        status, answer = signed.post(
            process.host, process.port, signed.COMMANDS_PATH, body, headers
        )
        return status, json.loads(answer or b"{}")

    def reactions(self, ts: str) -> list[str]:
        calls = self.slack.calls_to("reactions.add")
        return [c.args["name"] for c in calls if c.args["timestamp"] == ts]

    def told(self, member: str, words: str) -> bool:
        calls = self.slack.calls_to("chat.postEphemeral")
        return any(words in c.args["text"] for c in calls if c.args["user"] == member)

    def replies(self, thread: str) -> list[str]:
        return [m["text"] for m in self.slack.thread(LOOP, thread) if m.get("user") != ALICE]


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    fake_slack.users[CAROL] = "carol"  # named by @handle in the settings
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, SIGNING_SECRET) as bot,
    ):
        yield Rig(bot, fake_slack, github, loop)


#: What is typed, the comment's first line, and what the ✅ reply says happens next.
VERBS = [
    ("start", "loop go", "starts its session"),
    ("pause", "the-loop pause", "`resume` wakes it"),
    ("resume", "the-loop resume", "wakes the paused session"),
    ("contribute", "the-loop contribute", "as a contributor"),
    ("!do fix the flaky retry test", "the-loop do fix the flaky retry test", "ad-hoc loop"),
    ("!review focus on the migration", "the-loop review focus on the migration", "brief"),
    ("stop", "the-loop stop", "stops the session"),
    ("cleanup", "the-loop cleanup", "reclaims"),
]


def test_every_control_verb_typed_in_the_thread_lands_once_in_the_deployments_words(
    rig: Rig,
) -> None:
    thread = rig.show(corpus("06"))["thread_ts"]
    for count, (typed, first_line, next_step) in enumerate(VERBS, start=1):
        # `do` and `review` open sentences too: they are said to the bot by name.
        text = f"<@{BOT_USER}> {typed[1:]}" if typed.startswith("!") else typed
        said = rig.say(ALICE, text, thread)
        wait_for(lambda s=said: "white_check_mark" in rig.reactions(s["ts"]), TIMEOUT, typed)
        comments = rig.github.posted(REPO, NUMBER)
        assert len(comments) == count
        assert comments[-1].split("\n", 1)[0] == first_line
        assert "control command from `alice-gh`" in comments[-1]
        wait_for(
            lambda n=next_step: any(n in text for text in rig.replies(thread)),
            TIMEOUT,
            f"what happens after {typed}",
        )
    # Words after a bare verb are conversation, not a command: nothing more is relayed.
    rig.say(ALICE, "stop worrying, the retry is fine", thread)
    rig.say(ALICE, "start", thread)  # a sentinel: handled after the message before it
    wait_for(lambda: len(rig.github.posted(REPO, NUMBER)) == len(VERBS) + 1, TIMEOUT, "sentinel")
    assert rig.github.posted(REPO, NUMBER)[-1].startswith("loop go\n")


def test_a_mention_whose_verb_is_a_keywords_last_word_is_acted_on_once(rig: Rig) -> None:
    """`@the-loop go` where this deployment's start keyword is `loop go`: the-loop's
    mention grammar reads a control keyword's last word as its command. Slack delivers
    the mention as a message and as an `app_mention`, and once more on a retry: start
    lands once, in the deployment's words. Said without the mention, `go` is no command."""
    thread = rig.show(corpus("06"))["thread_ts"]
    said = rig.say(ALICE, f"<@{BOT_USER}> go", thread)
    for event in ({**said, "type": "app_mention"}, said):
        assert rig.slack.push_envelope({"type": "event_callback", "event": event}) is not None
    wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")
    # The-loop's own grammar composes the same line from the same words.
    theirs = ControlConfig(keywords={"start": "loop go"})
    assert compose_keyword(strip_mention(said["text"], BOT_USER)[0], theirs) == "loop go"
    rig.say(ALICE, "go", thread)
    rig.say(ALICE, "pause", thread)  # a sentinel: handled after the message before it
    read = ControlConfig(keywords={"start": "loop go", "pause": "the-loop pause"})

    def commands() -> list[str]:
        posted = rig.github.posted(REPO, NUMBER)
        return [c for c in (parse_command(body, read).command for body in posted) if c]

    wait_for(lambda: "pause" in commands(), TIMEOUT, "the sentinel")
    assert commands() == ["start", "pause"]
    assert rig.github.posted(REPO, NUMBER)[0].split("\n", 1)[0] == "loop go"


def test_a_command_the_deployment_switched_off_is_refused_and_nothing_relayed(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """``stop`` switched off (an empty keyword, as the-loop's config switches one off):
    typed in the thread, it is refused to the member saying so, and never reaches the
    ticket; the next command does."""
    off = SETTINGS.replace('keywords: {start: "loop go"}', 'keywords: {start: "loop go", stop: ""}')
    fake_slack.users[CAROL] = "carol"  # named by @handle in the settings
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, off, github, loop, SIGNING_SECRET) as bot,
    ):
        rig = Rig(bot, fake_slack, github, loop)
        thread = rig.show(corpus("06"))["thread_ts"]
        rig.say(ALICE, "stop", thread)
        wait_for(lambda: rig.told(ALICE, "switched off"), TIMEOUT, "the refusal")
        rig.say(ALICE, "start", thread)  # a sentinel: handled after the message before it
        wait_for(lambda: rig.github.posted(REPO, NUMBER), TIMEOUT, "the sentinel")
        (relayed,) = rig.github.posted(REPO, NUMBER)
        assert relayed.startswith("loop go\n")


def test_a_collaborator_may_reply_and_answer_but_not_decide(rig: Rig) -> None:
    gate = rig.show(corpus("06"))
    refused = rig.say(CAROL, "approve looks good", gate["thread_ts"])
    wait_for(lambda: rig.told(CAROL, "`gate.feedback`"), TIMEOUT, "why Carol may not approve")
    assert rig.reactions(refused["ts"]) == []  # not a stranger: no ⚠️
    reply = rig.say(CAROL, f"<@{BOT_USER}> prefer the smaller migration", gate["thread_ts"])
    wait_for(lambda: "white_check_mark" in rig.reactions(reply["ts"]), TIMEOUT, "the reply's ✅")
    ask = rig.show(corpus("15"))
    answer = rig.say(CAROL, "Option 2, please", ask["thread_ts"])
    wait_for(lambda: "white_check_mark" in rig.reactions(answer["ts"]), TIMEOUT, "the ✅")
    assert [r["actor"] for r in rig.loop.replies] == [f"slack:{CAROL}"] * 2
    assert [r["text"] for r in rig.loop.replies] == [
        "prefer the smaller migration",
        "Option 2, please",
    ]
    # Only the reply's own record is on the ticket: nothing Carol tried to decide.
    (mirrored,) = rig.github.posted(REPO, NUMBER)
    assert "reply from `slack:U0CAROL01`" in mirrored


def test_a_jira_work_item_is_refused_with_the_reason_never_a_false_success(rig: Rig) -> None:
    probe = {"id": "jira-1", "eventType": "comment.human", "workItem": "jira:OPS-12", "text": "hi"}
    thread = rig.show(probe)["thread_ts"]
    said = rig.say(ALICE, "start", thread)
    wait_for(lambda: rig.told(ALICE, "jira:OPS-12 is not a GitHub issue"), TIMEOUT, "why not")
    assert "white_check_mark" not in rig.reactions(said["ts"])
    assert "eyes" not in rig.reactions(said["ts"])


def test_the_slash_command_answers_help_status_and_verbs_to_the_member_alone(rig: Rig) -> None:
    helped = rig.slash("help")
    assert "/the-loop new [<repo>:] <title>" in helped
    # Which verb families this room holds, as the-loop's help says (the default grants).
    assert "gate.feedback: granted" in helped and "control.command: granted" in helped
    assert "instance.command: not granted" in helped
    gate = rig.show(corpus("06"))
    status = rig.slash("status")
    assert f"`{ITEM}`" in status and "gate" in status and f"<@{ALICE}>" in status
    answer = rig.slash(f"pause {ITEM}")
    assert answer.startswith(f"👀 Recorded the pause request for `{ITEM}`")
    wait_for(lambda: len(rig.github.posted(REPO, NUMBER)) == 1, TIMEOUT, "the comment")
    assert rig.github.posted(REPO, NUMBER)[0].startswith("the-loop pause\n")
    wait_for(
        lambda: any("`resume` wakes it" in t for t in rig.replies(gate["thread_ts"])),
        TIMEOUT,
        "the ✅ in the work item's thread",
    )
    assert "already recorded" in rig.slash(f"pause {ITEM}")  # Slack redelivered it
    assert "`control.command`" in rig.slash(f"stop {ITEM}", member=CAROL, trigger="t2")
    assert len(rig.github.posted(REPO, NUMBER)) == 1
    # A work item of a repository the operator never configured, the room never shown.
    elsewhere = rig.slash("start github:stranger/repo#3", trigger="t3")
    assert "is not a work item of this room" in elsewhere
    assert [r for r in rig.github.requests if "stranger" in r.path] == []


def test_a_slash_command_slack_delivers_again_after_a_restart_acts_once(rig: Rig) -> None:
    """The trigger is kept in storage: the same ``/the-loop pause`` delivered again once
    the bot's process is killed and started is told it was recorded, and relays nothing."""
    rig.show(corpus("06"))  # the room was shown the work item: it is the operator's
    assert rig.slash(f"pause {ITEM}").startswith(f"👀 Recorded the pause request for `{ITEM}`")
    wait_for(lambda: len(rig.github.posted(REPO, NUMBER)) == 1, TIMEOUT, "the comment")
    rig.bot.process.kill()
    rig.bot.process.start(timeout=START_TIMEOUT)
    assert "already recorded" in rig.slash(f"pause {ITEM}")  # the same trigger, again
    assert len(rig.github.posted(REPO, NUMBER)) == 1


def test_the_slash_command_over_signed_http(rig: Rig) -> None:
    status, answer = rig.slash_over_http("help")
    assert status == 200 and answer["response_type"] == "ephemeral"
    assert "/the-loop status" in answer["text"]
    assert rig.slash_over_http("help", secret="forged")[0] == 401


KICKOFF_SETTINGS = SETTINGS.replace(
    '  collaborators: ["@carol"]\n',
    '  collaborators: ["@carol"]\n'
    "  kickoff: {repo: [MadaraUchiha-314/the-loop, acme/api], labels: [from-slack]}\n",
)


@pytest.fixture
def kickoff_rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    fake_slack.users[CAROL] = "carol"
    issues = {REPO: {NUMBER}, "acme/api": set()}
    with (
        FakeGitHub(issues) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, KICKOFF_SETTINGS, github, loop, SIGNING_SECRET) as bot,
    ):
        yield Rig(bot, fake_slack, github, loop)


def _pick(rig: Rig, blocks: list[dict[str, Any]], repo: str, container: dict[str, Any]) -> None:
    menu = blocks[1]["elements"][0]
    option = next(o for o in menu["options"] if o["text"]["text"] == repo)
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": LOOP},
        "container": container,
        "actions": [{"action_id": menu["action_id"], "selected_option": option}],
    }
    assert rig.slack.push_envelope(payload, kind="interactive") is not None


def test_a_message_to_the_bot_opens_one_work_item_whose_start_button_starts_it(
    kickoff_rig: Rig,
) -> None:
    rig = kickoff_rig
    message = rig.slack.say(LOOP, ALICE, f"<@{BOT_USER}> Flaky teardown in the batch runner")
    envelope = {"type": "event_callback", "event": message}
    for _ in range(2):  # Slack delivers it twice
        assert rig.slack.push_envelope(envelope) is not None

    def menus() -> list[dict[str, Any]]:
        return [m for m in rig.slack.thread(LOOP, message["ts"]) if "which repository" in m["text"]]

    menu = wait_for(menus, TIMEOUT, "the repository picker")[0]
    container = {"type": "message", "message_ts": menu["ts"], "channel_id": LOOP}
    _pick(rig, menu["blocks"], "acme/api", container)
    wait_for(lambda: rig.github.opened, TIMEOUT, "the issue")
    ((repo, number, title, body, labels),) = rig.github.opened
    assert (repo, title, labels) == (
        "acme/api",
        "Flaky teardown in the batch runner",
        ["from-slack"],
    )
    assert "Opened from the **slack** channel by `alice-gh`" in body
    asked = [c for c in rig.slack.calls_to("chat.postMessage") if "which repo" in c.args["text"]]
    assert len(asked) == 1  # the second delivery asked nothing more

    def opened() -> list[dict[str, Any]]:
        thread = rig.slack.thread(LOOP, message["ts"])
        return [m for m in thread if m["text"].startswith("🆕 Opened")]

    first = wait_for(opened, TIMEOUT, "the work item's first thread reply")[0]
    start = first["blocks"][1]["elements"][0]
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": LOOP},
        "container": {"type": "message", "message_ts": first["ts"], "channel_id": LOOP},
        "message": first,
        "actions": [{**start, "block_id": "b"}],
    }
    assert rig.slack.push_envelope(payload, kind="interactive") is not None
    wait_for(lambda: rig.github.posted("acme/api", number), TIMEOUT, "the start comment")
    assert rig.github.posted("acme/api", number)[0].startswith("loop go\n")  # renamed start
    # The thread is the work item's now: a verb typed there is about it.
    rig.say(ALICE, "pause", message["ts"])
    wait_for(lambda: len(rig.github.posted("acme/api", number)) == 2, TIMEOUT, "the pause")


def test_slash_new_asks_which_repository_and_opens_once(kickoff_rig: Rig) -> None:
    rig = kickoff_rig
    answer = slash(rig.slack, "new Retry the webhook on 502", ALICE, "k1")
    assert "which repository" in answer["text"]
    container = {"type": "ephemeral", "message_ts": "1.0", "channel_id": LOOP}
    _pick(rig, answer["blocks"], REPO, container)
    wait_for(lambda: rig.github.opened, TIMEOUT, "the issue")
    _pick(rig, answer["blocks"], REPO, container)  # a second pick opens nothing
    (opened,) = rig.github.opened
    assert opened[0] == REPO and opened[2] == "Retry the webhook on 502"
    wait_for(
        lambda: [m for m in rig.slack.top_level(LOOP) if m["text"].startswith("🆕 Opened")],
        TIMEOUT,
        "the new work item's thread",
    )
    wait_for(lambda: rig.told(ALICE, "no longer open"), TIMEOUT, "the second pick refused")
    assert len(rig.github.opened) == 1


#: The usual setup: one kickoff repository, no `rooms:`.
ONE_KICKOFF = SETTINGS.replace(
    '  collaborators: ["@carol"]\n',
    '  collaborators: ["@carol"]\n  kickoff: {repo: MadaraUchiha-314/the-loop}\n',
)


def test_hash_n_in_the_slash_command_is_the_kickoff_repositorys_work_item(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """`/the-loop pause #260`, as the-loop resolves `#N` against its kickoff repository."""
    fake_slack.users[CAROL] = "carol"
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, ONE_KICKOFF, github, loop, SIGNING_SECRET) as bot,
    ):
        rig = Rig(bot, fake_slack, github, loop)
        rig.show(corpus("06"))
        assert f"`{ITEM}`" in rig.slash(f"status #{NUMBER}")
        answer = rig.slash(f"pause #{NUMBER}", trigger="t2")
        assert answer.startswith(f"👀 Recorded the pause request for `{ITEM}`")
        wait_for(lambda: len(github.posted(REPO, NUMBER)) == 1, TIMEOUT, "the comment")
        (comment,) = github.posted(REPO, NUMBER)
        assert parse_command(comment, ControlConfig()).command == "pause"
        # The same work item the-loop's own slash command names with the same setting.
        theirs = {"channels": {"slack": {"kickoff": {"repo": REPO}}}}
        assert resolve_work_item(f"#{NUMBER}", theirs).ref == ITEM


def test_bare_n_in_the_slash_command_is_hash_n_as_the_loop_reads_it(
    slack_bot: StartBot, fake_slack: FakeSlack
) -> None:
    """`/the-loop pause 260`, as the-loop's own slash command reads it: `#260` of the
    kickoff repository. A number in `new`'s title stays the title's."""
    fake_slack.users[CAROL] = "carol"
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, ONE_KICKOFF, github, loop, SIGNING_SECRET) as bot,
    ):
        rig = Rig(bot, fake_slack, github, loop)
        rig.show(corpus("06"))
        assert f"`{ITEM}`" in rig.slash(f"status {NUMBER}")
        answer = rig.slash(f"pause {NUMBER}", trigger="t2")
        assert answer.startswith(f"👀 Recorded the pause request for `{ITEM}`")
        wait_for(lambda: len(github.posted(REPO, NUMBER)) == 1, TIMEOUT, "the comment")
        (comment,) = github.posted(REPO, NUMBER)
        assert parse_command(comment, ControlConfig()).command == "pause"
        theirs = {"channels": {"slack": {"kickoff": {"repo": REPO}}}}
        assert resolve_work_item(str(NUMBER), theirs).ref == ITEM
        opening = rig.slash(f"new {NUMBER} retries on a 502 are too many", trigger="t3")
        assert opening.startswith(f"Opening a new work item in `{REPO}`")
        wait_for(lambda: github.opened, TIMEOUT, "the new issue")
        ((repo, _number, title, _body, _labels),) = github.opened
        assert (repo, title) == (REPO, f"{NUMBER} retries on a 502 are too many")
        assert len(github.posted(REPO, NUMBER)) == 1  # nothing more said on #260
