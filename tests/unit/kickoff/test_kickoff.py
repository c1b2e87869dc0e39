"""New work items from Slack: opened once per message, in the picked repository, by who may."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from looproom.decide.authorization import AccessPolicy
from looproom.durable.queue import DurableQueue
from looproom.from_slack import slash
from looproom.kickoff.body import title_of
from looproom.kickoff.github import OpenedIssue
from looproom.kickoff.opener import PICK, PICK_TTL, Opener, addressed_words
from looproom.kickoff.opening import KICKOFF, is_key, queue_lines
from looproom.loop_log.book import sqlite_records
from looproom.loop_log.channel import ChannelLog
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


class Killed(BaseException):
    """The bot's process ends here: nothing after it runs, nothing is recorded."""


class Poster:
    """Slack as the opener sees it: each post kept with its mark, found again by it
    (``unreadable``: Slack cannot be read now; ``down``: it takes no post)."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, str, list[dict[str, Any]], str]] = []
        self.marks: list[str] = []
        self.told: list[tuple[str, str, str]] = []
        self.updates: list[tuple[str, str, str]] = []
        self.unreadable = self.down = False
        #: The bot dies in its next post: "before" Slack took it, or "after" (no answer).
        self.killed_at = ""

    def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]],
        thread_ts: str,
        *,
        key: str = "",
        work_item: str = "",
    ) -> str:
        if self.down:
            return ""
        if self.killed_at == "before":
            raise Killed
        self.posts.append((channel, text, blocks, thread_ts))
        self.marks.append(key)
        if self.killed_at == "after":
            raise Killed
        return f"9{len(self.posts)}.0"

    def posted(self, channel: str, thread_ts: str, key: str, since: float) -> str | None:
        if self.unreadable:
            return None
        posts = zip(self.posts, self.marks, strict=True)
        for n, ((where, _, _, thread), mark) in enumerate(posts, start=1):
            if (where, thread, mark) == (channel, thread_ts, key):
                return f"9{n}.0"
        return ""

    def update(
        self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]], *, key: str = ""
    ) -> None:
        self.updates.append((channel, ts, text))
        n = int(ts.removeprefix("9").removesuffix(".0"))
        if 0 < n <= len(self.marks) and self.marks[n - 1] != key:
            self.marks[n - 1] = ""  # an edit without the mark drops it

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
        self.kickoff = kickoff
        #: The one bound (``Bound.repository_named``): every kickoff repository, unless said.
        self.named: Callable[[str], bool] = lambda _repo: True
        self.restart()

    def restart(self) -> None:
        """The bot started again on the same files (the store, the queue) and peers."""
        self.queue = DurableQueue(self.folder / "queues.sqlite3", KICKOFF, clock=lambda: self.now)
        self.opener = Opener(
            self.store,
            lambda channel: self.kickoff if channel in ("C1", "") else None,
            self.maker,  # type: ignore[arg-type]
            self.poster,
            lambda: POLICY,
            lambda item, channel, ts: self.bound.append((item, channel, ts)),
            queue=self.queue,
            clock=lambda: self.now,
            named=lambda repo: self.named(repo),
            records=ChannelLog(sqlite_records(self.folder / "queues.sqlite3")),
        )
        self.owners: list[tuple[str, str]] = []
        self.opener.opening.owned = lambda item, member: self.owners.append((item, member))

    def kept(self) -> list[tuple[str, dict[str, Any]]]:
        """The records kept for the-loop's event log: each event and its fields."""
        records = sqlite_records(self.folder / "queues.sqlite3").since(0).records
        return [(r["event"], r["fields"]) for r in records]

    def killed(self, at: str, step: Callable[[], object]) -> None:
        """``step`` run until the bot dies in its next post (``at``), then a restart."""
        self.poster.killed_at = at
        with pytest.raises(Killed):
            step()
        self.poster.killed_at = ""
        self.restart()

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

    def pick(
        self,
        repo: str,
        member: str = ALICE,
        where: int = -1,
        taken: Callable[[], None] = lambda: None,
    ) -> bool:
        menu = self.poster.posts[where][2][1]["elements"][0]
        value = next(o["value"] for o in menu["options"] if o["text"]["text"] == repo)
        payload = {
            "type": "block_actions",
            "user": {"id": member},
            "channel": {"id": "C1"},
            "container": {"type": "message", "message_ts": "91.0", "channel_id": "C1"},
            "actions": [{"action_id": PICK, "selected_option": {"value": value}}],
        }
        was_pick = self.opener.picked(payload, taken)
        self.drain()
        return was_pick

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
    assert rig.owners == [(ref, ALICE)]  # who asked for it owns it: an ask asks them first


