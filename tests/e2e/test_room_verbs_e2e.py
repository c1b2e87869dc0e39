"""The rows the-loop's own room had and ours lacked, end to end: a real errbot on the real
SlackV3 backend, Socket Mode against the loopback fake of Slack, with loopback fakes of
GitHub and the-loop's control plane.

A decider adds a collaborator in a work item's thread and that person may reply there at
once, but not steer; ``add-channel`` moves the work item to a room of its own, where its
next event opens a parent and a decision typed there counts; ``/the-loop restart`` and
``standing …`` reach the-loop only where granted, and words to a standing session's thread
reach that session; the operator's own command word is relayed in its keyword; a pasted
GitHub link names the work item, a kickoff's ``<repo>:`` picks the repository in one step,
and ``@theloop help`` answers with the grammar of the room it is asked in.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from the_loop.control import ControlConfig, parse_command
from the_loop.core import daemons
from the_loop.runlock import RunLock

from looproom.clients.the_loop import STREAM_PATH
from tests.e2e.slackbot import (
    API_LOOP,
    LOOP,
    SlackBot,
    StartBot,
    corpus,
    event_key,
    relaying,
    slash,
)
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.loop_stream import LoopAPI
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:MadaraUchiha-314/the-loop#260"
REPO, NUMBER = "MadaraUchiha-314/the-loop", 260
LINK = f"https://github.com/{REPO}/issues/{NUMBER}"
ALICE, EVE = "U0ALICE01", "U0EVE0001"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, comment.human, phase-approval-pending, session.awaiting_input,
              standing.started]
  authorizedUsers: [U0ALICE01]
  publish: [gate.feedback, control.command, context.added, decision.recorded,
            work-item.create, instance.command, standing.command]
  kickoff: {repo: [MadaraUchiha-314/the-loop, acme/api]}
people: {U0ALICE01: alice-gh}
relay:
  commands: {ship: {keyword: "loop deliver"}}
"""
TIMEOUT = 60.0
SIGNING_SECRET = "e2e-slack-signing-secret"


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub
    loop: FakeLoop
    loop_api: LoopAPI | None = None  # the-loop's real API, where its stream is followed

    def show(self, event: dict[str, Any]) -> dict[str, Any]:
        message = self.bot.show(event, TIMEOUT)
        self.bot.process.wait_delivered(TIMEOUT)
        return message

    def say(self, member: str, text: str, thread_ts: str, room: str = LOOP) -> dict[str, Any]:
        message = self.slack.say(room, member, text, thread_ts=thread_ts)
        assert self.slack.push_envelope({"type": "event_callback", "event": message})
        return message

    def slash(self, text: str, member: str = ALICE, trigger: str = "t1") -> str:
        return str(slash(self.slack, text, member, trigger)["text"])

    def comments(self) -> list[str]:
        return self.github.posted(REPO, NUMBER)

    def reactions(self, ts: str) -> list[str]:
        calls = self.slack.calls_to("reactions.add")
        return [c.args["name"] for c in calls if c.args["timestamp"] == ts]

    def told(self, member: str, words: str) -> bool:
        return any(self.told_all(member, words))

    def told_all(self, member: str, words: str) -> list[bool]:
        calls = self.slack.calls_to("chat.postEphemeral")
        return [words in c.args["text"] for c in calls if c.args["user"] == member]

    def landed(self, said: dict[str, Any], what: str) -> None:
        wait_for(lambda: "white_check_mark" in self.reactions(said["ts"]), TIMEOUT, what)


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    fake_slack.users[EVE] = "eve"
    issues = {REPO: {NUMBER}, "acme/api": set()}
    with (
        FakeGitHub(issues) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, SIGNING_SECRET) as bot,
    ):
        loop.standing = {"triage": True, "nightly": False}
        yield Rig(bot, fake_slack, github, loop)


