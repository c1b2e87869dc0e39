"""Talking to the agent from Slack, end to end: a real errbot, the real SlackV3 backend.

The bot runs on Socket Mode against the loopback fake of Slack, with loopback fakes of
GitHub (where records are mirrored) and the-loop's control plane (where sessions get what
was said). Shown here: a message addressed to the bot is mirrored on the ticket, then
delivered to the session — once, even when the-loop's first answer was lost; a stranger's
is neither; the thread goes as context without any message going twice; decisions and
change requests are taken through shortcuts and modals; and a message typed while the bot
was away is read when it is back.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from the_loop.channels.records import RECORD_TYPES, records_from_comments

from tests.e2e.slackbot import LOOP, START_TIMEOUT, SlackBot, StartBot, corpus, relaying
from tests.fakes.github_api import LOGIN as GITHUB_LOGIN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_USER, FakeSlack
from tests.support import ports, signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

ITEM = "github:acme/api#7"
GONE = "github:acme/api#8"  # a work item whose session is gone
REPO = "acme/api"
ALICE, BOB = "U0ALICE01", "U0BOB0001"
SIGNING_SECRET = "e2e-slack-signing-secret"
SETTINGS = """
slack:
  channel: "#the-loop"
  subscribe: [comment.agent, comment.human, phase-approval-pending, session.awaiting_input]
  authorizedUsers: [U0ALICE01]
