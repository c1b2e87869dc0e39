"""New work items from Slack: opened once per message, in the picked repository, by who may."""

from __future__ import annotations

from typing import Any

import pytest

from looproom.decide import slash
from looproom.decide.authorization import AccessPolicy
from looproom.kickoff.github import OpenedIssue
from looproom.kickoff.opener import PICK, PICK_TTL, Opener, addressed_words
from looproom.room import buttons
from looproom.settings import KickoffSettings

BOT, ALICE, CAROL, MALLORY = "U0THELOOP", "U0ALICE01", "U0CAROL01", "U0MALLORY"
POLICY = AccessPolicy(
    BOT, frozenset({ALICE}), {ALICE: "alice-gh"}, collaborators=frozenset({CAROL})
)
ONE = KickoffSettings(("acme/api",), ("from-slack",))
TWO = KickoffSettings(("acme/api", "acme/web"))


class Maker:
    def __init__(self, error: str = "") -> None:
        self.opened: list[tuple[str, str, str, tuple[str, ...]]] = []
        self.error = error

    def open(self, repo: str, title: str, body: str, labels: tuple[str, ...]) -> OpenedIssue:
        if self.error:
            return OpenedIssue(repo, error=self.error)
        self.opened.append((repo, title, body, labels))
        number = len(self.opened) + 40
        return OpenedIssue(repo, number, f"https://github.com/{repo}/issues/{number}")


class Poster:
    def __init__(self) -> None:
        self.posts: list[tuple[str, str, list[dict[str, Any]], str]] = []
        self.told: list[tuple[str, str, str]] = []
        self.updates: list[tuple[str, str, str]] = []

    def post(self, channel: str, text: str, blocks: list[dict[str, Any]], thread_ts: str) -> str:
        self.posts.append((channel, text, blocks, thread_ts))
        return f"9{len(self.posts)}.0"

    def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        self.updates.append((channel, ts, text))

    def tell(self, channel: str, member: str, text: str, thread_ts: str = "") -> None:
        self.told.append((member, text, thread_ts))


class Rig:
    def __init__(self, kickoff: KickoffSettings | None = ONE, maker: Maker | None = None) -> None:
        self.store: dict[str, Any] = {}
        self.maker, self.poster = maker or Maker(), Poster()
        self.bound: list[tuple[str, str, tuple[str, ...]]] = []
        self.now = 1000.0
        self.opener = Opener(
            self.store,
            lambda channel: kickoff if channel in ("C1", "") else None,
            self.maker,  # type: ignore[arg-type]
            self.poster,
            lambda: POLICY,
            lambda item, channel, ts: self.bound.append((item, channel, ts)),
            clock=lambda: self.now,
            background=lambda work: work(),
        )

    def message(self, text: str, member: str = ALICE, ts: str = "10.0", **kw: Any) -> bool:
        return self.opener.message(member, text, kw.get("channel", "C1"), ts, kw.get("thread", ""))

    def pick(self, repo: str, member: str = ALICE, where: int = -1) -> bool:
        menu = self.poster.posts[where][2][1]["elements"][0]
        value = next(o["value"] for o in menu["options"] if o["value"].endswith(f"|{repo}"))
        payload = {
            "type": "block_actions",
            "user": {"id": member},
            "channel": {"id": "C1"},
            "container": {"type": "message", "message_ts": "91.0", "channel_id": "C1"},
            "actions": [{"action_id": PICK, "selected_option": {"value": value}}],
        }
        return self.opener.picked(payload)


def test_only_a_leading_mention_of_the_bot_addresses_it() -> None:
    assert addressed_words(f"<@{BOT}> flaky teardown", BOT) == "flaky teardown"
    assert addressed_words(f"<@{BOT}|theloop>: flaky", BOT) == "flaky"
    assert addressed_words(f"flaky <@{BOT}>", BOT) is None
    assert addressed_words("<@U0OTHER01> flaky", BOT) is None


def test_a_message_to_the_bot_opens_one_issue_even_when_delivered_twice() -> None:
    rig = Rig()
    text = f"<@{BOT}> Flaky teardown in the batch runner\nfails one run in ten"
    assert rig.message(text) and rig.message(text)
    ((repo, title, body, labels),) = rig.maker.opened
    assert (repo, title, labels) == (
        "acme/api",
        "Flaky teardown in the batch runner",
        ("from-slack",),
    )
    assert body.startswith("Flaky teardown in the batch runner\nfails one run in ten\n\n---")
    ((channel, said, blocks, thread),) = rig.poster.posts
    assert (channel, thread) == ("C1", "10.0") and "github:acme/api#41" in said
    start = blocks[1]["elements"][0]
    assert start["action_id"] == buttons.START and start["value"] == "github:acme/api#41"
    ref = "github:acme/api#41"
    assert rig.bound == [(ref, "C1", ("10.0",)), (ref, "C1", ("10.0", "91.0"))]