def test_the_messages_thread_is_the_work_items_before_its_start_button_is_posted() -> None:
    """A press on Start may reach the bot before Slack's answer to the post does: the
    thread the button is in must map to the work item already."""
    rig = Rig()
    bound_when_posted: list[list[tuple[str, str, tuple[str, ...]]]] = []
    post = rig.poster.post

    def posting(*args: Any, **kw: Any) -> str:
        bound_when_posted.append(list(rig.bound))
        return post(*args, **kw)

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


def test_a_pick_is_told_taken_once_stored_before_slack_is_called() -> None:
    # Slack waits 3 s for the press to be acknowledged: not for the menu's edit or a refusal.
    rig = Rig(TWO)
    rig.message(f"<@{BOT}> Flaky teardown")
    seen: list[tuple[int, int, int]] = []  # (openings stored, edits, lines told) when taken

    def taken() -> None:
        seen.append((len(rig.queue.list()), len(rig.poster.updates), len(rig.poster.told)))

    assert rig.pick("acme/web", member=CAROL, taken=taken)  # refused: told after taken
    assert rig.pick("acme/web", taken=taken)
    assert seen == [(0, 0, 0), (1, 0, 1)]
    assert len(rig.poster.told) == 1 and len(rig.poster.updates) == 1


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


def opened_lines(rig: Rig) -> list[str]:
    return [text for _, text, _, _ in rig.poster.posts if text.startswith("🆕 Opened")]


def menus(rig: Rig) -> list[str]:
    return [text for _, text, _, _ in rig.poster.posts if "which repository" in text]


@pytest.mark.parametrize("at", ["before", "after"])
def test_a_bot_killed_posting_the_opened_line_posts_it_once(at: str) -> None:
    """Killed as it posts "🆕 Opened" — before Slack took it, or after, with no answer —
    the bot that starts again finds the issue and the line, and neither is doubled."""
    rig = Rig()
    text = f"<@{BOT}> Flaky teardown"
    rig.killed(at, lambda: rig.message(text))
    rig.drain()
    rig.message(text)  # Slack delivers the message again: nothing more
    (line,) = opened_lines(rig)
    assert "github:acme/api#41" in line and len(rig.maker.opened) == 1
    assert rig.queue.depth() == 0
    ref = "github:acme/api#41"
    assert rig.bound[-1] == (ref, "C1", ("10.0", f"9{len(rig.poster.posts)}.0"))


def test_a_line_slack_did_not_take_is_posted_when_it_does_and_the_issue_stays_one() -> None:
    rig = Rig()
    rig.poster.down = True
    rig.opener.message(ALICE, f"<@{BOT}> Flaky teardown", "C1", "10.0", "")
    for _ in range(4):  # Slack down for four attempts: the issue is opened, the line waits
        rig.opener.step()
        rig.now = (rig.queue.next_due() or rig.now) + 0.001
    assert len(rig.maker.opened) == 1 and opened_lines(rig) == []
    assert rig.poster.told == []  # nothing says it is not opened: it is
    rig.poster.down = False
    rig.drain()
    assert len(opened_lines(rig)) == 1 and len(rig.maker.opened) == 1


def test_an_unreadable_thread_is_waited_out_never_guessed() -> None:
    """Unsure whether the line landed and unable to read the thread, the bot waits: posting
    could double it, and giving up could lose it."""
    rig = Rig()
    rig.killed("after", lambda: rig.message(f"<@{BOT}> Flaky teardown"))
    rig.poster.unreadable = True
    rig.opener.step()
    assert [item.state for item in rig.queue.list()] == ["pending"]
    rig.poster.unreadable = False
    rig.drain()
    assert len(opened_lines(rig)) == 1 and rig.queue.depth() == 0


