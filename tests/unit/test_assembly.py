"""The parts of one activation, put together without a bot: one book, one memory, one desk.

Everything runs on the plain path (no Slack): ``say`` records what the chat backend would
be asked to send, and the worker and the relay are stepped by hand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from looproom.assembly import Activation
from looproom.inbound import webhook as ingress
from looproom.inbound.signing import sign
from looproom.kickoff.opening import Stored, Wanted
from looproom.relay.decision import Decision
from looproom.settings import Environment, Settings
from tests.support.corpus import MESSAGES

SECRET = "assembly-test-secret"
ITEM = "github:acme/api#7"


class Chat:
    """What the plain backend was asked to send, as (to, text)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def say(self, to: str, text: str) -> None:
        self.sent.append((to, text))


@pytest.fixture
def make_room() -> Iterator[Callable[..., Activation]]:
    """A room built as the plugin builds it, on the plain path; stopped after the test."""
    built: list[Activation] = []

    def make(
        data_dir: Path, chat: Chat, settings: Settings, *, admins: tuple[str, ...] = ("@admin",)
    ) -> Activation:
        room = Activation(
            Environment.from_env({"THELOOP_WEBHOOK_SECRET": SECRET}),
            settings,
            store={},
            data_dir=data_dir,
            slack=None,
            say=chat.say,
            admins=admins,
            bot_member=lambda: "@theloop",
        )
        built.append(room)
        return room

    yield make
    for room in built:
        room.stop()


def _receive(room: Activation, event: dict[str, Any]) -> int:
    body = json.dumps(event).encode()
    stamp = int(time.time())
    headers = {"X-TheLoop-Timestamp": str(stamp), "X-TheLoop-Signature": sign(SECRET, stamp, body)}
    return room.routes.receive(ingress.Request("POST", headers, body, len(body))).status


def _ask(n: int, work_item: str = ITEM) -> dict[str, Any]:
    return {"id": f"ask-{n}", "eventType": "session.awaiting_input", "workItem": work_item}