def test_a_decider_adds_a_collaborator_who_may_then_reply_but_not_steer(rig: Rig) -> None:
    thread = rig.show(corpus("06"))["thread_ts"]
    early = rig.say(EVE, f"<@{BOT_USER}> prefer the smaller migration", thread)
    wait_for(lambda: "warning" in rig.reactions(early["ts"]), TIMEOUT, "a stranger's ⚠️")
    added = rig.say(ALICE, f"add-collaborator <@{EVE}>", thread)
    rig.landed(added, "the grant's ✅")
    assert rig.comments()[0].split("\n", 1)[0] == f"the-loop add-collaborator slack:{EVE}"
    reply = rig.say(EVE, f"<@{BOT_USER}> prefer the smaller migration", thread)
    rig.landed(reply, "Eve's reply's ✅")
    assert [r["actor"] for r in rig.loop.replies] == [f"slack:{EVE}"]
    rig.say(EVE, "stop", thread)
    wait_for(lambda: rig.told(EVE, "`control.command`"), TIMEOUT, "why Eve may not stop it")
    removed = rig.say(ALICE, f"remove-collaborator <@{EVE}>", thread)
    rig.landed(removed, "the removal's ✅")
    assert rig.comments()[-1].split("\n", 1)[0] == f"the-loop remove-collaborator slack:{EVE}"
    late = rig.say(EVE, f"<@{BOT_USER}> one more thing", thread)
    wait_for(lambda: "warning" in rig.reactions(late["ts"]), TIMEOUT, "refused again")
    assert len(rig.loop.replies) == 1


@pytest.fixture
def followed(slack_bot: StartBot, fake_slack: FakeSlack, tmp_path: Path) -> Iterator[Rig]:
    """The rig, its bot also following the-loop's REAL event stream (``the_loop.api``)."""
    fake_slack.users[EVE] = "eve"
    loop_api = LoopAPI(tmp_path / "loop")
    stream = {"THELOOP_LOOP_STREAM": f"http://127.0.0.1:{loop_api.start()}{STREAM_PATH}"}
    try:
        with (
            FakeGitHub({REPO: {NUMBER}, "acme/api": set()}) as github,
            FakeLoop({ITEM: False}) as loop,
            relaying(slack_bot, SETTINGS, github, loop, SIGNING_SECRET, stream) as bot,
        ):
            rig = Rig(bot, fake_slack, github, loop, loop_api)
            # A first connection starts at the log's end (the-loop's rule): write after it.
            wait_for(lambda: loop_api.records("stream.subscribed"), TIMEOUT, "the stream")
            yield rig
    finally:
        loop_api.stop()


def test_a_collaborator_the_loops_cli_adds_may_reply_in_slack_until_it_removes_them(
    followed: Rig,
) -> None:
    rig, loop_api = followed, followed.loop_api
    assert loop_api is not None
    thread = rig.show(corpus("06"))["thread_ts"]

    def heard(probe: str) -> None:
        # One work item's events are consumed in order: once an ask written after the
        # grant is in its thread, the grant was read.
        loop_api.ask(probe, work_item=ITEM)
        wait_for(
            lambda: any(probe in m.get("text", "") for m in rig.slack.thread(LOOP, thread)),
            TIMEOUT,
            f"the probe {probe!r} in the thread",
        )

    early = rig.say(EVE, f"<@{BOT_USER}> prefer the smaller migration", thread)
    wait_for(lambda: "warning" in rig.reactions(early["ts"]), TIMEOUT, "a stranger's ⚠️")
    loop_api.collaborator("add-collaborator", EVE, ITEM)
    heard("Granted yet: which migration first?")
    reply = rig.say(EVE, f"<@{BOT_USER}> prefer the smaller migration", thread)
    rig.landed(reply, "Eve's reply's ✅")
    assert [r["actor"] for r in rig.loop.replies] == [f"slack:{EVE}"]
    assert not rig.comments(), "the grant is the-loop's: nothing relayed for it"

    loop_api.collaborator("remove-collaborator", EVE, ITEM)
    heard("Revoked yet: which index?")
    late = rig.say(EVE, f"<@{BOT_USER}> one more thing", thread)
    wait_for(lambda: "warning" in rig.reactions(late["ts"]), TIMEOUT, "refused again")
    assert len(rig.loop.replies) == 1