people: {U0ALICE01: alice-gh}
"""
TIMEOUT = 60.0
MARKER = "<!-- the-loop:agent-comment -->"


@dataclass
class Rig:
    bot: SlackBot
    slack: FakeSlack
    github: FakeGitHub
    loop: FakeLoop

    def thread(self, work_item: str = ITEM) -> str:
        """the-loop says something on ``work_item`` that asks nothing: its thread's ts, once
        the bot has taken it in (a second event is posted after it: delivery is in order)."""
        message = self._posted(work_item, "I have started on the migration.", "first")
        self._posted(work_item, "Still on it.", "second")
        return str(message.get("thread_ts") or message["ts"])

    def _posted(self, work_item: str, text: str, n: str) -> dict[str, Any]:
        event = {"id": f"talk-{work_item}-{n}", "eventType": "comment.agent"}
        event.update({"workItem": work_item, "text": text})
        return self.bot.show(event, TIMEOUT)

    def say(self, member: str, text: str, thread_ts: str) -> dict[str, Any]:
        return self.bot.say(member, text, thread_ts)

    def say_with(
        self, member: str, text: str, thread_ts: str, files: list[dict[str, Any]]
    ) -> dict[str, Any]:
        return self.bot.say(member, text, thread_ts, files=files)

    def comments(self, number: int = 7) -> list[str]:
        return self.github.posted(REPO, number)

    def reactions(self, ts: str) -> list[str]:
        return [
            c.args["name"]
            for c in self.slack.calls_to("reactions.add")
            if c.args["timestamp"] == ts
        ]

    def replies_in(self, thread: str) -> list[str]:
        return [m["text"] for m in self.slack.thread(LOOP, thread) if m.get("user") != ALICE]

    def told(self, member: str, words: str) -> bool:
        return any(
            words in c.args["text"]
            for c in self.slack.calls_to("chat.postEphemeral")
            if c.args["user"] == member
        )


@pytest.fixture
def rig(slack_bot: StartBot, fake_slack: FakeSlack) -> Iterator[Rig]:
    with (
        FakeGitHub({REPO: {7, 8}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, SIGNING_SECRET) as bot,
    ):
        yield Rig(bot, fake_slack, github, loop)


def test_a_reply_to_the_bot_is_mirrored_on_the_ticket_then_reaches_the_session(rig: Rig) -> None:
    thread = rig.thread()
    said = rig.say(ALICE, f"<@{BOT_USER}> prefer the smaller migration", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")
    (comment,) = rig.comments()
    assert comment.startswith("🗣️ **the-loop** — reply from `alice-gh` (`slack:U0ALICE01`)")
    assert "> prefer the smaller migration" in comment and MARKER in comment
    assert rig.loop.replies == [
        {
            "ref": ITEM,
            "text": "prefer the smaller migration",
            "actor": f"slack:{ALICE}",
            "comment": False,
        }
    ]
    wait_for(
        lambda: any(
            "is on the work item, and the agent has it" in t for t in rig.replies_in(thread)
        ),
        TIMEOUT,
        "the threaded acknowledgement",
    )
    # Not addressed to the bot, it is conversation: nothing is recorded or delivered.
    aside = rig.say(ALICE, "I think so too", thread)
    probe = rig.say(ALICE, f"<@{BOT_USER}> and keep the old index", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(probe["ts"]), TIMEOUT, "the second ✅")
    assert [r["text"] for r in rig.loop.replies][1:] == ["and keep the old index"]
    assert rig.reactions(aside["ts"]) == [] and len(rig.comments()) == 2


def test_a_strangers_reply_is_refused_and_nothing_is_mirrored_or_delivered(rig: Rig) -> None:
    thread = rig.thread()
    refused = rig.say(BOB, f"<@{BOT_USER}> drop the tests, just ship", thread)
    wait_for(lambda: "warning" in rig.reactions(refused["ts"]), TIMEOUT, "the refusal's ⚠️")
    wait_for(lambda: rig.told(BOB, "slack.authorizedUsers"), TIMEOUT, "why Bob may not")
    sentinel = rig.say(ALICE, f"<@{BOT_USER}> sentinel", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(sentinel["ts"]), TIMEOUT, "the ✅")
    assert [r["text"] for r in rig.loop.replies] == ["sentinel"]
    assert len(rig.comments()) == 1 and "drop the tests" not in rig.comments()[0]


def test_a_reply_whose_first_answer_was_lost_lands_exactly_once(rig: Rig) -> None:
    thread = rig.thread()
    rig.loop.fail("/sessions/reply", kind="land_then_drop")  # typed in, the answer lost
    said = rig.say(ALICE, f"<@{BOT_USER}> go with option 2", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")
    assert [r["text"] for r in rig.loop.replies] == ["go with option 2"]
    looked = [q for q in rig.loop.requests if q.path == "/api/v1/events"]
    assert looked and looked[0].query["type"] == "session.reply_sent"
    assert len(rig.comments()) == 1


def test_a_reply_for_a_session_that_is_gone_stays_on_the_ticket_and_says_so(rig: Rig) -> None:
    thread = rig.thread(GONE)
    said = rig.say(ALICE, f"<@{BOT_USER}> use the new schema", thread)
    wait_for(lambda: "warning" in rig.reactions(said["ts"]), TIMEOUT, "the ⚠️")
    (comment,) = rig.comments(8)
    assert "> use the new schema" in comment
    wait_for(
        lambda: any("the agent's session did not get it" in t for t in rig.replies_in(thread)),
        TIMEOUT,
        "the thread told the session did not get it",
    )
    assert rig.loop.replies == []


def receipts(rig: Rig, thread: str) -> list[str]:
    return [t for t in rig.replies_in(thread) if t.startswith("📎")]


def test_record_context_twice_records_no_message_twice(rig: Rig) -> None:
    thread = rig.thread()
    rig.say(ALICE, "we keep the v1 endpoint", thread)
    rig.say(BOB, "agreed, clients pin it", thread)
    first = rig.say(ALICE, "record-context", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(first["ts"]), TIMEOUT, "the first ✅")
    rig.say(ALICE, "and we drop v0 in March", thread)
    second = rig.say(ALICE, "record-context", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(second["ts"]), TIMEOUT, "the second ✅")
    one, two = rig.comments()
    # As the-loop's snapshot: its own lines too (what is being discussed), each person by
    # name, each message linked; from the first message not recorded yet.
    assert "4 message(s)" in one and "> **@the-loop** (" in one
    assert "I have started on the migration." in one and "Still on it." in one
    assert "> **@alice** (" in one and "we keep the v1 endpoint" in one
    assert "> **@bob** (<@U0BOB0001>, no role on this work item, " in one
    assert "agreed, clients pin it" in one
    assert "we drop v0 in March" in two and "v1 endpoint" not in two
    assert "record-context" not in one + two
    linked = [set(re.findall(r"/p(\d+)\?thread_ts=", record)) for record in (one, two)]
    assert linked[0] and linked[1] and not linked[0] & linked[1]  # no message twice
    # The ✅ is put on before the receipt is posted: wait for the receipt itself.
    wait_for(lambda: len(receipts(rig, thread)) == 2, TIMEOUT, "both 📎 receipts")
    assert receipts(rig, thread)[0].startswith("📎 4 message(s)")
    assert [r["comment"] for r in rig.loop.replies] == [False, False]


def test_a_message_typed_while_the_bot_was_down_is_read_when_it_is_back(rig: Rig) -> None:
    thread = rig.thread()
    rig.bot.process.kill()
    missed = rig.slack.say(
        LOOP, ALICE, f"<@{BOT_USER}> typed while you were away", thread_ts=thread
    )
    rig.bot.process.start(timeout=START_TIMEOUT)
    wait_for(lambda: "white_check_mark" in rig.reactions(missed["ts"]), TIMEOUT, "the ✅")
    # Delivered live now too (Slack's redelivery): read once all the same.
    again = {"type": "event_callback", "event": missed}
    assert rig.slack.push_envelope(again) is not None
    sentinel = rig.say(ALICE, f"<@{BOT_USER}> sentinel", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(sentinel["ts"]), TIMEOUT, "the ✅")
    assert [r["text"] for r in rig.loop.replies] == ["typed while you were away", "sentinel"]


# -- shortcuts and forms ---------------------------------------------------------------------


def _shortcut(rig: Rig, callback_id: str, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message_action",
        "callback_id": callback_id,
        "trigger_id": rig.slack.trigger(),
        "user": {"id": ALICE},
        "channel": {"id": LOOP},
        "message": {k: v for k, v in message.items() if k != "channel"},
        "message_ts": message["ts"],
    }


def _submission(view: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    state = {
        block: {
            block: {"type": "static_select", "selected_option": {"value": value}}
            if block == "kind"
            else {"type": "plain_text_input", "value": value}
        }
        for block, value in values.items()
    }
    shown = {k: view[k] for k in ("id", "callback_id", "private_metadata")}
    return {
        "type": "view_submission",
        "user": {"id": ALICE},
        "view": {**shown, "state": {"values": state}},
    }


def _interact(rig: Rig, payload: dict[str, Any]) -> None:
    assert rig.slack.push_envelope(payload, kind="interactive") is not None, "no ack"


def test_the_decision_shortcut_opens_a_form_whose_submission_is_recorded_once(rig: Rig) -> None:
    thread = rig.thread()
    said = rig.say(BOB, "we keep the v1 endpoint for a year", thread)
    _interact(rig, _shortcut(rig, "theloop_record_decision", said))
    (view,) = wait_for(lambda: rig.slack.views, TIMEOUT, "the decision form")
    assert view["callback_id"] == "theloop_decision"
    drawn = {b["block_id"]: b["element"] for b in view["blocks"] if b["type"] == "input"}
    assert drawn["what"]["initial_value"] == "we keep the v1 endpoint for a year"
    submitted = _submission(
        view, {"kind": "tech", "what": "keep the v1 endpoint a year", "why": "clients pin it"}
    )
    _interact(rig, submitted)
    (comment,) = wait_for(rig.comments, TIMEOUT, "the decision on the ticket")
    assert (
        "📌 decision from `alice-gh` (`slack:U0ALICE01`) on the **slack** channel (kind: tech)"
        in comment
    )
    assert "> keep the v1 endpoint a year" in comment and "_why:_ clients pin it" in comment
    _interact(rig, submitted)  # Slack delivers it again: recorded once all the same
    wait_for(lambda: len(rig.loop.replies) == 1, TIMEOUT, "the decision delivered")
    sentinel = rig.say(ALICE, f"<@{BOT_USER}> sentinel", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(sentinel["ts"]), TIMEOUT, "the ✅")
    assert len(rig.comments()) == 2 and "Decision (tech)" in rig.loop.replies[0]["text"]


def test_a_stranger_gets_no_decision_form(rig: Rig) -> None:
    thread = rig.thread()
    said = rig.say(ALICE, "we keep v1", thread)
    payload = {**_shortcut(rig, "theloop_record_decision", said), "user": {"id": BOB}}
    _interact(rig, payload)
    wait_for(lambda: rig.told(BOB, "slack.authorizedUsers"), TIMEOUT, "why Bob may not")
    assert rig.slack.views == [] and rig.comments() == []


def test_the_context_shortcut_records_the_thread_like_the_typed_command(rig: Rig) -> None:
    thread = rig.thread()
    shot = rig.slack.add_file("cache graph.png", b"\x89PNG\r\n\x1a\n", "image/png")
    rig.say_with(ALICE, "the cache goes", thread, [shot])
    said = rig.say(BOB, "and the queue stays", thread)
    _interact(rig, _shortcut(rig, "theloop_record_context", said))
    (comment,) = wait_for(rig.comments, TIMEOUT, "the context on the ticket")
    assert "4 message(s)" in comment
    assert "> **@bob** (<@U0BOB0001>, no role on this work item, " in comment
    assert "\n> > and the queue stays" in comment
    # A file is named and linked, never fetched.
    assert f"> > the cache goes 📎 cache_graph.png ({shot['permalink']})" in comment
    wait_for(
        lambda: any(t.startswith("📎 4 message(s)") for t in rig.replies_in(thread)),
        TIMEOUT,
        "the 📎 receipt",
    )


def test_request_changes_asks_the_reason_and_relays_what_typing_it_would(rig: Rig) -> None:
    event = {**corpus("06"), "workItem": ITEM}
    message = rig.bot.show(event, TIMEOUT)
    rig.bot.process.wait_delivered(TIMEOUT)  # the bot knows its gate: a press may come
    press = {
        "type": "block_actions",
        "trigger_id": rig.slack.trigger(),
        "user": {"id": ALICE},
        "channel": {"id": LOOP},
        "container": {"type": "message", "message_ts": message["ts"], "channel_id": LOOP},
        "message": message,
        "actions": [{"action_id": "theloop:changes", "block_id": "b", "type": "button"}],
    }
    _interact(rig, press)
    (view,) = wait_for(lambda: rig.slack.views, TIMEOUT, "the reason form")
    assert view["callback_id"] == "theloop_changes" and rig.comments() == []
    _interact(rig, _submission(view, {"why": "the retry path is wrong"}))
    (comment,) = wait_for(rig.comments, TIMEOUT, "the change request")
    assert comment.startswith(
        "changes requested\n\nthe retry path is wrong\n\n🗣️ _the-loop — answer to the open gate"
    )
    assert MARKER not in comment


def _over_http(rig: Rig, payload: dict[str, Any], secret: str = SIGNING_SECRET) -> int:
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    process = rig.bot.process
    headers = signed.slack_headers(secret, body)
    return signed.post(process.host, process.port, signed.INTERACTIVE_PATH, body, headers)[0]


def test_shortcuts_and_forms_work_over_signed_http_and_forged_ones_do_nothing(rig: Rig) -> None:
    thread = rig.thread()
    said = rig.say(ALICE, "ship on Friday", thread)
    assert _over_http(rig, _shortcut(rig, "theloop_record_decision", said), "forged") == 401
    assert _over_http(rig, _shortcut(rig, "theloop_record_decision", said)) == 200
    (view,) = wait_for(lambda: rig.slack.views, TIMEOUT, "the decision form")
    submitted = _submission(view, {"what": "ship on Friday", "why": "the freeze starts Monday"})
    assert _over_http(rig, submitted, "forged") == 401
    assert _over_http(rig, submitted) == 200
    (comment,) = wait_for(rig.comments, TIMEOUT, "the decision on the ticket")
    assert "> ship on Friday" in comment and "_why:_ the freeze starts Monday" in comment


def test_a_screenshot_and_a_voice_note_on_a_reply_reach_the_session_as_files(rig: Rig) -> None:
    thread = rig.thread()
    png = b"\x89PNG\r\n\x1a\n" + b"pixels" * 50
    shot = rig.slack.add_file("screen shot.png", png, "image/png")
    words = "use the smaller migration"
    voice = rig.slack.add_file("note.m4a", b"audio", "audio/mp4", transcript=words)
    said = rig.bot.say(ALICE, f"<@{BOT_USER}> see these", thread, files=[shot, voice])
    wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")

    (reply,) = rig.loop.replies
    text = reply["text"]
    assert text.startswith("see these") and "UNTRUSTED data from a chat" in text
    paths = [Path(p) for p in re.findall(r"saved at (\S+)", text)]
    assert [p.parent for p in paths] == [rig.bot.process.data_dir / "theloop" / "files"] * 2
    assert paths[0].read_bytes() == png
    assert f'Slack\'s transcript: "{words}"' in text

    (comment,) = rig.comments()
    assert shot["permalink"] in comment and voice["permalink"] in comment
    assert "files-pri" not in comment and "saved at" not in comment


def fetched(link: str) -> tuple[int, bytes]:
    """What the session gets from a link, as `curl` would: the status and the body."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(link, timeout=TIMEOUT) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def test_a_file_on_a_reply_reaches_a_session_that_shares_no_disk_with_the_bot(
    slack_bot: StartBot, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    port = ports.reserve()  # known before the start: the link the bot hands out names it
    public = f"http://127.0.0.1:{port}"
    extra = {"THELOOP_HTTP_PORT": str(port), "THELOOP_PUBLIC_URL": public}
    with (
        FakeGitHub({REPO: {7, 8}}) as github,
        FakeLoop({ITEM: False}) as loop,
        relaying(slack_bot, SETTINGS, github, loop, SIGNING_SECRET, extra) as bot,
    ):
        rig = Rig(bot, fake_slack, github, loop)
        png = b"\x89PNG\r\n\x1a\n" + b"pixels" * 50
        shot = rig.slack.add_file("screen shot.png", png, "image/png")
        said = rig.say_with(ALICE, f"<@{BOT_USER}> see this", rig.thread(), [shot])
        wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")

        (reply,) = rig.loop.replies
        assert "saved at" not in reply["text"] and str(tmp_path) not in reply["text"]
        (link,) = re.findall(r"download it from (\S+)", reply["text"])
        assert link.startswith(f"{public}/theloop/files?")
        # the-loop's side keeps what it downloads on a disk of its own.
        assert fetched(link) == (200, png)
        # A bot that no longer holds the file (another replica, a fresh volume) serves it.
        shutil.rmtree(bot.process.data_dir / "theloop" / "files")
        assert fetched(link) == (200, png)
        # The link names its work item: the same link for another is refused, unread.
        here, there = (urllib.parse.quote(w, safe="") for w in (ITEM, GONE))
        assert fetched(link.replace(here, there))[0] == 403
        (comment,) = rig.comments()
        assert "/theloop/files" not in comment and "files-pri" not in comment
        assert shot["permalink"] in comment


