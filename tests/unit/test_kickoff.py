"""New work items from Slack: opened once per message, in the picked repository, by who may."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looproom.decide import slash
from looproom.decide.authorization import AccessPolicy
from looproom.durable.queue import DurableQueue
from looproom.kickoff.github import OpenedIssue
from looproom.kickoff.opener import PICK, PICK_TTL, Opener, addressed_words
from looproom.kickoff.opening import KICKOFF
from looproom.room import buttons
from looproom.settings import KickoffSettings

BOT, ALICE, CAROL, MALLORY = "U0THELOOP", "U0ALICE01", "U0CAROL01", "U0MALLORY"
POLICY = AccessPolicy(
    BOT, frozenset({ALICE}), {ALICE: "alice-gh"}, collaborators=frozenset({CAROL})
)
ONE = KickoffSettings(("acme/api",), ("from-slack",))
TWO = KickoffSettings(("acme/api", "acme/web"))


class Maker:
    """GitHub's issues as the opener sees them: ``lost`` creates land but their answer is
    lost (a timeout); ``error`` refuses (``retry``: an outage, not a refusal)."""

    def __init__(self, error: str = "", *, retry: bool = False, lost: int = 0) -> None:
        self.opened: list[tuple[str, str, str, tuple[str, ...]]] = []
        self.error, self.retry, self.lost = error, retry, lost
        self.looked: list[str] = []

    def open(self, repo: str, title: str, body: str, labels: tuple[str, ...]) -> OpenedIssue:
        if self.error:
            return OpenedIssue(repo, error=self.error, retry=self.retry)
        self.opened.append((repo, title, body, labels))
        if self.lost:
            self.lost -= 1
            return OpenedIssue(repo, error="GitHub no answer after sending", retry=True)
        return self._issue(repo, len(self.opened))

    def find(self, repo: str, marker: str, since: str) -> OpenedIssue | None:
        self.looked.append(marker)
        for n, opened in enumerate(self.opened, start=1):
            if opened[0] == repo and marker in opened[2]:
                return self._issue(repo, n)
        return None

    def _issue(self, repo: str, n: int) -> OpenedIssue:
        number = n + 40
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


@pytest.fixture(autouse=True)
def _queues_in(tmp_path: Path) -> None:
    Rig.folder = tmp_path


class Rig:
    folder = Path()

    def __init__(self, kickoff: KickoffSettings | None = ONE, maker: Maker | None = None) -> None:
        self.store: dict[str, Any] = {}
        self.maker, self.poster = maker or Maker(), Poster()
        self.bound: list[tuple[str, str, tuple[str, ...]]] = []
        self.now = 1000.0
        self.queue = DurableQueue(self.folder / "queues.sqlite3", KICKOFF, clock=lambda: self.now)
        self.opener = Opener(
            self.store,
            lambda channel: kickoff if channel in ("C1", "") else None,
            self.maker,  # type: ignore[arg-type]
            self.poster,
            lambda: POLICY,
            lambda item, channel, ts: self.bound.append((item, channel, ts)),
            queue=self.queue,
            clock=lambda: self.now,
        )

    def drain(self) -> None:
        """Carry out every stored request, waiting out each backoff."""
        for _ in range(20):
            while self.opener.step():
                pass
            due = self.queue.next_due()
            if due is None:
                return
            self.now = max(self.now, due) + 0.001

    def message(self, text: str, member: str = ALICE, ts: str = "10.0", **kw: Any) -> bool:
        taken = self.opener.message(member, text, kw.get("channel", "C1"), ts, kw.get("thread", ""))
        self.drain()
        return taken

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
        taken = self.opener.picked(payload)
        self.drain()
        return taken

    def slash(self, command: slash.Slash) -> dict[str, Any]:
        answer = self.opener.from_slash(command)
        self.drain()
        return answer


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


def test_a_refused_create_is_said_and_not_retried() -> None:
    rig = Rig(maker=Maker(error="GitHub refused it (410: Issues are disabled for this repo)"))
    text = f"<@{BOT}> Flaky teardown"
    rig.message(text)
    assert "could not be opened" in rig.poster.told[-1][1] and rig.poster.posts == []
    assert "Issues are disabled" in rig.poster.told[-1][1]
    rig.message(text)  # redelivered: the request is stored already, nothing is tried again
    assert len(rig.poster.told) == 1
    assert [item.state for item in rig.queue.list()] == ["parked"]


def test_a_create_whose_answer_was_lost_is_found_by_its_marker_not_opened_twice() -> None:
    rig = Rig(maker=Maker(lost=1))  # GitHub opened it; its answer never came
    assert rig.message(f"<@{BOT}> Flaky teardown")
    assert len(rig.maker.opened) == 1 and rig.maker.looked == [
        "<!-- theloop:kickoff message:C1:10.0 -->"
    ]
    ((_, said, _, thread),) = rig.poster.posts
    assert "github:acme/api#41" in said and thread == "10.0"
    assert rig.queue.depth() == 0


def test_github_down_is_waited_out_and_the_member_hears_once() -> None:
    maker = Maker(error="GitHub answered 502", retry=True)
    rig = Rig(maker=maker)
    rig.opener.message(ALICE, f"<@{BOT}> Flaky teardown", "C1", "10.0", "")
    for _ in range(5):  # five attempts while GitHub is down
        rig.opener.step()
        rig.now = (rig.queue.next_due() or rig.now) + 0.001
    assert rig.maker.opened == [] and [i.state for i in rig.queue.list()] == ["pending"]
    assert len([t for t in rig.poster.told if "not opened in `acme/api` yet" in t[1]]) == 1
    maker.error = ""  # GitHub is back
    rig.drain()
    assert len(rig.maker.opened) == 1 and len(rig.poster.posts) == 1


def test_slash_new_answers_at_once_and_opens_with_a_thread_of_its_own() -> None:
    rig = Rig()
    command = slash.Slash(ALICE, "C1", slash.NEW, "Flaky teardown", "trig-1")
    answer = rig.slash(command)
    assert answer["response_type"] == "ephemeral" and "acme/api" in answer["text"]
    assert [o[0] for o in rig.maker.opened] == ["acme/api"]
    ((_, _, _, thread),) = rig.poster.posts
    assert thread == "" and rig.bound == [("github:acme/api#41", "C1", ("91.0",))]
    assert "already" in rig.slash(command)["text"]  # Slack redelivered it
    assert len(rig.maker.opened) == 1


def test_slash_new_with_several_repositories_answers_with_the_picker() -> None:
    rig = Rig(TWO)
    answer = rig.opener.from_slash(slash.Slash(ALICE, "C1", slash.NEW, "Flaky", "t"))
    menu = answer["blocks"][1]["elements"][0]
    assert menu["action_id"] == PICK and len(menu["options"]) == 2
    assert rig.maker.opened == []