@pytest.mark.parametrize("at", ["before", "after"])
def test_a_bot_killed_posting_the_repository_menu_asks_once_when_it_is_back(at: str) -> None:
    """Several repositories: killed once the request is taken, as its menu is posted — the
    person still gets the menu after the restart, once, and the pick opens one issue."""
    rig = Rig(TWO)
    text = f"<@{BOT}> Flaky teardown"
    rig.killed(at, lambda: rig.message(text))
    rig.drain()
    rig.message(text)  # Slack delivers the message again: nothing more
    assert len(menus(rig)) == 1 and rig.maker.opened == []
    assert rig.pick("acme/web", where=0)
    assert [o[0] for o in rig.maker.opened] == ["acme/web"] and len(opened_lines(rig)) == 1
    asked = [event for event, _ in rig.kept()].count("channel.kickoff_asked")
    assert asked == 1  # said once in the-loop's log, whichever attempt found it posted


def test_a_menu_picked_before_the_bot_recorded_it_posted_is_not_asked_again() -> None:
    rig = Rig(TWO)
    rig.opener.message(ALICE, f"<@{BOT}> Flaky teardown", "C1", "10.0", "")
    item = rig.queue.claim(rig.now)
    assert item is not None and rig.opener.opening.deliver(item)  # posted; never recorded
    assert rig.pick("acme/web")  # picked at once; then the bot dies
    rig.restart()
    rig.drain()
    assert len(menus(rig)) == 1 and [o[0] for o in rig.maker.opened] == ["acme/web"]
    assert rig.pick("acme/web", where=0) and "no longer open" in rig.poster.told[-1][1]
    assert len(rig.maker.opened) == 1


def test_a_request_whose_menu_waits_for_slack_is_kept_and_listed_for_the_admin() -> None:
    rig = Rig(TWO)
    rig.poster.down = True
    rig.opener.message(ALICE, f"<@{BOT}> Flaky teardown", "C1", "10.0", "")
    rig.opener.step()
    (item,) = rig.queue.list()
    assert item.key == "menu:message:C1:10.0" and is_key(item.key)
    (line,) = queue_lines([item], rig.now)
    assert "repository to be picked · Flaky teardown" in line and "posting the menu" in line
    assert menus(rig) == [] and rig.poster.told == []


def test_the_kickoff_asks_the_one_bound_and_opens_nothing_where_it_refuses() -> None:
    """The kickoff asks the bound every path asks (``looproom.decide.bounds``): a
    repository it does not admit is neither offered, opened, nor taken when picked."""
    rig = Rig(TWO)
    assert rig.message(f"<@{BOT}> Flaky teardown")  # a menu offering both
    rig.named = lambda repo: repo == "acme/api"
    assert rig.pick("acme/web", where=0)
    assert rig.maker.opened == [] and "not one this room opens" in rig.poster.told[-1][1]
    assert rig.message(f"<@{BOT}> Another flake", ts="11.0")  # one admitted: no menu
    assert [o[0] for o in rig.maker.opened] == ["acme/api"]
    rig.named = lambda _repo: False
    answer = rig.slash(slash.Slash(ALICE, "C1", slash.NEW, "Flaky", "t"))
    assert "names no repository the settings admit" in answer["text"]
    assert len(rig.maker.opened) == 1


@pytest.mark.parametrize(("waited", "opened"), [(600.0, ["acme/web"]), (600.001, [])])
def test_a_choice_is_open_for_exactly_ten_minutes(waited: float, opened: list[str]) -> None:
    # docs/decisions.md: the choice expires after 10 minutes — to the instant, and not before.
    rig = Rig(TWO)
    rig.message(f"<@{BOT}> Flaky teardown")
    rig.now += waited
    assert rig.pick("acme/web")
    assert [o[0] for o in rig.maker.opened] == opened


def test_who_owns_a_new_work_item_is_said_before_its_thread_is_posted() -> None:
    """An instance that notices the new issue while its line is on the way to Slack finds
    it routed already (routing by who asked for it: ``instances.<name>.actors``)."""
    rig = Rig()
    posts_then: list[int] = []
    rig.opener.opening.owned = lambda item, member: posts_then.append(len(rig.poster.posts))
    assert rig.message(f"<@{BOT}> Flaky teardown in the batch runner")
    assert posts_then == [0] and len(rig.poster.posts) == 1


#: GitHub's longest full name: a 39-character owner and a 100-character repository.
LONGEST = "o" * 39 + "/" + "r" * 100