def test_a_decision_without_its_reason_is_recorded_saying_none_was_given(rig: Rig) -> None:
    """`record-decision` takes the reason as optional, as the-loop does: the record says
    none was given, and the-loop's own reader lists it as the decision it is."""
    thread = rig.thread()
    said = rig.say(ALICE, "record-decision tech: ship on Friday", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")
    (comment,) = rig.comments()
    assert "> ship on Friday" in comment and "_why:_ none given" in comment
    rows = [
        {"body": c["body"], "author": c["user"]["login"], "url": c["html_url"]}
        for c in rig.github.comments[(REPO, 7)]
    ]
    (record,) = records_from_comments(rows, RECORD_TYPES, GITHUB_LOGIN)
    assert (record.type, record.text, record.why) == (
        "decision.recorded",
        "ship on Friday",
        "none given",
    )


def test_a_thread_longer_than_one_record_loses_no_message_to_the_cap(rig: Rig) -> None:
    """150 messages a record, the oldest not recorded first: what did not fit is linked,
    and the next record-context takes it — not dropped for good."""
    thread = rig.thread()  # two lines of the-loop's
    for n in range(149):
        rig.slack.say(LOOP, BOB, f"note {n:03d}", thread_ts=thread)  # in the thread's history
    first = rig.say(ALICE, "record-context", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(first["ts"]), TIMEOUT, "the first ✅")
    (one,) = rig.comments()
    assert "150 message(s)" in one and "note 147" in one and "note 148" not in one
    assert "+1 more in the thread, for the next record" in one
    second = rig.say(ALICE, "record-context", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(second["ts"]), TIMEOUT, "the second ✅")
    two = rig.comments()[1]
    assert "note 148" in two and "note 147" not in two


def test_a_reply_typed_through_a_connector_reaches_the_session_without_its_signature(
    rig: Rig,
) -> None:
    thread = rig.thread()
    said = rig.say(ALICE, f"<@{BOT_USER}> use option 2\n*Sent using* <@U0CLAUDE1>", thread)
    wait_for(lambda: "white_check_mark" in rig.reactions(said["ts"]), TIMEOUT, "the ✅")
    assert [r["text"] for r in rig.loop.replies] == ["use option 2"]
    (comment,) = rig.comments()
    assert "> use option 2" in comment and "Sent using" not in comment
