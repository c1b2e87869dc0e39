"""Slack's 3 s: each way in is acknowledged before the slow work behind it is answered.

Slack waits 3 s for an interactive request, a slash command or an event to be
acknowledged. No clock is read here: what makes the 3 s hold is that the answer to Slack
does not wait for a peer — so the peer (the fake of Slack, or of the-loop) holds its own
answer until the test lets it go, and Slack's answer must have arrived meanwhile. A
press, over HTTP and over Socket Mode, is acknowledged once stored, while the room's
answer to it (the pressed message edited, a form opened) is still held, and so is the
"Record a decision" shortcut while its form is; the "Add as the-loop context" shortcut
once its request is stored, while the thread's read is held, and a second delivery of it
is answered and records nothing more; a slash command reading the-loop, over HTTP and
over Socket Mode, is answered — saying the-loop's view could not be had — while the-loop
still holds its answer, or trickles it a byte at a time; the Home tab opened, over the
Events API, is answered while its drawing is held.

Not here: any other Events API request in HTTP mode is answered by Errbot's SlackV3 view
after it handled the event — a typed decision is stored there and sent on after
(test_events_api_e2e.py), and a resend Slack makes after its 3 s is acknowledged and not
handled again (test_events_api_mount.py).
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import theloop_decisions as chat
from slack_sdk import WebClient
from slack_sdk.socket_mode.builtin.client import SocketModeClient
from slack_sdk.socket_mode.response import SocketModeResponse

from looproom.assembly import Activation
from looproom.events import KNOWN_EVENTS, Event
from looproom.from_slack import shortcuts
from looproom.inbound import slack_events
from looproom.room import buttons
from looproom.server.app import App
from looproom.server.runner import HttpServer
from looproom.settings import Environment, Settings
from looproom.settings.grants import DEFAULT_GRANTS, INSTANCE
from looproom.slack.transport import SlackTransport
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack
from tests.support import signed
from tests.support.corpus import MESSAGES
from tests.support.wait import wait_for

SLACK_SECRET = "acknowledged-first-signing-secret"
WEBHOOK_SECRET = "acknowledged-first-webhook-secret"
ROOM, ITEM, ALICE = "C0LOOP0001", "github:acme/api#7", "U0ALICE01"
GATE_TS, THREAD_TS = "200.000000", "50.000000"
#: How long a test waits for what must happen while a peer is held (a bound, not a measure).
PATIENCE = 20.0


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        yield fake
        fake.release()  # nothing left held when the test ends


@pytest.fixture
def held_loop() -> Iterator[tuple[FakeLoop, threading.Event]]:
    """The fake of the-loop, holding every answer until the event is set."""
    let_go = threading.Event()
    with FakeLoop() as loop:
        loop.before = lambda _request: let_go.wait(PATIENCE * 2)
        yield loop, let_go
        let_go.set()


@pytest.fixture
def trickling_loop() -> Iterator[FakeLoop]:
    """The fake of the-loop answering every call a byte at a time: slow, not dead, so no
    read of it ever times out."""
    with FakeLoop() as loop:
        loop.fail("/api/v1/", kind="trickle", times=1000)
        yield loop


def _room(
    tmp_path: Path, slack: FakeSlack | None, env: Mapping[str, str] | None = None
) -> Activation:
    # The transport waits for a held call longer than the test waits for Slack's answer:
    # an answer that came only once the call gave up would not count.
    client = WebClient(token=BOT_TOKEN, base_url=slack.url) if slack else None
    transport = SlackTransport.beside(client, timeout=int(PATIENCE * 4)) if client else None
    room = Activation(
        Environment.from_env(
            {
                "THELOOP_WEBHOOK_SECRET": WEBHOOK_SECRET,
                "THELOOP_SLACK_SIGNING_SECRET": SLACK_SECRET,
                **(env or {}),
            }
        ),
        Settings(
            channel=ROOM,
            subscribe=KNOWN_EVENTS,
            authorized_users=frozenset({ALICE}),
            publish=DEFAULT_GRANTS | {INSTANCE},  # restart and upgrade too
        ),
        store={},
        data_dir=tmp_path,
        slack=transport,
        say=lambda _to, _text: None,
        admins=(),
        bot_member=lambda: "U0THELOOP",
    )
    raw = json.loads(next(MESSAGES.glob("06-*.json")).read_text("utf-8"))
    raw.pop("origin", None)
    gate = Event.from_wire({**raw, "workItem": ITEM})
    room.memory.observe(gate, ROOM, GATE_TS, thread_ts=THREAD_TS)
    return room


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Callable[..., tuple[Activation, HttpServer]]]:
    made: list[tuple[Activation, HttpServer]] = []

    def make(slack: FakeSlack | None, env: Mapping[str, str] | None = None, *, start=False):
        room = _room(tmp_path / f"room{len(made)}", slack, env)
        if start:
            room.start()
        # Slack's Events API mounted as in HTTP mode; the backend's view is not what is tried.
        view = room.routes.events_api(lambda _environ, reply: reply("200 OK", []) or [b"{}"])
        server = HttpServer(App(room.routes, {slack_events.PATH: view}))
        assert server.start("127.0.0.1", 0).address
        made.append((room, server))
        return made[-1]

    yield make
    for room, server in made:
        server.stop()
        room.stop()


#: A press, and the Slack call the room makes after it that Slack holds: Approve edits the
#: pressed message; Request changes, which carries no reason, opens the form that asks it;
#: the "Record a decision" shortcut opens its form.
PRESSES = [
    (buttons.APPROVE, "chat.update"),
    (buttons.CHANGES, "views.open"),
    (shortcuts.RECORD_DECISION, "views.open"),
]


def _press(action: str) -> dict[str, Any]:
    if action in shortcuts.SHORTCUTS:
        return {
            "type": "message_action",
            "callback_id": action,
            "trigger_id": "trigger-1",
            "user": {"id": ALICE},
            "channel": {"id": ROOM},
            "message": {"ts": "210.000000", "thread_ts": THREAD_TS, "text": "we go with B"},
        }
    return {
        "type": "block_actions",
        "trigger_id": "trigger-1",
        "user": {"id": ALICE},
        "channel": {"id": ROOM},
        "message": {"ts": GATE_TS, "thread_ts": THREAD_TS, "text": "gate", "blocks": []},
        "actions": [{"action_id": action, "value": action}],
    }


def _slash(text: str) -> dict[str, str]:
    return {
        "command": "/the-loop",
        "text": text,
        "user_id": ALICE,
        "channel_id": ROOM,
        "trigger_id": "t-1",
    }


def _in_background(call: Callable[[], Any]) -> list[Any]:
    """Run ``call`` on a thread of its own; its result lands in the list returned."""
    result: list[Any] = []
    threading.Thread(target=lambda: result.append(call()), daemon=True).start()
    return result


# -- over HTTP ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("action", "held"), PRESSES)
def test_a_press_over_http_is_answered_once_stored_while_the_rooms_answer_is_held(
    served, slack: FakeSlack, action: str, held: str
) -> None:
    room, server = served(slack)
    slack.fail(held, "hang")
    body = urllib.parse.urlencode({"payload": json.dumps(_press(action))}).encode()
    headers = signed.slack_headers(SLACK_SECRET, body)

    def post() -> tuple[int, int]:
        status, _raw = signed.post("127.0.0.1", server.port, signed.INTERACTIVE_PATH, body, headers)
        return status, room.decisions.relay.queue.depth()  # stored when Slack was answered

    answer = _in_background(post)
    wait_for(lambda: slack.calls_to(held), PATIENCE, f"the room's {held} under way")
    wait_for(lambda: answer, PATIENCE, f"Slack answered while {held} is held")
    assert answer == [(200, 1 if action == buttons.APPROVE else 0)]
    slack.release()


def test_add_as_context_is_answered_once_stored_while_the_threads_read_is_held(
    served, slack: FakeSlack
) -> None:
    room, server = served(slack)
    # The work item's thread as Slack keeps it: the room's parent, a member's reply under it.
    parent = {"type": "message", "user": "U0THELOOP", "text": "issue-7", "ts": THREAD_TS}
    slack.channels[ROOM]["messages"].append(parent)
    slack.say(ROOM, ALICE, "we go with B, it keeps v1 working", thread_ts=THREAD_TS)
    slack.fail("conversations.replies", "land_then_hang")  # Slack slow, or pacing a 429
    body = urllib.parse.urlencode({"payload": json.dumps(_press(shortcuts.RECORD_CONTEXT))})
    headers = signed.slack_headers(SLACK_SECRET, body.encode())
    decisions = room.decisions

    def post() -> tuple[int, int, int]:
        status, _raw = signed.post(
            "127.0.0.1", server.port, signed.INTERACTIVE_PATH, body.encode(), headers
        )
        return status, decisions.menus.contexts_waiting(), decisions.relay.queue.depth()

    answer = _in_background(post)
    wait_for(lambda: slack.calls_to("conversations.replies"), PATIENCE, "the thread read")
    wait_for(lambda: answer, PATIENCE, "Slack answered while the thread's read is held")
    assert answer == [(200, 1, 0)]  # the request stored, the record not made yet
    slack.release()
    wait_for(lambda: decisions.relay.queue.depth() == 1, PATIENCE, "the thread recorded")
    wait_for(lambda: decisions.menus.contexts_waiting() == 0, PATIENCE, "the request done")
    reads = len(slack.calls_to("conversations.replies"))
    # Slack delivers it again: answered, and nothing read or recorded a second time.
    again = signed.post("127.0.0.1", server.port, signed.INTERACTIVE_PATH, body.encode(), headers)
    assert again[0] == 200
    assert decisions.relay.queue.depth() == 1
    assert len(slack.calls_to("conversations.replies")) == reads


def test_a_slash_command_over_http_is_answered_while_the_loop_holds_its_answer(
    served, held_loop: tuple[FakeLoop, threading.Event]
) -> None:
    loop, let_go = held_loop
    _, server = served(None, {"THELOOP_LOOP_API": loop.url})
    body = urllib.parse.urlencode(_slash("status")).encode()
    headers = signed.slack_headers(SLACK_SECRET, body)
    answer = _in_background(
        lambda: signed.post("127.0.0.1", server.port, signed.COMMANDS_PATH, body, headers)
    )
    wait_for(lambda: answer, PATIENCE, "Slack answered while the-loop holds its answer")
    assert not let_go.is_set()
    ((status, raw),) = answer
    said = json.loads(raw)
    assert status == 200 and said["response_type"] == "ephemeral"
    assert "shown from the room's memory alone" in said["text"]


def test_the_home_tab_opened_over_the_events_api_is_answered_while_its_drawing_is_held(
    served, slack: FakeSlack
) -> None:
    _, server = served(slack, start=True)
    slack.fail("views.publish", "hang")
    opened = {"type": "app_home_opened", "user": ALICE, "tab": "home", "event_ts": "1.000001"}
    body = json.dumps({"type": "event_callback", "event_id": "Ev1", "event": opened}).encode()
    headers = {**signed.slack_headers(SLACK_SECRET, body), "Content-Type": "application/json"}
    answer = _in_background(
        lambda: signed.post("127.0.0.1", server.port, slack_events.PATH, body, headers)
    )
    wait_for(lambda: answer, PATIENCE, "Slack answered")
    wait_for(lambda: slack.calls_to("views.publish"), PATIENCE, "the Home drawn, and held")
    assert answer[0][0] == 200
    slack.release()


# -- over Socket Mode ---------------------------------------------------------------------------


class Connection(SocketModeClient):
    """Slack's Socket Mode client, its websocket replaced by a record of the acks sent."""

    def __init__(self) -> None:
        super().__init__(app_token="xapp-test")
        self.acks: list[dict[str, Any]] = []

    def send_message(self, message: str) -> None:
        self.acks.append(json.loads(message))