def test_add_channel_moves_the_work_item_to_a_room_where_its_decisions_count(rig: Rig) -> None:
    thread = rig.show(corpus("01"))["thread_ts"]
    moved = rig.say(ALICE, f"add-channel <#{API_LOOP}|api-loop>", thread)
    rig.landed(moved, "the move's ✅")
    assert rig.comments()[0].split("\n", 1)[0] == f"the-loop add-channel slack@{API_LOOP}"
    wait_for(
        lambda: any("Moved to" in m["text"] for m in rig.slack.thread(LOOP, thread)),
        TIMEOUT,
        "the note in the old thread",
    )
    gate = corpus("06")
    assert rig.bot.send(gate)[0] == 202

    def posted_there() -> list[dict[str, Any]]:
        return [m for m in rig.slack.messages(API_LOOP) if event_key(m) == gate["id"]]

    there = wait_for(posted_there, TIMEOUT, "the gate in the new room")[0]
    assert rig.slack.top_level(API_LOOP), "a parent opened the thread there"
    rig.bot.process.wait_delivered(TIMEOUT)
    approved = rig.say(ALICE, "approve ship it", there["thread_ts"], room=API_LOOP)
    rig.landed(approved, "the approval typed in the new room")
    assert rig.comments()[-1].startswith("approved\n\nship it")


def test_instance_and_standing_verbs_reach_the_loop_only_where_granted(
    rig: Rig, tmp_path: Path
) -> None:
    # the-loop's side: its state root, a poller running, the webhook receiver enabled but down.
    config = {"state": {"root": str(tmp_path)}, "webhooks": {"ghWebhook": {"enabled": True}}}
    rig.loop.loop_config = config
    poller = RunLock(daemons._pidfile("poller", config), name="poller")
    assert poller.acquire()
    try:
        status = rig.slash("status")
    finally:
        poller.release()
    assert "*the-loop instance* `loop-one` (mode: open) · not ok" in status
    assert f"• poller: running (pid {os.getpid()})" in status
    assert "• gh-webhook: stopped (enabled) — webhooks.ghWebhook.enabled is true" in status
    assert "• standing: nightly stopped · triage running" in status
    assert "• slack (this bot's listener): split check" in status
    assert "scheduled its restart" in rig.slash("restart")
    assert "asked already" in rig.slash("restart")  # Slack delivered it twice
    assert "scheduled its upgrade" in rig.slash("upgrade", trigger="t2")
    assert rig.loop.restarts == [{"withUpgrade": False}, {"withUpgrade": True}]
    assert "slack.authorizedUsers" in rig.slash("restart", member=EVE, trigger="t3")
    assert len(rig.loop.restarts) == 2
    listed = rig.slash("standing list", trigger="t4")
    assert "`nightly`: stopped" in listed and "`triage`: running" in listed
    assert "`nightly`: started" in rig.slash("standing start nightly", trigger="t5")
    # The standing session's own thread, and words to it there.
    up = {"id": "standing-1", "eventType": "standing.started", "workItem": "standing:triage"}
    thread = rig.show(up)["thread_ts"]
    assert "its thread>" in rig.slash("standing list", trigger="t6")
    said = rig.say(ALICE, f"<@{BOT_USER}> look at the flaky queue", thread)
    rig.landed(said, "the words to the standing session")
    assert rig.loop.said == [
        {"name": "triage", "text": "look at the flaky queue", "actor": f"slack:{ALICE}"}
    ]
    assert rig.comments() == []  # no ticket to mirror on


def test_the_operators_word_and_a_pasted_link_are_relayed_as_the_loop_reads_them(
    rig: Rig,
) -> None:
    thread = rig.show(corpus("01"))["thread_ts"]
    shipped = rig.say(ALICE, "ship", thread)
    rig.landed(shipped, "the operator's word")
    assert rig.comments()[0].split("\n", 1)[0] == "loop deliver"
    answer = rig.slash(f"pause <{LINK}>", trigger="t7")
    assert answer.startswith(f"👀 Recorded the pause request for `{ITEM}`")
    wait_for(lambda: len(rig.comments()) == 2, TIMEOUT, "the pause from a pasted link")
    assert rig.comments()[1].startswith("the-loop pause\n")
    assert "`ship`" in rig.slash("help", trigger="t8")


