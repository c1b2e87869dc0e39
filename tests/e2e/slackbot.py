"""A real SlackV3 bot pointed at the loopback fake of Slack, and a signed sender for it.

Used by the e2e fixtures (``conftest.py``) and by ``bench/bench_rooms.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.e2e.botproc import BotProcess
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import FakeLoop
from tests.fakes.slack_api import APP_TOKEN, BOT_TOKEN, FakeSlack, decoded
from tests.support import messages, signed
from tests.support.wait import wait_for

SECRET = "e2e-slack-webhook-secret-0123456789abcdef"
LOOP, API_LOOP = "C0LOOP0001", "C0APILOOP1"
#: A bound on a start-up: provisioning, Errbot's plugins, and the Socket Mode handshake.
START_TIMEOUT = 90.0


class SlackBot:
    """A running SlackV3 bot and the fake Slack it talks to."""

    def __init__(self, process: BotProcess, slack: FakeSlack) -> None:
        self.process, self.slack = process, slack

    def send(self, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST ``event`` to the bot's webhook, signed; its status and JSON answer."""
        body = json.dumps(event).encode()
        headers = signed.webhook_headers(SECRET, body)
        host, port = self.process.host, self.process.port
        status, answer = signed.post(host, port, signed.WEBHOOK_PATH, body, headers)
        return status, json.loads(answer or b"{}")

    def show(self, event: dict[str, Any], timeout: float, room: str = LOOP) -> dict[str, Any]:
        """Send ``event``; the room's message for it in ``room``, once posted."""
        assert self.send(event)[0] == 202

        def posted() -> list[dict[str, Any]]:
            return [m for m in self.slack.messages(room) if event_key(m) == event["id"]]

        return wait_for(posted, timeout, f"{event['id']} to be posted")[0]

    def say(
        self,
        member: str,
        text: str,
        thread_ts: str,
        room: str = LOOP,
        files: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A member types in ``room`` (in the thread under ``thread_ts``, if any), with
        ``files`` attached: the message is in Slack, and its event is delivered to the bot
        over Socket Mode."""
        message = self.slack.say(room, member, text, thread_ts=thread_ts, files=files)
        event = {"type": "event_callback", "event": message}
        assert self.slack.push_envelope(event) is not None, "the bot did not ack the message"
        return message


#: What the e2e fixture ``slack_bot`` hands a test: ``(settings_yaml, env=None)`` → a bot.
StartBot = Callable[..., SlackBot]


def start(
    data_dir: Path, settings_yaml: str, slack: FakeSlack, env: Mapping[str, str] | None = None
) -> SlackBot:
    """A SlackV3 bot on ``data_dir`` with ``settings_yaml`` as its theloop.yaml, started
    against ``slack`` (plus ``env``). Whoever starts it kills it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "theloop.yaml").write_text(settings_yaml, encoding="utf-8")
    process = BotProcess(data_dir, backend="SlackV3", env={**slack_env(slack), **(env or {})})
    process.start(timeout=START_TIMEOUT)
    return SlackBot(process, slack)


@contextmanager
def relaying(
    start: StartBot,
    settings_yaml: str,
    github: FakeGitHub,
    loop: FakeLoop,
    signing_secret: str,
    extra: Mapping[str, str] | None = None,
) -> Iterator[SlackBot]:
    """A bot that relays to ``github`` and to the-loop's API ``loop``, with Slack's signing
    secret for its HTTP routes (and ``extra`` in its environment); killed on the way out,
    before its relay sinks go away."""
    env = {
        "THELOOP_GITHUB_TOKEN": TOKEN,
        "THELOOP_GITHUB_API": github.url,
        "THELOOP_LOOP_API": loop.url,
        "THELOOP_SLACK_SIGNING_SECRET": signing_secret,
        **(extra or {}),
    }
    bot = start(settings_yaml, env)
    try:
        yield bot
    finally:
        bot.process.kill()


def corpus(stem: str) -> dict[str, Any]:
    """A real the-loop message as the event its sender posts, with an id of its own."""
    return messages.event(stem, id=f"e2e-{messages.path(stem).stem}")


def slash_command(text: str, member: str, trigger: str = "t1") -> dict[str, str]:
    """``/the-loop <text>`` as Slack sends it, typed by ``member`` in the main room."""
    return {
        "command": "/the-loop",
        "text": text,
        "user_id": member,
        "channel_id": LOOP,
        "trigger_id": trigger,
    }


def slash(slack: FakeSlack, text: str, member: str, trigger: str = "t1") -> dict[str, Any]:
    """``/the-loop <text>`` over Socket Mode: the answer, which the member alone is shown."""
    ack = slack.push_envelope(slash_command(text, member, trigger), kind="slash_commands")
    assert ack is not None, "the slash command was not acknowledged"
    answer = ack.get("payload") or {}
    assert answer.get("response_type") == "ephemeral", ack
    return answer


def event_key(fields: Mapping[str, Any]) -> str:
    """The key of the-loop's event a message (or a ``chat.postMessage`` call's arguments)
    was posted for, from its metadata; ``""`` for anything else (a parent, a reply)."""
    payload = (decoded(fields.get("metadata")) or {}).get("event_payload") or {}
    return str(payload.get("key") or "") if payload.get("kind") == "event" else ""


def slack_env(slack: FakeSlack) -> dict[str, str]:
    """The bot's environment for the fake: tokens, its URL, no proxy in between."""
    return {
        "THELOOP_SLACK_BOT_TOKEN": BOT_TOKEN,
        "THELOOP_SLACK_APP_TOKEN": APP_TOKEN,
        "THELOOP_SLACK_API_URL": slack.url,
        "THELOOP_WEBHOOK_SECRET": SECRET,
        "THELOOP_ADMINS": "U0ALICE01",
        **{name: "" for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")},
    }
