"""The fake Slack speaks Socket Mode the way slack_sdk's own client expects (tests rely on it)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack, Limit, block_errors


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


def test_a_post_whose_answer_is_lost_is_recorded_as_landed_and_its_fault_named() -> None:
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url, retry_handlers=[])
        slack.fail("chat.postMessage", "land_then_5xx")
        slack.fail("chat.postMessage", "5xx")
        for _ in range(2):
            with pytest.raises(SlackApiError):
                web.chat_postMessage(channel="C0LOOP0001", text="maybe")
        web.chat_postMessage(channel="C0LOOP0001", text="surely")
        calls = slack.calls_to("chat.postMessage")
        assert [(c.status, c.fault, c.landed) for c in calls] == [
            (500, "land_then_5xx", True),
            (500, "5xx", False),
            (200, "", True),
        ]
        assert [m["text"] for m in slack.messages("C0LOOP0001")] == ["maybe", "surely"]
        assert calls[0].effect["ts"] == slack.messages("C0LOOP0001")[0]["ts"]


def test_a_per_channel_limit_refuses_the_call_over_it_and_names_it_a_limit() -> None:
    # One post a minute after the burst: none earned back while the test runs, however slowly.
    limits = {"chat.postMessage": Limit(per_minute=1, burst=2, per_channel=True)}
    with FakeSlack(channels=[("C0ONE", "one"), ("C0TWO", "two")], limits=limits) as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url, retry_handlers=[])
        slack.fail("chat.postMessage", "429")  # a scripted 429 spends nothing
        with pytest.raises(SlackApiError):
            web.chat_postMessage(channel="C0ONE", text="scripted")
        for n in range(2):
            web.chat_postMessage(channel="C0ONE", text=f"burst {n}")
        with pytest.raises(SlackApiError) as refused:
            web.chat_postMessage(channel="C0ONE", text="one too many")
        assert refused.value.response.status_code == 429
        assert int(refused.value.response.headers["Retry-After"]) >= 1
        web.chat_postMessage(channel="C0TWO", text="another channel's budget")
        assert [c.fault for c in slack.calls_to("chat.postMessage")] == [
            "429",
            "",
            "",
            "limit",
            "",
        ]


def test_dropped_sockets_are_closed_and_the_client_connects_again() -> None:
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        client = SocketModeClient(app_token=APP_TOKEN, web_client=web, ping_interval=1)
        try:
            client.connect()
            assert slack.wait_for(slack.socket_connected)
            assert slack.drop_sockets() == 1
            assert slack.wait_for(lambda: len(slack.calls_to("apps.connections.open")) >= 2, 30)
            assert slack.wait_for(slack.socket_connected, 30)
        finally:
            client.auto_reconnect_enabled = False
            slack.stop()
            client.close()


def test_envelopes_are_spread_over_an_apps_open_connections_one_each() -> None:
    # Slack hands each envelope to one of the app's connections: two replicas share the work.
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        heard: dict[int, list[int]] = {0: [], 1: []}
        clients = [SocketModeClient(app_token=APP_TOKEN, web_client=web) for _ in range(2)]

        def listener(n: int) -> Callable[[SocketModeClient, SocketModeRequest], None]:
            def on_request(sm: SocketModeClient, request: SocketModeRequest) -> None:
                heard[n].append(request.payload["n"])
                sm.send_socket_mode_response(SocketModeResponse(request.envelope_id))

            return on_request

        for n, client in enumerate(clients):
            client.socket_mode_request_listeners.append(listener(n))
        try:
            for client in clients:
                client.connect()
            assert slack.wait_for(lambda: slack.socket_connected(count=2))
            acks = [slack.push_envelope({"n": n}, kind="interactive") for n in range(4)]
        finally:
            for client in clients:
                client.auto_reconnect_enabled = False
            slack.stop()
            for client in clients:
                client.close()
        assert all(ack is not None for ack in acks)
        assert sorted(heard[0] + heard[1]) == [0, 1, 2, 3]
        assert (len(heard[0]), len(heard[1])) == (2, 2)


def test_a_rooms_members_and_topic_are_answered_as_slack_does_a_foreign_private_room_not() -> None:
    with FakeSlack() as slack:
        inside = slack.add_channel("plans", private=True, topic="Friday", members=["U0ALICE01"])
        outside = slack.add_channel("hr", private=True, member=False, members=["U0BOB0001"])
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        first = web.conversations_members(channel=inside, limit=1)
        rest = web.conversations_members(
            channel=inside, cursor=first["response_metadata"]["next_cursor"]
        )
        assert first["members"] + rest["members"] == ["U0THELOOP", "U0ALICE01"]
        assert rest["response_metadata"]["next_cursor"] == ""
        assert web.conversations_info(channel=inside)["channel"]["topic"]["value"] == "Friday"
        with pytest.raises(SlackApiError) as refused:
            web.conversations_members(channel=outside)
        assert refused.value.response["error"] == "channel_not_found"


def _home(blocks: int) -> dict:
    section = {"type": "section", "text": {"type": "mrkdwn", "text": "waits on you"}}
    return {"type": "home", "blocks": [section] * blocks}


def test_a_home_view_is_published_as_slack_does_at_its_block_cap_and_refused_one_past() -> None:
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        published = web.views_publish(user_id="U0ALICE01", view=_home(100))
        assert (
            published["view"]["type"] == "home" and len(slack.home_of("U0ALICE01")["blocks"]) == 100
        )
        with pytest.raises(SlackApiError) as refused:
            web.views_publish(user_id="U0ALICE01", view=_home(101))
        assert refused.value.response["error"] == "invalid_arguments"
        assert "no more than 100 items" in str(refused.value.response["response_metadata"])
        assert len(slack.home_of("U0ALICE01")["blocks"]) == 100  # the last good view stays
        again = web.views_publish(user_id="U0ALICE01", view=_home(1))
        assert again["view"]["id"] == published["view"]["id"]  # one Home per member


def test_views_publish_refuses_what_slack_refuses() -> None:
    with FakeSlack() as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)

        def error(**args: object) -> str:
            with pytest.raises(SlackApiError) as refused:
                web.api_call("views.publish", json=args)
            return str(refused.value.response["error"])

        assert error(user_id="U0ALICE01", view={"type": "modal", "blocks": []}) == (
            "invalid_arguments"
        )
        assert error(user_id="U0NOBODY1", view=_home(1)) == "user_not_found"
        big = {"type": "section", "text": {"type": "mrkdwn", "text": "x" * 2900}}
        assert error(user_id="U0ALICE01", view={"type": "home", "blocks": [big] * 90}) == (
            "view_too_large"
        )
        first = web.views_publish(user_id="U0ALICE01", view=_home(1))["view"]
        web.views_publish(user_id="U0ALICE01", view=_home(2))
        assert error(user_id="U0ALICE01", view=_home(3), hash=first["hash"]) == "hash_conflict"
        slack.home_tab = False
        assert error(user_id="U0ALICE01", view=_home(1)) == "not_enabled"


def test_views_publish_over_its_tier_is_answered_429_with_retry_after() -> None:
    with FakeSlack(limits={"views.publish": Limit(per_minute=60, burst=2)}) as slack:
        web = WebClient(token=BOT_TOKEN, base_url=slack.url)
        for _ in range(2):
            web.views_publish(user_id="U0ALICE01", view=_home(1))
        with pytest.raises(SlackApiError) as refused:
            web.views_publish(user_id="U0ALICE01", view=_home(1))
        assert refused.value.response.status_code == 429
        assert refused.value.response.headers["Retry-After"] == "1"


def test_opening_the_home_tab_is_the_event_slack_sends() -> None:
    with FakeSlack() as slack:
        event = slack.home_opened("U0ALICE01")["event"]
        assert (event["type"], event["user"], event["tab"]) == (
            "app_home_opened",
            "U0ALICE01",
            "home",
        )
        assert "view" not in event  # nothing published yet


def test_a_sections_button_is_checked_as_slack_checks_an_actions_one() -> None:
    def section(label: str, value: str = "v") -> dict:
        button = {"type": "button", "action_id": "a", "value": value}
        button["text"] = {"type": "plain_text", "text": label}
        return {"type": "section", "text": {"type": "mrkdwn", "text": "x"}, "accessory": button}

    assert block_errors([section("x" * 75), section("ok", "v" * 2000)]) == []
    assert block_errors([section("x" * 76)]) == [
        "must be less than 76 characters [json-pointer:/blocks/0/accessory/text/text]"
    ]
    assert "accessory/value" in block_errors([section("ok", "v" * 2001)])[0]
