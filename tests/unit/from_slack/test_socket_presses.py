"""A press over Socket Mode is taken before Slack hears it was received, as over HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import theloop_decisions as chat
from slack_sdk.socket_mode.builtin.client import SocketModeClient
from slack_sdk.socket_mode.response import SocketModeResponse

ENVELOPE = {
    "type": "interactive",
    "envelope_id": "e-1",
    "accepts_response_payload": False,
    "payload": {"type": "block_actions", "actions": [{"action_id": "theloop_approve"}]},
}


class Connection(SocketModeClient):
    """Slack's Socket Mode client with the websocket replaced by a record of what it sent."""

    def __init__(self, said: list[str]) -> None:
        super().__init__(app_token="xapp-test")
        self.said = said

    def send_message(self, message: str) -> None:
        self.said.append(f"ack {json.loads(message)['envelope_id']}")


class Backend:
    """The SlackV3 backend as it stands on Socket Mode: its listener acknowledges each
    request at once, then hands the events API payloads to Errbot."""

    def __init__(self, said: list[str]) -> None:
        self.slack_socket_mode = Connection(said)
        self.slack_socket_mode.socket_mode_request_listeners.append(self._acknowledge)

    @staticmethod
    def _acknowledge(client: Any, request: Any) -> None:
        client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))


@pytest.fixture
def said() -> list[str]:
    return []


@pytest.fixture
def backend(said: list[str]) -> Iterator[Backend]:
    backend = Backend(said)
    yield backend
    backend.slack_socket_mode.close()


def _receive(backend: Backend, envelope: Mapping[str, Any]) -> None:
    backend.slack_socket_mode.run_message_listeners(dict(envelope), json.dumps(envelope))


def test_a_press_is_acknowledged_once_stored_and_before_the_room_is_answered(
    backend: Backend, said: list[str]
) -> None:
    def pressed(payload: Mapping[str, Any], taken: Callable[[], None]) -> None:
        said.append("stored")
        taken()
        said.append("answered in the room")

    chat.listen_for_presses(backend, pressed)
    _receive(backend, ENVELOPE)
    # A bot killed before it was stored has acknowledged nothing; Slack waits 3 s for the
    # acknowledgement, which does not wait for the room's answer.
    assert said[:3] == ["stored", "ack e-1", "answered in the room"]
    assert set(said[3:]) <= {"ack e-1"}  # the backend's own, Slack keeps the first


def test_what_is_not_a_press_is_acknowledged_once_handled(
    backend: Backend, said: list[str]
) -> None:
    taken: list[Mapping[str, Any]] = []

    def pressed(payload: Mapping[str, Any], _taken: Callable[[], None]) -> None:
        taken.append(payload)  # a shortcut or a form: nothing said of storing it

    chat.listen_for_presses(backend, pressed)
    _receive(backend, ENVELOPE)
    assert taken == [ENVELOPE["payload"]]
    assert said == ["ack e-1", "ack e-1"]  # ours when handled, then the backend's


def test_a_press_that_could_not_be_stored_is_acknowledged_by_nobody(
    backend: Backend, said: list[str]
) -> None:
    # The database away as the press came: were the backend to acknowledge it, as it does
    # every request, Slack would hear it was received and the decision be lost. Unanswered,
    # Slack tells the member it did not go through, and the member presses again.
    stored: list[str] = []

    def pressed(payload: Mapping[str, Any], taken: Callable[[], None]) -> None:
        if not stored:
            stored.append("refused")
            raise OSError("the database is away")
        stored.append("stored")
        taken()

    detach = chat.listen_for_presses(backend, pressed)
    _receive(backend, ENVELOPE)
    assert said == []
    _receive(backend, {**ENVELOPE, "envelope_id": "e-2"})  # pressed again, the database back
    assert stored == ["refused", "stored"] and said[0] == "ack e-2"
    detach()
    _receive(backend, {**ENVELOPE, "envelope_id": "e-3"})  # the backend's own, as before
    assert stored == ["refused", "stored"] and said[-1] == "ack e-3"


def test_other_requests_are_left_to_the_backend_and_the_listener_detaches(
    backend: Backend, said: list[str]
) -> None:
    taken: list[Mapping[str, Any]] = []
    detach = chat.listen_for_presses(backend, lambda payload, _taken: taken.append(payload))
    _receive(backend, {**ENVELOPE, "type": "events_api", "envelope_id": "e-2"})
    assert taken == [] and said == ["ack e-2"]
    detach()
    _receive(backend, ENVELOPE)
    assert taken == []