def test_a_kickoff_names_its_repository_and_help_answers_with_the_rooms_grammar(
    rig: Rig,
) -> None:
    message = rig.slack.say(LOOP, ALICE, f"<@{BOT_USER}> api: Flaky teardown in the runner")
    assert rig.slack.push_envelope({"type": "event_callback", "event": message})
    wait_for(lambda: rig.github.opened, TIMEOUT, "the issue, with no menu")
    ((repo, _number, title, _body, _labels),) = rig.github.opened
    assert (repo, title) == ("acme/api", "Flaky teardown in the runner")
    assert not [m for m in rig.slack.thread(LOOP, message["ts"]) if "which repo" in m["text"]]
    thread = rig.show(corpus("01"))["thread_ts"]
    rig.say(ALICE, f"<@{BOT_USER}> help", thread)
    wait_for(lambda: rig.told(ALICE, f"about `{ITEM}`; no ref is needed"), TIMEOUT, "help")
    rig.say(ALICE, f"<@{BOT_USER}> help public", thread)
    wait_for(
        lambda: any("What you can say here" in m["text"] for m in rig.slack.thread(LOOP, thread)),
        TIMEOUT,
        "help for everyone in the thread",
    )
    assert rig.loop.replies == [] and rig.comments() == []  # help is neither reply nor record