def test_the_longest_repository_names_are_offered_and_picked_within_slacks_limits() -> None:
    # Slack's static select: an option's value at most 150 characters, its text 75.
    twin = "o" * 39 + "/" + "r" * 99 + "s"  # the same as LONGEST but for its last letter
    rig = Rig(KickoffSettings((LONGEST, twin)))
    rig.message(f"<@{BOT}> Flaky teardown")
    menu = rig.poster.posts[-1][2][1]["elements"][0]
    assert all(len(o["value"]) <= 150 and len(o["text"]["text"]) <= 75 for o in menu["options"])
    shown = [o["text"]["text"] for o in menu["options"]]
    assert len(set(shown)) == 2  # each told apart, though cut
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": "C1"},
        "container": {"type": "message", "message_ts": "91.0", "channel_id": "C1"},
        "actions": [{"action_id": PICK, "selected_option": {"value": menu["options"][1]["value"]}}],
    }
    assert rig.opener.picked(payload)
    rig.drain()
    assert [o[0] for o in rig.maker.opened] == [twin]


def test_a_menu_drawn_with_repository_names_as_values_is_still_picked() -> None:
    rig = Rig(TWO)
    rig.message(f"<@{BOT}> Flaky teardown")
    pending = rig.poster.posts[-1][2][1]["elements"][0]["options"][0]["value"].split("|")[0]
    payload = {
        "type": "block_actions",
        "user": {"id": ALICE},
        "channel": {"id": "C1"},
        "actions": [{"action_id": PICK, "selected_option": {"value": f"{pending}|acme/web"}}],
    }
    assert rig.opener.picked(payload)
    rig.drain()
    assert [o[0] for o in rig.maker.opened] == ["acme/web"]


@pytest.mark.parametrize(("length", "whole"), [(120, True), (121, False)])
def test_a_first_line_of_120_characters_is_the_title_whole_and_121_are_cut_at_a_word(
    length: int, whole: bool
) -> None:
    # docs/decisions.md: the title is the first line, up to 120 characters.
    words = ("flaky teardown " * 10)[: length - 1] + "x"
    title = title_of(words + "\nmore words below")
    if whole:
        assert title == words
    else:
        assert len(title) <= 120 and title.endswith("…") and words.startswith(title[:-1])
        assert title[:-1].endswith(("flaky", "teardown"))  # cut at a word


def test_a_kickoff_tells_the_loops_log_what_it_asked_opened_and_threaded_each_once() -> None:
    rig = Rig(TWO)
    text = f"<@{BOT}> Flaky teardown"
    assert rig.message(text) and rig.message(text)  # Slack delivered it twice
    asked = {"channel": "slack", "actor": ALICE, "thread": "10.0", "kind": "no-target"}
    assert rig.kept() == [("channel.kickoff_asked", {**asked, "count": 2, "channel_id": "C1"})]
    rig.pick("acme/web", where=0)
    rig.pick("acme/web", where=0)  # a second pick answers nothing
    ref = "github:acme/web#41"
    opened = {"channel": "slack", "work_item": ref, "actor": ALICE, "thread": "10.0"}
    thread = {"channel": "slack", "work_item": ref, "thread": "10.0", "channel_id": "C1"}
    assert rig.kept()[1:] == [
        ("channel.created", {**opened, "channel_id": "C1"}),
        ("channel.thread_opened", {**thread, "origin": "kickoff"}),
    ]


@pytest.mark.parametrize("at", ["before", "after"])
def test_a_bot_killed_posting_the_opened_line_records_the_opening_once(at: str) -> None:
    rig = Rig()
    rig.killed(at, lambda: rig.message(f"<@{BOT}> Flaky teardown"))
    assert rig.kept() == []  # nothing said yet: it is not opened as far as anyone saw
    rig.drain()
    events = [event for event, _ in rig.kept()]
    assert events == ["channel.created", "channel.thread_opened"]


def test_slash_new_asked_its_repository_is_recorded_with_no_thread() -> None:
    rig = Rig(TWO)
    rig.opener.from_slash(slash.Slash(ALICE, "C1", slash.NEW, "Flaky", "t"))
    ((event, fields),) = rig.kept()
    assert event == "channel.kickoff_asked" and "thread" not in fields
    assert (fields["count"], fields["kind"], fields["actor"]) == (2, "no-target", ALICE)
