"""The fake Slack speaks Socket Mode the way slack_sdk's own client expects (tests rely on it)."""

from __future__ import annotations

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack


def test_a_socket_mode_client_connects_hears_hello_and_acks_an_envelope() -> None:
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        client = SocketModeClient(app_token=APP_TOKEN, web_client=web)
        heard: list[str] = []

        def on_message(_client: SocketModeClient, message: dict, _raw: str) -> None:
            heard.append(message.get("type", ""))

        def on_request(sm: SocketModeClient, request: SocketModeRequest) -> None:
            sm.send_socket_mode_response(
                SocketModeResponse(request.envelope_id, payload={"seen": request.payload["n"]})
            )

        client.message_listeners.append(on_message)
        client.socket_mode_request_listeners.append(on_request)
        try:
            client.connect()
            assert slack.wait_for(lambda: "hello" in heard)
            ack = slack.push_envelope({"n": 7}, kind="interactive")
            assert ack is not None and ack["payload"] == {"seen": 7}
        finally:
            client.auto_reconnect_enabled = False
            slack.stop()  # the server closes first: the client's reader wakes at once
            client.close()
        assert slack.calls_to("apps.connections.open")[0].token == APP_TOKEN


def test_the_app_token_and_the_bot_token_are_not_interchangeable() -> None:
    with FakeSlack() as slack:
        as_bot = WebClient(token=BOT_TOKEN, base_url=slack.url)
        assert "chat:write" in as_bot.api_call("auth.test").headers["x-oauth-scopes"].split(",")
        as_app = WebClient(token=APP_TOKEN, base_url=slack.url)
        with pytest.raises(SlackApiError) as refused:
            as_app.chat_postMessage(channel="C0LOOP0001", text="x")
        assert refused.value.response["error"] == "invalid_auth"


def test_a_member_says_something_in_a_thread_as_slack_keeps_it() -> None:
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        parent = web.chat_postMessage(channel="C0LOOP0001", text="parent")["ts"]
        said = slack.say("#the-loop", "U0ALICE01", "approve", thread_ts=parent)
        assert (said["channel"], said["user"], said["thread_ts"]) == (
            "C0LOOP0001",
            "U0ALICE01",
            parent,
        )
        replies = web.conversations_replies(channel="C0LOOP0001", ts=parent)["messages"]
        assert [m["text"] for m in replies] == ["parent", "approve"]
        assert replies[0]["reply_count"] == 1
        with pytest.raises(KeyError):
            slack.say("#nowhere", "U0ALICE01", "hello")
