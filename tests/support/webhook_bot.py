"""The bot's webhook function on loopback, for the stdlib sender's tests.

A few lines of ``http.server`` around the bot's own ``looproom.inbound.webhook.handle`` and
``DurableQueue``, so a sender is checked against the real contract, not a copy of it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from looproom.durable.queue import DurableQueue
from looproom.events import Event
from looproom.inbound.webhook import Request, handle

SECRET = "s3cret-for-tests-0123456789abcdef"


class Bot:
    """The webhook on loopback: ``script`` holds canned ``(status, headers)`` answers first."""

    def __init__(self, inbox: DurableQueue) -> None:
        self.inbox = inbox
        self.script: list[tuple[int, dict[str, str]]] = []
        self.requests: list[dict[str, str]] = []
        bot = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                bot.requests.append(dict(self.headers.items()))
                if bot.script:
                    status, headers = bot.script.pop(0)
                    self._answer(status, {"error": "scripted"}, headers)
                    return
                request = Request("POST", dict(self.headers.items()), body, length)
                answer = handle(request, secret=SECRET, inbox=bot.inbox)
                self._answer(answer.status, answer.body, {})

            def _answer(self, status: int, body: dict, headers: dict[str, str]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/theloop/events"

    def events(self) -> list[Event]:
        return [Event.from_wire(json.loads(item.payload)) for item in self.inbox.list()]


@contextmanager
def serving(tmp_path: Path) -> Iterator[Bot]:
    """A :class:`Bot` over a fresh inbox in ``tmp_path``, serving until the block ends."""
    inbox = DurableQueue(tmp_path / "queues.sqlite", "inbox")
    bot = Bot(inbox)
    thread = threading.Thread(target=bot.server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield bot
    finally:
        bot.server.shutdown()
        bot.server.server_close()
        thread.join()
        inbox.close()