def test_the_messages_thread_is_the_work_items_before_its_start_button_is_posted() -> None:
    """A press on Start may reach the bot before Slack's answer to the post does: the
    thread the button is in must map to the work item already."""
    rig = Rig()
    bound_when_posted: list[list[tuple[str, str, tuple[str, ...]]]] = []
    post = rig.poster.post

    def posting(*args: Any) -> str:
        bound_when_posted.append(list(rig.bound))
        return post(*args)

    rig.poster.post = posting  # type: ignore[method-assign]
    assert rig.message(f"<@{BOT}> Flaky teardown")
    assert bound_when_posted == [[("github:acme/api#41", "C1", ("10.0",))]]


@pytest.mark.parametrize(
    ("text", "channel", "thread"),
    [
        ("Flaky teardown", "C1", ""),  # not addressed to the bot
        (f"<@{BOT}> start github:acme/api#7", "C1", ""),  # a verb: the desk's
        (f"<@{BOT}> Flaky teardown", "C2", ""),  # a room without kickoff
        (f"<@{BOT}> Flaky teardown", "C1", "5.0"),  # in a thread
    ],
)
def test_what_is_not_a_kickoff_is_left_to_the_desk(text: str, channel: str, thread: str) -> None:
    rig = Rig()
    assert not rig.message(text, channel=channel, thread=thread)
    assert rig.maker.opened == []


@pytest.mark.parametrize(
    ("member", "words"), [(MALLORY, "slack.authorizedUsers"), (CAROL, "`work-item.create`")]
)
def test_who_may_not_create_is_told_and_nothing_is_claimed(member: str, words: str) -> None:
    rig = Rig()
    assert rig.message(f"<@{BOT}> Flaky teardown", member=member)
    assert rig.maker.opened == [] and words in rig.poster.told[0][1]
    assert rig.message(f"<@{BOT}> Flaky teardown")  # the same message, by who may: opened
    assert len(rig.maker.opened) == 1


def test_with_several_repositories_the_asker_picks_one_and_a_choice_answers_once() -> None:
    rig = Rig(TWO)
    assert rig.message(f"<@{BOT}> Flaky teardown")
    (menu_post,) = rig.poster.posts
    assert "which repository" in menu_post[1] and rig.maker.opened == []
    assert rig.pick("acme/web", member=CAROL)  # not the asker's: refused
    assert rig.maker.opened == [] and "Only <@U0ALICE01>" in rig.poster.told[-1][1]
    assert rig.pick("acme/web", where=0)
    assert [o[0] for o in rig.maker.opened] == ["acme/web"]
    assert rig.pick("acme/web", where=0)  # picked again: the choice is gone
    assert len(rig.maker.opened) == 1 and "no longer open" in rig.poster.told[-1][1]


def test_a_choice_left_too_long_expires() -> None:
    rig = Rig(TWO)
    rig.message(f"<@{BOT}> Flaky teardown")
    rig.now += PICK_TTL + 1
    assert rig.pick("acme/api")
    assert rig.maker.opened == [] and "expired" in rig.poster.told[-1][1]


def test_a_failed_create_is_said_and_not_retried() -> None:
    rig = Rig(maker=Maker(error="GitHub answered 502"))
    text = f"<@{BOT}> Flaky teardown"
    rig.message(text)
    assert "could not be opened" in rig.poster.told[-1][1] and rig.poster.posts == []
    rig.message(text)  # redelivered: the claim holds, nothing is tried again
    assert len(rig.poster.told) == 1


def test_slash_new_answers_at_once_and_opens_with_a_thread_of_its_own() -> None:
    rig = Rig()
    command = slash.Slash(ALICE, "C1", slash.NEW, "Flaky teardown", "trig-1")
    answer = rig.opener.from_slash(command)
    assert answer["response_type"] == "ephemeral" and "acme/api" in answer["text"]
    assert [o[0] for o in rig.maker.opened] == ["acme/api"]
    ((_, _, _, thread),) = rig.poster.posts
    assert thread == "" and rig.bound == [("github:acme/api#41", "C1", ("91.0",))]
    assert "already" in rig.opener.from_slash(command)["text"]  # Slack redelivered it
    assert len(rig.maker.opened) == 1


def test_slash_new_with_several_repositories_answers_with_the_picker() -> None:
    rig = Rig(TWO)
    answer = rig.opener.from_slash(slash.Slash(ALICE, "C1", slash.NEW, "Flaky", "t"))
    menu = answer["blocks"][1]["elements"][0]
    assert menu["action_id"] == PICK and len(menu["options"]) == 2
    assert rig.maker.opened == []