class Backend:
    """The SlackV3 backend as it stands on Socket Mode: its own listener acks at once."""

    def __init__(self) -> None:
        self.slack_socket_mode = Connection()
        self.slack_socket_mode.socket_mode_request_listeners.append(
            lambda client, request: client.send_socket_mode_response(
                SocketModeResponse(envelope_id=request.envelope_id)
            )
        )

    def receive(self, envelope: Mapping[str, Any]) -> None:
        self.slack_socket_mode.run_message_listeners(dict(envelope), json.dumps(envelope))


@pytest.fixture
def backend() -> Iterator[Backend]:
    made = Backend()
    yield made
    made.slack_socket_mode.close()


@pytest.mark.parametrize(("action", "held"), PRESSES)
def test_a_press_over_socket_mode_is_acked_once_stored_while_the_rooms_answer_is_held(
    tmp_path: Path, slack: FakeSlack, backend: Backend, action: str, held: str
) -> None:
    room = _room(tmp_path, slack)
    try:
        acks = backend.slack_socket_mode.acks
        depth_when_acked: list[int] = []
        chat.listen_for_presses(
            backend,
            lambda payload, taken: room.decisions.listener.pressed(
                payload,
                lambda: (depth_when_acked.append(room.decisions.relay.queue.depth()), taken()),
            ),
        )
        slack.fail(held, "hang")
        envelope = {"type": "interactive", "envelope_id": "e-1", "payload": _press(action)}
        _in_background(lambda: backend.receive(envelope))
        wait_for(lambda: slack.calls_to(held), PATIENCE, f"the room's {held} under way")
        wait_for(lambda: acks, PATIENCE, f"the envelope acked while {held} is held")
        stored = 1 if action == buttons.APPROVE else 0
        assert acks[0]["envelope_id"] == "e-1" and depth_when_acked == [stored]
        slack.release()
    finally:
        room.stop()