def test_a_binding_made_by_the_admin_command_steers_the_next_delivery(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    chat = Chat()
    room = make_room(tmp_path, chat, Settings(channel="#the-loop"))
    assert "now posts to #war-room" in room.admin.bind(f"{ITEM} #war-room")
    assert _receive(room, _ask(1)) == 202 and room.worker.step()
    assert room.admin.unbind(ITEM).endswith("posts to its configured room again.")
    assert _receive(room, _ask(2)) == 202 and room.worker.step()
    assert [to for to, _ in chat.sent] == ["#war-room", "#the-loop"]


def test_without_a_room_the_admins_hear_it_and_without_admins_it_waits(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    chat = Chat()
    room = make_room(tmp_path, chat, Settings())
    assert _receive(room, _ask(1)) == 202 and room.worker.step()
    assert [to for to, _ in chat.sent] == ["@admin"]
    nobody = make_room(tmp_path / "nobody", Chat(), Settings(), admins=())
    assert _receive(nobody, _ask(1)) == 202 and nobody.worker.step()
    assert nobody.inbox.depth() == 1 and "nowhere to post" in nobody.admin.status(time.time())


def test_a_typed_decision_is_checked_against_what_the_room_was_shown(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    chat = Chat()
    settings = Settings(
        channel="#the-loop", subscribe=("comment.agent",), authorized_users=frozenset({"@alice"})
    )
    room = make_room(tmp_path, chat, settings)
    checklist = json.loads(next(MESSAGES.glob("01-*.json")).read_text("utf-8"))
    checklist.pop("origin", None)
    assert _receive(room, {**checklist, "id": "corpus-01", "workItem": ITEM}) == 202
    assert room.worker.step()  # the outlet tells the memory the desk reads
    room.decisions.listener.said(
        "@alice", f"execute {ITEM} without 2", {}, elsewhere="#the-loop", addressed=True
    )
    assert ("#the-loop", "👀") in chat.sent
    assert room.decisions.relay.step()
    (line,) = room.decisions.relay.sinks.ledger.lines()
    assert line["kind"] == "execute" and "- [ ] brainstorm-approval" in line["body"]


def test_a_decision_stored_before_decisions_carried_their_words_is_told_by_its_label(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    """A decision queued by an older bot has no label or receipt: the room is still told
    of it as the table of kinds names it, not by its bare kind."""
    chat = Chat()
    settings = Settings(channel="#the-loop", authorized_users=frozenset({"@alice"}))
    room = make_room(tmp_path, chat, settings)
    old = Decision("execute", ITEM, "@alice", "#the-loop:10.0", "2026-01-01T00:00:00Z")
    old_form = {k: v for k, v in old.to_dict().items() if k not in ("label", "after", "receipt")}
    payload = {"key": old.key, "decision": old_form, "target": {"sink": "ledger", "body": "go"}}
    assert room.decisions.relay.queue.put(old.key, json.dumps(payload))
    assert room.decisions.relay.step()
    said = [text for _, text in chat.sent if "recorded" in text]
    assert said == ["✅ recorded — moving on: the phase selection of <@@alice>."]


def test_queue_commands_reach_the_relay_queue_for_a_decisions_key(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    room = make_room(tmp_path, Chat(), Settings())
    room.decisions.relay.queue.put("relay:abc", "{}")
    assert "Decisions not relayed yet" in room.admin.queue("", time.time())
    assert room.admin.queue("drop relay:abc", time.time()) == "drop: done for `relay:abc`."
    assert room.admin.queue("drop ask-9", time.time()).startswith("No undelivered item")
    assert room.admin.queue("purge", time.time()).startswith("usage: !theloop queue")


def test_queue_commands_reach_the_kickoff_queue_for_a_requests_key(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    room = make_room(tmp_path, Chat(), Settings())
    kickoffs = room.stores.kickoff
    assert kickoffs is not None
    asked = Wanted("message:C1:10.0", "U1", "C1", "10.0", "Flaky teardown", ("acme/api",))
    kickoffs.put(asked.key, Stored(asked, "acme/api", time.time()).to_json())
    assert kickoffs.claim() is not None
    kickoffs.park(asked.key, "GitHub refused it (410)")
    listing = room.admin.queue("", time.time())
    assert "Work items not opened yet" in listing and "`acme/api` · Flaky teardown" in listing
    assert "PARKED" in listing and "410" in listing
    assert room.admin.queue("retry message:C1:10.0", time.time()).startswith("retry: done")
    assert [item.state for item in kickoffs.list()] == ["pending"]


def test_status_shows_each_act_and_who_holds_it(
    tmp_path: Path, make_room: Callable[..., Activation]
) -> None:
    settings = Settings(
        authorized_users=frozenset({"U0DECIDER"}),
        collaborators=frozenset({"U0COLLAB"}),
        publish=frozenset({"context.added"}),
    )
    status = make_room(tmp_path, Chat(), settings).admin.status(time.time())
    assert "control keywords (the-loop's defaults): start → `the-loop start`" in status
    grants = status.split("**grants**", 1)[1]
    assert "- work-item.reply: `U0DECIDER`, `U0COLLAB`" in grants
    assert "- gate.feedback: not granted to the room" in grants
    assert "- context.added: `U0DECIDER`, `U0COLLAB`" in grants


def test_status_shows_the_reactions_the_catch_up_and_the_jira_ledger_never_its_token(
    tmp_path: Path, make_room: Callable[..., Activation], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THELOOP_JIRA_TOKEN", "jira-token-never-shown")
    settings = Settings.from_mapping(
        {
            "slack": {"reactions": {"completed": "rocket"}, "read": {"catchUpSeconds": 120}},
            "jira": {
                "site": "acme.atlassian.net",
                "deployment": "data-center",
                "projects": {"OPS": {}},
            },
        }
    )
    status = make_room(tmp_path, Chat(), settings).admin.status(time.time())
    assert "completed → :rocket:" in status
    assert "catch-up: at connect and every 120 s" in status
    assert "jira ledger: acme.atlassian.net (data-center), projects OPS; credential set" in status
    assert "jira-token-never-shown" not in status