def test_without_the_grants_the_instance_and_standing_verbs_are_refused_with_the_reason(
    slack_bot: StartBot,
) -> None:
    narrow = SETTINGS.replace(" instance.command, standing.command", "")
    with (
        FakeGitHub({REPO: {NUMBER}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, narrow, github, loop, SIGNING_SECRET) as bot,
    ):
        rig = Rig(bot, bot.slack, github, loop)
        assert "This room is not granted `instance.command`" in rig.slash("restart")
        assert "`standing.command`" in rig.slash("standing start nightly", trigger="t2")
        assert "`instance.command`" in rig.slash("status", trigger="t3")
        assert loop.restarts == []


def test_a_start_names_the_instance_that_takes_the_work_item(rig: Rig) -> None:
    """Where the-loop's instances take only what a start names them in, ``start
    instance:<name>`` carries the address on the keyword's line."""
    thread = rig.show(corpus("01"))["thread_ts"]
    started = rig.say(ALICE, "start instance:team-b", thread)
    rig.landed(started, "the addressed start")
    assert rig.comments()[0].split("\n", 1)[0] == "the-loop start instance:team-b"
    assert rig.slash(f"pause {ITEM} instance:team-b", trigger="t9").startswith(
        f"👀 Recorded the pause request for `{ITEM}`"
    )
    wait_for(lambda: len(rig.comments()) == 2, TIMEOUT, "the addressed pause")
    assert rig.comments()[1].split("\n", 1)[0] == "the-loop pause instance:team-b"


def test_a_room_named_as_people_type_it_is_its_id_backs_one_work_item_and_listens(
    rig: Rig,
) -> None:
    """``add-channel #Api-Loop --listen all``, typed as people type a name: the-loop reads
    the room's id; the room, switched by its id, hears every message of the work item's
    thread there; the same room named by id for another work item, and a room the bot
    cannot find, are refused before anything is relayed."""
    thread = rig.show(corpus("01"))["thread_ts"]
    lost = rig.say(ALICE, "add-channel #api-lop", thread)
    wait_for(lambda: rig.told(ALICE, "I see no room called `#api-lop`"), TIMEOUT, "no room")
    assert "warning" not in rig.reactions(lost["ts"]) and rig.comments() == []
    moved = rig.say(ALICE, "add-channel #Api-Loop --listen all", thread)
    rig.landed(moved, "the move's ✅")
    (comment,) = rig.comments()
    read = parse_command(comment, ControlConfig())
    assert (read.command, read.listen) == ("add-channel", "all")
    assert read.subjects == [f"slack@{API_LOOP}"]
    other = {"id": "other-1", "eventType": "comment.agent", "workItem": "github:acme/api#8"}
    other_thread = rig.show(other | {"text": "Another work item."})["thread_ts"]
    rig.say(ALICE, f"add-channel {API_LOOP}", other_thread)
    # The work item is named in its one spelling (refs are case-insensitive, as GitHub's).
    taken = f"already the room of `{ITEM.lower()}`"
    wait_for(lambda: rig.told(ALICE, taken), TIMEOUT, "by id")
    rig.say(ALICE, "add-channel api-loop", other_thread)
    wait_for(
        lambda: sum(rig.told_all(ALICE, taken)) == 2,
        TIMEOUT,
        "by its bare name",
    )
    assert len(rig.comments()) == 1  # nothing relayed for either
    said = {"id": "moved-1", "eventType": "comment.agent", "workItem": ITEM, "text": "Next."}
    assert rig.bot.send(said)[0] == 202
    there = wait_for(
        lambda: [m for m in rig.slack.messages(API_LOOP) if event_key(m) == said["id"]],
        TIMEOUT,
        "the work item's next event in its new room",
    )[0]
    rig.bot.process.wait_delivered(TIMEOUT)
    plain = rig.say(ALICE, "use the replica for the backfill", there["thread_ts"], room=API_LOOP)
    rig.landed(plain, "a plain message in a room that listens to everything")
    assert rig.loop.replies[-1]["text"] == "use the replica for the backfill"


def test_an_admin_lists_each_work_items_room_and_thread_as_the_loops_channels_threads(
    rig: Rig,
) -> None:
    """Every work item followed, with its room, a link to its thread, when and by what it
    was opened, and what the room hears there — the room a work item moved to included."""
    first = rig.show(corpus("01"))
    other = {"id": "t-other", "eventType": "comment.agent", "workItem": "github:acme/api#8"}
    rig.show(other | {"text": "Another work item."})
    moved = rig.say(ALICE, f"add-channel <#{API_LOOP}|api-loop> --listen all", first["thread_ts"])
    rig.landed(moved, "the move's ✅")
    there = rig.bot.show(
        {"id": "t-moved", "eventType": "comment.agent", "workItem": ITEM, "text": "Next."},
        TIMEOUT,
        room=API_LOOP,
    )
    dm = "D0ALICE01"  # an admin command is typed to the bot directly
    if dm not in rig.slack.channels:
        rig.slack.add_channel(f"dm-{ALICE}", dm)
    asked = rig.slack.say(dm, ALICE, "!theloop threads")
    asked["channel_type"] = "im"
    assert rig.slack.push_envelope({"type": "event_callback", "event": asked})

    def listed() -> list[str]:
        return [m["text"] for m in rig.slack.messages(dm) if "Threads (" in m.get("text", "")]

    (text,) = wait_for(listed, TIMEOUT, "the list of threads")
    assert text.startswith("Threads (3):")
    mine = [line for line in text.splitlines() if f"`{ITEM}`" in line]
    assert len(mine) == 2  # its first room's thread, and its new room's
    link = f"https://slack.com/archives/{API_LOOP}/p{there['thread_ts'].replace('.', '')}"
    (new_room,) = [line for line in mine if f"<#{API_LOOP}>" in line]
    assert f"<{link}|its thread>" in new_room and "listens to: all" in new_room
    assert "origin: event comment.agent" in new_room
    (old_room,) = [line for line in mine if f"<#{LOOP}>" in line]
    assert "listens to: mentions" in old_room and "opened 20" in old_room
    assert "`github:acme/api#8`" in text


def test_the_roster_outlives_a_restart_of_the_bot_and_ends_with_the_work_item(rig: Rig) -> None:
    """A collaborator added before the bot restarts may still reply after it — the
    process stopped and started again on its data — and not once the work item closed."""
    thread = rig.show(corpus("06"))["thread_ts"]
    added = rig.say(ALICE, f"add-collaborator <@{EVE}>", thread)
    rig.landed(added, "the grant's ✅")
    rig.bot.process.restart()
    after = rig.say(EVE, f"<@{BOT_USER}> prefer the smaller migration", thread)
    rig.landed(after, "Eve's reply after the restart")
    assert [r["actor"] for r in rig.loop.replies] == [f"slack:{EVE}"]
    closed = {"id": "closed-1", "eventType": "work-item.closed", "workItem": ITEM}
    assert rig.bot.send(closed)[0] == 202
    rig.bot.process.wait_delivered(TIMEOUT)
    late = rig.say(EVE, f"<@{BOT_USER}> one more thing", thread)
    wait_for(lambda: "warning" in rig.reactions(late["ts"]), TIMEOUT, "refused once closed")
    assert len(rig.loop.replies) == 1