def test_a_slash_command_over_socket_mode_is_acked_while_the_loop_holds_its_answer(
    tmp_path: Path, held_loop: tuple[FakeLoop, threading.Event], backend: Backend
) -> None:
    loop, let_go = held_loop
    room = _room(tmp_path, None, {"THELOOP_LOOP_API": loop.url})
    try:
        acks = backend.slack_socket_mode.acks
        chat.listen_for_commands(backend, room.decisions.slash.answer)
        envelope = {"type": "slash_commands", "envelope_id": "e-2", "payload": _slash("status")}
        _in_background(lambda: backend.receive(envelope))
        wait_for(lambda: acks, PATIENCE, "the envelope acked while the-loop holds its answer")
        assert not let_go.is_set()
        assert acks[0]["envelope_id"] == "e-2"
        assert "shown from the room's memory alone" in acks[0]["payload"]["text"]
    finally:
        room.stop()


# -- a the-loop slow but never silent: each read is quick, the whole is not -------------------

LATE = "did not answer in time for Slack"


@pytest.mark.parametrize("asked", ["status", "restart"])
def test_a_slash_command_over_http_is_answered_in_time_while_the_loop_trickles(
    served, trickling_loop: FakeLoop, asked: str
) -> None:
    _, server = served(None, {"THELOOP_LOOP_API": trickling_loop.url})
    body = urllib.parse.urlencode(_slash(asked)).encode()
    headers = signed.slack_headers(SLACK_SECRET, body)
    answer = _in_background(
        lambda: signed.post("127.0.0.1", server.port, signed.COMMANDS_PATH, body, headers)
    )
    wait_for(lambda: answer, PATIENCE, "Slack answered while the-loop trickles")
    assert not trickling_loop.let_go.is_set()
    ((status, raw),) = answer
    assert status == 200 and LATE in json.loads(raw)["text"]


@pytest.mark.parametrize("asked", ["status", "restart"])
def test_a_slash_command_over_socket_mode_is_acked_in_time_while_the_loop_trickles(
    tmp_path: Path, trickling_loop: FakeLoop, backend: Backend, asked: str
) -> None:
    room = _room(tmp_path, None, {"THELOOP_LOOP_API": trickling_loop.url})
    try:
        acks = backend.slack_socket_mode.acks
        chat.listen_for_commands(backend, room.decisions.slash.answer)
        envelope = {"type": "slash_commands", "envelope_id": "e-3", "payload": _slash(asked)}
        _in_background(lambda: backend.receive(envelope))
        wait_for(lambda: acks, PATIENCE, "the envelope acked while the-loop trickles")
        assert not trickling_loop.let_go.is_set()
        assert LATE in acks[0]["payload"]["text"]
    finally:
        room.stop()
