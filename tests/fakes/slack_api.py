"""A loopback fake of Slack's Web API and Socket Mode, for tests and benches.

It behaves like Slack where the bot relies on it: Bearer-token auth, JSON and form bodies
as slack_sdk sends them, ``ok:false`` answers for bad payloads and unknown channels, the
limits Slack enforces (3000-char section, 150-char header, 50 blocks, 40 000-char text),
message ``metadata`` returned only with ``include_all_metadata``, threads, history and
pagination. Every call is recorded. Faults can be scripted per method: 429 with
``Retry-After``, a 5xx, an ``ok:false`` error, a dropped connection, a call that lands
and then answers 500, or refusing connections altogether.

Socket Mode: ``apps.connections.open`` (app token) answers a ``ws://`` URL on the same
port; the websocket says ``hello`` on connect (SlackV3 activates plugins on it), answers
pings, and :meth:`FakeSlack.push_envelope` delivers an envelope and waits for the ack.
With ``echo_posts`` set, each message the bot posts comes back as Slack sends it, a
``message`` event to one connected client, taking turns as Slack splits an app's events
across its connections.

Speed and limits, for the benches, the soak and the tests of many rooms: ``latency`` is how
long each Web API call takes to answer (a real round trip is about 150 ms); ``limits`` holds
Slack's per-method limits across the workspace, or per channel (:class:`Limit`, e.g. tier 3
for ``chat.update``, one a second per channel for ``chat.postMessage``): a call over its
budget is answered 429 with the ``Retry-After`` Slack would send. Each recorded
:class:`Call` says which scripted fault or limit answered it, and what it did in the
workspace whatever it answered (a ``land_then_5xx`` post landed); :meth:`FakeSlack.drop_sockets`
closes the Socket Mode connections as Slack does when it recycles them.

Files: :meth:`FakeSlack.add_file` keeps a file as Slack does and returns the file object a
message event carries; its private URL (under ``/files-pri/``) answers only the bot token,
``redirect`` makes it answer a 302 instead, and every download is recorded.

A room's topic and members (``add_channel(topic=…, members=…)``) are what
``conversations.info`` and ``conversations.members`` answer.

App Home: ``views.publish`` keeps each member's Home tab (``homes``, the last view
published; ``home_tab=False`` answers ``not_enabled`` as Slack does for an app whose Home
tab is off), refusing what Slack refuses: a view that is not ``type: home``, more than
:data:`HOME_BLOCK_LIMIT` blocks, invalid blocks, a view over 250 kB, a stale ``hash``.
:meth:`FakeSlack.home_opened` is the ``app_home_opened`` event a member opening it sends;
:data:`TIER_4` is the method's limit, for a test that wants it.

``history_page_limit`` cuts the pages of ``conversations.history``/``replies`` short (15 for
an app distributed outside the Marketplace, with :data:`OUTSIDE_MARKETPLACE` its limit), and
``clock`` is the clock its limits are kept by (a test's own, to count calls against it).

For the doctor: ``scopes`` is what ``auth.test`` says the token was granted; ``page_limit``
cuts every listing's pages short; a private room (``add_channel(private=True)``) is listed
by ``conversations.list`` only while the bot is in it, and ``listed=False`` hides a room
from that listing altogether, while ``users.conversations`` lists every room the bot is in.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import math
import socket
import struct
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from tests.fakes.loopback import LoopbackHandler, LoopbackHTTP, flat

BOT_TOKEN = "xoxb-fake-bot-token"
APP_TOKEN = "xapp-fake-app-token"
BOT_USER = "U0THELOOP"
BOT_ID = "B0THELOOP"
APP_ID = "A0THELOOP"
TEAM_ID = "T0FAKE"
#: Modern granular bot scopes (SlackV3 picks the Events API / Socket Mode, not RTM): what an
#: app created from slack-app-manifest.yaml is granted. A test may grant fewer (``scopes``).
SCOPES = (
    "channels:history,channels:read,chat:write,commands,files:read,groups:history,groups:read,"
    "im:history,im:read,im:write,mpim:history,mpim:read,reactions:read,reactions:write,"
    "team:read,users:read"
)

#: Where a file's private URL (and its captions) live on the fake, as on files.slack.com.
FILES_PATH = "/files-pri/"
SECTION_LIMIT, HEADER_LIMIT, BLOCK_LIMIT, TEXT_LIMIT = 3000, 150, 50, 40_000
#: A Home tab's view: at most 100 blocks (a message's 50 is :data:`BLOCK_LIMIT`), 250 kB in
#: all, 3000 characters of private metadata, a callback id of 255.
HOME_BLOCK_LIMIT, VIEW_BYTES, METADATA_LIMIT, CALLBACK_LIMIT = 100, 250_000, 3000, 255
_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_KNOWN_BLOCKS = frozenset(
    {"section", "context", "actions", "header", "divider", "image", "input", "rich_text"}
)


@dataclass
class Call:
    """One request the fake received, and what it answered."""

    method: str
    args: dict[str, Any]
    token: str
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)
    #: When it was answered, by the fake's ``clock`` (benches; a test's own clock).
    at: float = field(default_factory=time.monotonic)
    #: The scripted fault that answered it (its kind), ``"limit"`` when the fake's own
    #: :class:`Limit` refused it, ``""`` when neither did.
    fault: str = ""
    #: What the call did, as the method would have answered it (``{}``: it never ran),
    #: whatever the caller was told: a ``land_then_5xx`` post landed, answered 500.
    effect: dict[str, Any] = field(default_factory=dict)

    @property
    def landed(self) -> bool:
        """Whether the call took effect (a message posted, edited…)."""
        return bool(self.effect.get("ok"))


@dataclass
class Fault:
    """A scripted failure for ``times`` matching calls (``method="*"`` matches every call)."""

    method: str
    #: "429" | "5xx" | "ok_false" | "disconnect" | "land_then_5xx" | "land_then_hang" (the
    #: call lands, the answer waits for :meth:`FakeSlack.release`: the caller dies waiting)
    #: | "hang" (the same, but the call never lands: the connection drops on release)
    kind: str
    times: int = 1
    retry_after: int = 1
    error: str = "internal_error"
    status: int = 500
    #: Only calls whose metadata carries this event key (``""``: any call of the method).
    key: str = ""
    #: Not scripted: the fake's own :class:`Limit` answered this 429.
    limit: bool = False


@dataclass(frozen=True)
class Limit:
    """Slack's limit on one method, workspace-wide: ``per_minute`` on average, ``burst`` at once;
    ``per_channel``: one budget per channel instead (``chat.postMessage``'s about one a second)."""

    per_minute: float
    burst: float
    per_channel: bool = False


#: Slack's tier 3 (``chat.update``, ``reactions.add``, ``conversations.*``): 50+ a minute.
TIER_3 = Limit(per_minute=50, burst=10)
#: Slack's tier 4 (``views.publish``, ``views.open``, ``chat.postEphemeral``): 100+ a minute.
TIER_4 = Limit(per_minute=100, burst=20)
#: ``conversations.history``/``replies`` for an app distributed outside the Marketplace:
#: one call a minute, and pages of at most 15 messages (``history_page_limit``).
OUTSIDE_MARKETPLACE, OUTSIDE_MARKETPLACE_PAGE = Limit(per_minute=1, burst=1), 15


class _Handler(LoopbackHandler):
    """The Web API under ``/api/``; ``GET /socket-mode`` upgrades to the websocket."""

    def do_GET(self) -> None:
        if self.path.startswith("/socket-mode"):
            _serve_websocket(self.fake, self)
        elif self.path.startswith(FILES_PATH):
            self._file()
        else:
            self.serve()

    def _file(self) -> None:
        token = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        status, headers, body = self.fake.download(urlsplit(self.path).path, token)
        self.send_response(status)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def serve(self) -> None:
        parts = urlsplit(self.path)
        if not parts.path.startswith("/api/"):
            self.send_error(404)
            return
        method = parts.path[len("/api/") :]
        args: dict[str, Any] = {**flat(parts.query), **self._body()}
        token = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if self.fake.latency > 0:  # the round trip to Slack and back, before it answers
            time.sleep(self.fake.latency)
        status, headers, body = self.fake.handle(method, args, token)
        if status == 0:
            self.hang_up()
        else:
            self.send_json(status, headers, body)

    def _body(self) -> dict[str, Any]:
        """JSON or form, as slack_sdk sends them."""
        raw = self.raw_body()
        if not raw:
            return {}
        if "json" in self.headers.get("Content-Type", ""):
            parsed = json.loads(raw)
            return parsed if isinstance(parsed, dict) else {}
        return flat(raw.decode())


class FakeSlack(LoopbackHTTP):
    """The fake workspace: channels, users, messages, and an HTTP + websocket server."""

    handler = _Handler

    def __init__(
        self,
        *,
        channels: Iterable[tuple[str, str]] = (("C0LOOP0001", "the-loop"),),
        users: Iterable[tuple[str, str]] = (("U0ALICE01", "alice"), ("U0BOB0001", "bob")),
        host: str = "127.0.0.1",
        latency: float = 0.0,
        limits: Mapping[str, Limit] | None = None,
    ) -> None:
        super().__init__(host)
        self.latency = latency
        self.limits = dict(limits or {})
        self._budget: dict[str, tuple[float, float]] = {}  # method -> (tokens, at)
        self.calls: list[Call] = []
        self.channels: dict[str, dict[str, Any]] = {}
        self.users = {BOT_USER: "theloop", **dict(users)}
        self.faults: list[Fault] = []
        self.scopes = SCOPES
        #: Each member's time zone as ``users.info`` tells it: (name, offset in seconds).
        self.time_zones: dict[str, tuple[str, int]] = {}
        self.page_limit = 1000
        #: The most messages a page of conversations.history/replies carries, whatever asked.
        self.history_page_limit = 1000
        #: The clock ``limits`` are kept by (a test's own, to count calls against it).
        self.clock: Callable[[], float] = time.monotonic
        self.echo_posts = False
        self._turn = itertools.count()
        self.envelope_acks: dict[str, dict[str, Any]] = {}
        self._sockets: list[_WebSocket] = []
        self._ts = itertools.count(1)
        self._last = 0.0
        self.triggers: set[str] = set()  # trigger ids handed out with interactive payloads
        self.views: list[dict[str, Any]] = []  # the forms opened, as opened
        #: Each member's Home tab as last published; every view published, in order.
        self.homes: dict[str, dict[str, Any]] = {}
        self.published: list[tuple[str, dict[str, Any]]] = []
        self.home_tab = True  # the app's Home tab is on (App Home → Show Tabs)
        self._released = threading.Event()
        self.stored_files: dict[str, tuple[str, bytes]] = {}  # path → (type, body)
        self.redirects: dict[str, str] = {}  # path → where it answers a 302 to
        self.downloads: list[tuple[str, str]] = []  # (path, token) of each download
        #: Each file's successive ``files.info`` answers (the last one is kept answering).
        self.file_objects: dict[str, list[dict[str, Any]]] = {}
        for channel_id, name in channels:
            self.add_channel(name, channel_id)

    # -- lifecycle -------------------------------------------------------------------

    def refuse(self) -> None:
        """Stop listening: new connections are refused until :meth:`start` again (on the
        same port); connected websockets stay open."""
        super().stop()

    def stop(self) -> None:
        """Stop listening and close every websocket."""
        self.refuse()
        for ws in list(self._sockets):
            ws.close()

    @property
    def url(self) -> str:
        """The Web API base URL, as a ``WebClient(base_url=…)`` wants it."""
        return f"{super().url}/api/"

    # -- the workspace -----------------------------------------------------------------

    def add_channel(
        self,
        name: str,
        channel_id: str = "",
        *,
        member: bool = True,
        private: bool = False,
        listed: bool = True,
        group_dm: bool = False,
        topic: str = "",
        members: Iterable[str] = (),
    ) -> str:
        """A channel the bot is (or is not) a member of; returns its id. ``group_dm``: a
        group DM (Slack's ``mpim``: private, ``G…``, never in a channel listing).
        ``topic`` and ``members`` (member ids besides the bot's) are what
        ``conversations.info`` and ``conversations.members`` say of it."""
        channel_id = channel_id or ("G" if group_dm else "C") + uuid.uuid4().hex[:9].upper()
        self.channels[channel_id] = {
            "name": name,
            "member": member,
            "private": private or group_dm,
            "listed": listed and not group_dm,
            "group_dm": group_dm,
            "messages": [],
            "topic": topic,
            "members": [*([BOT_USER] if member else []), *members],
        }
        return channel_id

    def channel_id(self, room: str) -> str:
        """The id for a name (``#`` optional) or id; ``""`` when there is none."""
        if room in self.channels:
            return room
        name = room.lstrip("#")
        return next((cid for cid, ch in self.channels.items() if ch["name"] == name), "")

    def messages(self, room: str) -> list[dict[str, Any]]:
        """Every message in ``room``, oldest first, threads included (a copy)."""
        with self._changed:
            return [dict(m) for m in self.channels[self.channel_id(room)]["messages"]]

    def top_level(self, room: str) -> list[dict[str, Any]]:
        """The channel's own messages (thread parents and unthreaded ones), oldest first."""
        return [m for m in self.messages(room) if m.get("thread_ts", m["ts"]) == m["ts"]]

    def thread(self, room: str, ts: str) -> list[dict[str, Any]]:
        """The replies under the message at ``ts``, oldest first (the parent excluded)."""
        return [m for m in self.messages(room) if m.get("thread_ts") == ts and m["ts"] != ts]

    def say(
        self,
        room: str,
        member: str,
        text: str,
        *,
        thread_ts: str = "",
        files: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """A member posts ``text`` in ``room`` (in the thread under ``thread_ts``), kept as
        Slack keeps it. Returns the message event Slack would send the bot (with its
        ``channel``): :meth:`push_envelope` it as ``{"type": "event_callback", "event": …}``."""
        with self._changed:
            channel_id = self.channel_id(room)
            if not channel_id:
                raise KeyError(f"no channel {room!r} in the fake workspace")
            message: dict[str, Any] = {
                "type": "message",
                "user": member,
                "text": text,
                "ts": self._next_ts(),
            }
            messages = self.channels[channel_id]["messages"]
            if thread_ts:
                message["thread_ts"] = thread_ts
                _count_reply(messages, thread_ts, message["ts"])
            if files:  # as Slack sends a message someone attached files to
                message.update(subtype="file_share", upload=True, files=files)
            messages.append(message)
            self._changed.notify_all()
            kind = self.channels[channel_id]
            kind = "mpim" if kind["group_dm"] else "group" if kind["private"] else "channel"
        return {**message, "channel": channel_id, "channel_type": kind}

    def add_file(
        self, name: str, body: bytes, mimetype: str, *, transcript: str = "", processing: int = 0
    ) -> dict[str, Any]:
        """A file someone uploaded; the file object Slack puts in the message's ``files``.
        ``transcript``: a voice clip, with Slack's transcription complete (a preview, and
        the whole text as WebVTT captions behind the private URL ``vtt``) — or, with
        ``processing``, still in progress in the message and for that many ``files.info``
        reads after it."""
        file_id = "F" + uuid.uuid4().hex[:9].upper()
        path = f"{FILES_PATH}{TEAM_ID}-{file_id}/{quote(name)}"
        with self._changed:
            self.stored_files[path] = (mimetype, body)
        found: dict[str, Any] = {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "size": len(body),
            "url_private": f"{super().url}{path}",
            "url_private_download": f"{super().url}{path}?download=1",
            "permalink": f"https://fake.slack.com/files/U0ALICE01/{file_id}/{name}",
        }
        if transcript:
            captions = f"WEBVTT\n\n1\n00:00:00.000 --> 00:00:02.000\n{transcript}\n"
            vtt = f"{FILES_PATH}{TEAM_ID}-{file_id}/file.vtt"
            with self._changed:
                self.stored_files[vtt] = ("text/vtt", captions.encode())
            found.update(
                subtype="slack_audio",
                vtt=f"{super().url}{vtt}",
                transcription={
                    "status": "complete",
                    "preview": {"content": transcript[:20], "has_more": len(transcript) > 20},
                },
            )
        with self._changed:
            self.file_objects[file_id] = [dict(found)]
            if processing:
                pending = {**found, "transcription": {"status": "processing"}}
                pending.pop("vtt", None)
                self.file_objects[file_id] = [pending] * processing + [dict(found)]
                return dict(pending)
        return found

    def download(self, path: str, token: str) -> tuple[int, dict[str, str], bytes]:
        """A file's private URL, as Slack answers it: the bytes for the bot token only."""
        with self._changed:
            self.downloads.append((path, token))
            self._changed.notify_all()
            if path in self.redirects:
                return 302, {"Location": self.redirects[path]}, b""
            if path not in self.stored_files or token != BOT_TOKEN:
                return 404, {"Content-Type": "text/plain"}, b"not found"
            mimetype, body = self.stored_files[path]
        return 200, {"Content-Type": mimetype}, body

    def calls_to(self, method: str) -> list[Call]:
        """The recorded calls of one method, in order."""
        with self._changed:
            return [call for call in self.calls if call.method == method]

    def fail(self, method: str, kind: str, **options: Any) -> None:
        """Script a fault for the next matching call(s); see :class:`Fault`."""
        with self._changed:
            self.faults.append(Fault(method, kind, **options))

    # -- Socket Mode -------------------------------------------------------------------

    def push_envelope(
        self, payload: dict[str, Any], *, kind: str = "events_api", timeout: float = 10.0
    ) -> dict[str, Any] | None:
        """Send an envelope to one connected client — the open connections in turn, as
        Slack spreads an app's envelopes — and return its ack (None: no ack in time)."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": payload,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": 0,
            "retry_reason": "",
        }
        if not self.wait_for(lambda: any(ws.open for ws in self._sockets), timeout):
            return None
        with self._changed:
            open_sockets = [ws for ws in self._sockets if ws.open]
        if not open_sockets:
            return None
        open_sockets[next(self._turn) % len(open_sockets)].send_text(json.dumps(envelope))
        self.wait_for(lambda: envelope_id in self.envelope_acks, timeout)
        return self.envelope_acks.get(envelope_id)

    def home_opened(self, member: str, *, tab: str = "home") -> dict[str, Any]:
        """The ``app_home_opened`` event Slack sends when ``member`` opens the app's Home
        tab (``tab="messages"``: its Messages tab), to :meth:`push_envelope`."""
        with self._changed:
            event = {
                "type": "app_home_opened",
                "user": member,
                "channel": "D" + member[1:10],
                "tab": tab,
                "event_ts": self._next_ts(),
            }
            if member in self.homes:  # Slack sends the view the member was shown, if any
                event["view"] = dict(self.homes[member])
        return {"type": "event_callback", "team_id": TEAM_ID, "event": event}

    def home_of(self, member: str) -> dict[str, Any]:
        """``member``'s Home tab as last published (``{}``: none yet)."""
        with self._changed:
            return dict(self.homes.get(member, {}))

    def trigger(self) -> str:
        """A fresh trigger id, as Slack puts in a shortcut's or a press's payload."""
        with self._changed:
            trigger = f"{next(self._ts)}.{uuid.uuid4().hex[:8]}"
            self.triggers.add(trigger)
            return trigger

    def drop_sockets(self) -> int:
        """Close every Socket Mode connection, as Slack does when it recycles one (the
        client connects again); how many were open."""
        with self._changed:
            open_sockets = [ws for ws in self._sockets if ws.open]
        for ws in open_sockets:
            ws.close()
        return len(open_sockets)

    def socket_connected(self, count: int = 1) -> bool:
        """Whether at least ``count`` Socket Mode clients are connected now."""
        return sum(1 for ws in self._sockets if ws.open) >= count

    def later(self, seconds: float) -> None:
        """The next message's ``ts`` is at least ``seconds`` from now, as if that long
        passed: what was said before is that much older (no test sleeps for it)."""
        with self._changed:
            self._last = max(self._last, time.time() + seconds)

    # -- dispatch (called from the server's threads) -----------------------------------------

    def _next_ts(self) -> str:
        """Unique and increasing, and near the wall clock as Slack's are: a reader may
        look back a bounded time from now."""
        with self._changed:
            self._last = max(time.time(), self._last + 0.000001)
            return f"{self._last:.6f}"

    def _take_fault(self, method: str, args: dict[str, Any]) -> Fault | None:
        key = ((decoded(args.get("metadata")) or {}).get("event_payload") or {}).get("key")
        for fault in self.faults:
            wanted = fault.method in (method, "*") and fault.key in ("", key)
            if wanted and fault.times > 0:
                fault.times -= 1
                return fault
        return None

    def _over_limit(self, method: str, args: dict[str, Any]) -> Fault | None:
        """A 429 when ``method`` spent its budget (a token bucket per method, or per method
        and channel), else None."""
        limit = self.limits.get(method)
        if limit is None:
            return None
        bucket = f"{method} {args.get('channel', '')}" if limit.per_channel else method
        now, rate = self.clock(), limit.per_minute / 60.0
        tokens, at = self._budget.get(bucket, (limit.burst, now))
        tokens = min(limit.burst, tokens + (now - at) * rate)
        if tokens < 1.0 - 1e-9:  # a caller keeping the same clock is not refused for rounding
            self._budget[bucket] = (tokens, now)
            after = math.ceil((1.0 - tokens) / rate)
            return Fault(method, "429", retry_after=after, limit=True)
        self._budget[bucket] = (tokens - 1.0, now)
        return None

    def release(self) -> None:
        """Let every call held by a ``land_then_hang`` or ``hang`` fault answer."""
        self._released.set()

    def handle(self, method: str, args: dict[str, Any], token: str) -> tuple[int, dict, dict]:
        """Answer one API call: ``(status, headers, body)``; records it."""
        with self._changed:
            fault = self._take_fault(method, args) or self._over_limit(method, args)
            status, headers, body, effect = self._answer(method, args, token, fault)
            why = "" if fault is None else "limit" if fault.limit else fault.kind
            call = Call(
                method, args, token, status, body, at=self.clock(), fault=why, effect=effect
            )
            self.calls.append(call)
            self._changed.notify_all()
        if fault is not None and fault.kind in ("land_then_hang", "hang"):
            self._released.wait(60.0)
        if method == "chat.postMessage" and body.get("ok") and self.echo_posts:
            self._echo(body)
        return status, headers, body

    def _echo(self, posted: dict[str, Any]) -> None:
        """The posted message as the ``message`` event Slack sends one of the app's
        connections (in turn, as Slack spreads an app's events)."""
        event = {**posted["message"], "channel": posted["channel"]}
        envelope = {
            "envelope_id": str(uuid.uuid4()),
            "type": "events_api",
            "payload": {"type": "event_callback", "event": event},
            "accepts_response_payload": False,
            "retry_attempt": 0,
            "retry_reason": "",
        }
        with self._changed:
            open_sockets = [ws for ws in self._sockets if ws.open]
        if open_sockets:
            open_sockets[next(self._turn) % len(open_sockets)].send_text(json.dumps(envelope))

    def _answer(self, method: str, args: dict, token: str, fault: Fault | None) -> tuple:
        """``(status, headers, body, effect)``: the answer, and what the call did."""
        if fault is not None and fault.kind in ("disconnect", "hang"):
            return 0, {}, {}, {}
        if fault is not None and fault.kind == "429":
            return (
                429,
                {"Retry-After": str(fault.retry_after)},
                {"ok": False, "error": "ratelimited"},
                {},
            )
        if fault is not None and fault.kind == "5xx":
            return fault.status, {}, {"ok": False, "error": "internal_error"}, {}
        if fault is not None and fault.kind == "ok_false":
            return 200, {}, {"ok": False, "error": fault.error}, {}
        body = _api(self, method, args, token)
        if fault is not None and fault.kind == "land_then_5xx":
            return fault.status, {}, {"ok": False, "error": "internal_error"}, body
        headers = {"x-oauth-scopes": self.scopes} if method == "auth.test" else {}
        return 200, headers, body, body


# -- the Web API methods -----------------------------------------------------------------------


def _files_info(slack: FakeSlack, args: dict) -> dict:
    answers = slack.file_objects.get(str(args.get("file", "")))
    if not answers:
        return {"ok": False, "error": "file_not_found"}
    return {"ok": True, "file": answers.pop(0) if len(answers) > 1 else answers[0]}


def _api(slack: FakeSlack, method: str, args: dict[str, Any], token: str) -> dict[str, Any]:
    wanted = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
    if not token:
        return {"ok": False, "error": "not_authed"}
    if token != wanted:
        return {
            "ok": False,
            "error": "invalid_auth" if token != BOT_TOKEN else "not_allowed_token_type",
        }
    handler = _METHODS.get(method)
    if handler is None:
        return {"ok": False, "error": "unknown_method"}
    return handler(slack, args)


def _auth_test(slack: FakeSlack, _args: dict) -> dict:
    return {
        "ok": True,
        "url": "https://fake.slack.test/",
        "team": "Fake",
        "user": "theloop",
        "team_id": TEAM_ID,
        "user_id": BOT_USER,
        "bot_id": BOT_ID,
    }


def _user(user_id: str, name: str, tz: tuple[str, int] = ("Etc/UTC", 0)) -> dict[str, Any]:
    profile = {"display_name": name, "real_name": name.title(), "email": f"{name}@fake.test"}
    return {
        "id": user_id,
        "team_id": TEAM_ID,
        "name": name,
        "real_name": name.title(),
        "is_bot": user_id == BOT_USER,
        "profile": profile,
        # Slack's: the member's own time zone, its label and its offset from UTC in seconds.
        "tz": tz[0],
        "tz_label": tz[0],
        "tz_offset": tz[1],
    }


def _users_info(slack: FakeSlack, args: dict) -> dict:
    user_id = str(args.get("user", ""))
    if user_id not in slack.users:
        return {"ok": False, "error": "user_not_found"}
    zone = slack.time_zones.get(user_id, ("Etc/UTC", 0))
    return {"ok": True, "user": _user(user_id, slack.users[user_id], zone)}


def _users_list(slack: FakeSlack, args: dict) -> dict:
    limited = {**args, "limit": min(int(args.get("limit") or 100), slack.page_limit)}
    page, cursor = _page(list(slack.users.items()), limited, default=100)
    members = [_user(uid, name) for uid, name in page]  # only the page's: a workspace of 20 000
    return {"ok": True, "members": members, "response_metadata": {"next_cursor": cursor}}


def _team_info(_slack: FakeSlack, args: dict) -> dict:
    team = {"id": args.get("team", TEAM_ID), "name": "Fake", "domain": "fake"}
    return {"ok": True, "team": team}


def _bots_info(_slack: FakeSlack, args: dict) -> dict:
    bot = {"id": args.get("bot", BOT_ID), "name": "theloop", "app_id": APP_ID, "user_id": BOT_USER}
    return {"ok": True, "bot": bot}


def _channel_object(slack: FakeSlack, channel_id: str) -> dict[str, Any]:
    channel = slack.channels[channel_id]
    return {
        "id": channel_id,
        "name": channel["name"],
        "is_channel": not channel["group_dm"],
        "is_group": channel["group_dm"],
        "is_mpim": channel["group_dm"],
        "is_private": channel["private"],
        "is_archived": False,
        "is_member": channel["member"],
        # As Slack answers: SlackV3 reads both when a member's message arrives.
        "topic": {"value": channel.get("topic", ""), "creator": "", "last_set": 0},
        "purpose": {"value": "", "creator": "", "last_set": 0},
    }


def _conversations_list(slack: FakeSlack, args: dict) -> dict:
    """The workspace's rooms: a private one only while the bot is in it; not the hidden."""
    shown = [
        cid
        for cid, ch in slack.channels.items()
        if ch["listed"] and (ch["member"] or not ch["private"])
    ]
    return _channel_page(slack, shown, args)


def _users_conversations(slack: FakeSlack, args: dict) -> dict:
    """The rooms the bot is in, public and private."""
    return _channel_page(slack, [cid for cid, ch in slack.channels.items() if ch["member"]], args)


def _channel_page(slack: FakeSlack, ids: list[str], args: dict) -> dict:
    limited = {**args, "limit": min(int(args.get("limit") or 100), slack.page_limit)}
    page, cursor = _page([_channel_object(slack, cid) for cid in ids], limited, default=100)
    return {"ok": True, "channels": page, "response_metadata": {"next_cursor": cursor}}


def _conversations_info(slack: FakeSlack, args: dict) -> dict:
    channel_id = slack.channel_id(str(args.get("channel", "")))
    if not channel_id:
        return {"ok": False, "error": "channel_not_found"}
    return {"ok": True, "channel": _channel_object(slack, channel_id)}


def _conversations_members(slack: FakeSlack, args: dict) -> dict:
    """A room's members, paged; a private room the bot is not in is not found, as in Slack."""
    channel_id = slack.channel_id(str(args.get("channel", "")))
    channel = slack.channels.get(channel_id)
    if channel is None or (channel["private"] and not channel["member"]):
        return {"ok": False, "error": "channel_not_found"}
    page, cursor = _page(list(channel.get("members", [])), args, default=100)
    return {"ok": True, "members": page, "response_metadata": {"next_cursor": cursor}}


def _conversations_open(slack: FakeSlack, args: dict) -> dict:
    """The bot's direct message with one member, as Slack opens it: ``im:write`` needed,
    the same channel each time, a member who does not exist refused."""
    if "im:write" not in slack.scopes.split(","):
        return {"ok": False, "error": "missing_scope", "needed": "im:write"}
    user = str(args.get("users") or "")
    if "," in user:
        return {"ok": False, "error": "not_enough_users"}  # a group DM: the bot opens none
    if user not in slack.users:
        return {"ok": False, "error": "user_not_found"}
    channel_id = "D" + user[1:10]
    if channel_id not in slack.channels:
        slack.add_channel(f"dm-{user}", channel_id, private=True, listed=False)
        slack.channels[channel_id]["im_user"] = user
    return {"ok": True, "channel": {"id": channel_id, "is_im": True, "user": user}}


def _page(items: list, args: dict, *, default: int) -> tuple[list, str]:
    """One page of ``items`` for Slack's ``limit``/``cursor`` (the cursor is an offset)."""
    limit = max(1, min(int(args.get("limit") or default), 1000))
    start = int(args.get("cursor") or 0)
    end = start + limit
    return items[start:end], (str(end) if end < len(items) else "")


def _shown(message: dict[str, Any], with_metadata: bool) -> dict[str, Any]:
    shown = {k: v for k, v in message.items() if k != "metadata" or with_metadata}
    return shown


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() in ("1", "true")


def _conversations_history(slack: FakeSlack, args: dict) -> dict:
    channel_id = slack.channel_id(str(args.get("channel", "")))
    if not channel_id:
        return {"ok": False, "error": "channel_not_found"}
    messages = slack.channels[channel_id]["messages"]
    top = [m for m in reversed(messages) if m.get("thread_ts", m["ts"]) == m["ts"]]
    oldest = float(args.get("oldest") or 0)  # Slack: only messages after it
    return _messages_page(
        [m for m in top if float(m["ts"]) > oldest], _capped(slack, args, 100), default=100
    )


def _conversations_replies(slack: FakeSlack, args: dict) -> dict:
    channel_id = slack.channel_id(str(args.get("channel", "")))
    if not channel_id:
        return {"ok": False, "error": "channel_not_found"}
    ts = str(args.get("ts", ""))
    messages = slack.channels[channel_id]["messages"]
    parent = [m for m in messages if m["ts"] == ts]
    if not parent:
        return {"ok": False, "error": "thread_not_found"}
    oldest = float(args.get("oldest") or 0)  # Slack: only replies after it, the parent kept
    replies = [m for m in messages if m.get("thread_ts") == ts and m["ts"] != ts]
    thread = parent + [m for m in replies if float(m["ts"]) > oldest]
    return _messages_page(thread, _capped(slack, args, 1000), default=1000)


def _capped(slack: FakeSlack, args: dict, default: int) -> dict:
    """``args`` with ``limit`` (``default`` unless asked) no more than the app's pages carry."""
    return {**args, "limit": min(int(args.get("limit") or default), slack.history_page_limit)}


def _messages_page(messages: list[dict], args: dict, *, default: int) -> dict:
    """One page of ``messages`` as history and replies answer it: ``metadata`` only
    with ``include_all_metadata``."""
    page, cursor = _page(messages, args, default=default)
    meta = _truthy(args.get("include_all_metadata"))
    return {
        "ok": True,
        "messages": [_shown(m, meta) for m in page],
        "has_more": bool(cursor),
        "response_metadata": {"next_cursor": cursor},
    }


def _post_message(slack: FakeSlack, args: dict) -> dict:
    channel_id, problem = _writable(slack, args)
    if problem:
        return problem
    problem = _content_problem(args)
    if problem:
        return problem
    message = _message(args)
    message["ts"] = slack._next_ts()
    thread_ts = str(args.get("thread_ts") or "")
    if thread_ts:
        message["thread_ts"] = thread_ts
        _count_reply(slack.channels[channel_id]["messages"], thread_ts, message["ts"])
    slack.channels[channel_id]["messages"].append(message)
    return {"ok": True, "channel": channel_id, "ts": message["ts"], "message": dict(message)}


def _count_reply(messages: list[dict], parent_ts: str, reply_ts: str) -> None:
    for message in messages:
        if message["ts"] == parent_ts:
            message["thread_ts"] = parent_ts
            message["reply_count"] = message.get("reply_count", 0) + 1
            message["latest_reply"] = reply_ts


def _update(slack: FakeSlack, args: dict) -> dict:
    channel_id = str(args.get("channel", ""))
    if channel_id not in slack.channels:  # chat.update wants an id, never a name
        return {"ok": False, "error": "channel_not_found"}
    problem = _content_problem(args)
    if problem:
        return problem
    target = next(
        (m for m in slack.channels[channel_id]["messages"] if m["ts"] == args.get("ts")), None
    )
    if target is None:
        return {"ok": False, "error": "message_not_found"}
    target.update({k: v for k, v in _message(args).items() if k not in ("ts", "thread_ts")})
    target["edited"] = {"user": BOT_USER, "ts": slack._next_ts()}
    return {"ok": True, "channel": channel_id, "ts": target["ts"], "text": target["text"]}


def _post_ephemeral(slack: FakeSlack, args: dict) -> dict:
    _channel_id, problem = _writable(slack, args)
    if problem:
        return problem
    if str(args.get("user", "")) not in slack.users:
        return {"ok": False, "error": "user_not_found"}
    problem = _content_problem(args)
    return problem or {"ok": True, "message_ts": slack._next_ts()}


def _views_open(slack: FakeSlack, args: dict) -> dict:
    """A form, as Slack opens one: a trigger is good once; the view must be a modal with a
    title of at most 24 characters and its blocks valid."""
    trigger = str(args.get("trigger_id") or "")
    if not trigger:
        return {"ok": False, "error": "invalid_arguments"}
    if trigger not in slack.triggers:
        return {"ok": False, "error": "invalid_trigger_id"}
    slack.triggers.discard(trigger)
    view = decoded(args.get("view"))
    if not isinstance(view, dict) or view.get("type") != "modal":
        return {"ok": False, "error": "invalid_arguments"}
    title = (view.get("title") or {}).get("text", "")
    errors = block_errors(view.get("blocks") or [])
    if not title or len(title) > 24 or errors or len(view.get("private_metadata") or "") > 3000:
        return {
            "ok": False,
            "error": "invalid_arguments",
            "response_metadata": {"messages": errors},
        }
    opened = {**view, "id": f"V{next(slack._ts):08d}"}
    slack.views.append(opened)
    return {"ok": True, "view": opened}


def _views_publish(slack: FakeSlack, args: dict) -> dict:
    """A member's Home tab, as Slack publishes it: the app's Home tab on, a member of the
    workspace, a ``home`` view of at most 100 valid blocks and 250 kB, and — when a
    ``hash`` is given — the hash of the view it replaces."""
    user = str(args.get("user_id") or "")
    view = decoded(args.get("view"))
    if not user or not isinstance(view, dict):
        return {"ok": False, "error": "invalid_arguments"}
    if not slack.home_tab:
        return {"ok": False, "error": "not_enabled"}
    if user not in slack.users:
        return {"ok": False, "error": "user_not_found"}
    if len(json.dumps(view).encode()) > VIEW_BYTES:
        return {"ok": False, "error": "view_too_large"}
    errors = [] if view.get("type") == "home" else ["must be home [json-pointer:/view/type]"]
    errors += block_errors(view.get("blocks") or [], HOME_BLOCK_LIMIT)
    if len(str(view.get("private_metadata") or "")) > METADATA_LIMIT:
        errors.append(
            f"must be less than {METADATA_LIMIT + 1} characters"
            " [json-pointer:/view/private_metadata]"
        )
    if len(str(view.get("callback_id") or "")) > CALLBACK_LIMIT:
        errors.append(
            f"must be less than {CALLBACK_LIMIT + 1} characters [json-pointer:/view/callback_id]"
        )
    if errors:
        return {
            "ok": False,
            "error": "invalid_arguments",
            "response_metadata": {"messages": [f"[ERROR] {e}" for e in errors]},
        }
    before = slack.homes.get(user)
    wanted = str(args.get("hash") or "")
    if wanted and before is not None and wanted != before.get("hash"):
        return {"ok": False, "error": "hash_conflict"}
    number = next(slack._ts)
    published = {
        **view,
        "id": before["id"] if before else f"VH{number:08d}",
        "team_id": TEAM_ID,
        "app_id": APP_ID,
        "bot_id": BOT_ID,
        "hash": f"{time.time():.6f}.{number}",
        "state": {"values": {}},
    }
    slack.homes[user] = published
    slack.published.append((user, published))
    return {"ok": True, "view": published}


def _reactions_add(slack: FakeSlack, args: dict) -> dict:
    channel_id = slack.channel_id(str(args.get("channel", "")))
    if not channel_id:
        return {"ok": False, "error": "channel_not_found"}
    target = next(
        (m for m in slack.channels[channel_id]["messages"] if m["ts"] == args.get("timestamp")),
        None,
    )
    if target is None:
        return {"ok": False, "error": "message_not_found"}
    names = target.setdefault("reactions", [])
    if args.get("name") in names:
        return {"ok": False, "error": "already_reacted"}
    names.append(args.get("name"))
    return {"ok": True}


def _delete(slack: FakeSlack, args: dict) -> dict:
    channel_id = str(args.get("channel", ""))
    messages = slack.channels.get(channel_id, {}).get("messages", [])
    kept = [m for m in messages if m["ts"] != args.get("ts")]
    if len(kept) == len(messages):
        return {"ok": False, "error": "message_not_found"}
    slack.channels[channel_id]["messages"] = kept
    return {"ok": True, "channel": channel_id, "ts": args.get("ts")}


def _connections_open(slack: FakeSlack, _args: dict) -> dict:
    ticket = uuid.uuid4().hex
    return {"ok": True, "url": f"ws://{slack.host}:{slack.port}/socket-mode?ticket={ticket}"}


def _writable(slack: FakeSlack, args: dict) -> tuple[str, dict | None]:
    channel_id = slack.channel_id(str(args.get("channel", "")))
    if not channel_id:
        return "", {"ok": False, "error": "channel_not_found"}
    if not slack.channels[channel_id]["member"]:
        return "", {"ok": False, "error": "not_in_channel"}
    return channel_id, None


def _message(args: dict) -> dict[str, Any]:
    message: dict[str, Any] = {
        "type": "message",
        "user": BOT_USER,
        "bot_id": BOT_ID,
        "app_id": APP_ID,
        "text": str(args.get("text") or ""),
    }
    blocks = decoded(args.get("blocks"))
    if blocks:
        message["blocks"] = blocks
    metadata = decoded(args.get("metadata"))
    if metadata:
        message["metadata"] = metadata
    return message


def decoded(value: Any) -> Any:
    """Blocks or metadata as sent: slack_sdk's form bodies carry them as JSON strings, its
    JSON bodies as objects."""
    if isinstance(value, str) and value.strip():
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _content_problem(args: dict) -> dict | None:
    text, blocks = args.get("text"), decoded(args.get("blocks"))
    if not text and not blocks:
        return {"ok": False, "error": "no_text"}
    if text is not None and len(str(text)) > TEXT_LIMIT:
        return {"ok": False, "error": "msg_too_long"}
    errors = block_errors(blocks) if blocks else []
    if errors:
        return {
            "ok": False,
            "error": "invalid_blocks",
            "errors": errors,
            "response_metadata": {"messages": [f"[ERROR] {e}" for e in errors]},
        }
    metadata = decoded(args.get("metadata"))
    if metadata is not None and not _metadata_ok(metadata):
        return {"ok": False, "error": "invalid_metadata_format"}
    return None


def _metadata_ok(metadata: Any) -> bool:
    return (
        isinstance(metadata, dict)
        and isinstance(metadata.get("event_type"), str)
        and metadata["event_type"].replace("_", "").isalnum()
        and isinstance(metadata.get("event_payload"), dict)
    )


def block_errors(blocks: Any, most: int = BLOCK_LIMIT) -> list[str]:
    """Slack's objections to ``blocks``, as its ``invalid_blocks`` answer words them;
    ``most``: a message's 50, a Home tab's 100."""
    if not isinstance(blocks, list):
        return ["blocks must be an array [json-pointer:/blocks]"]
    errors = []
    if len(blocks) > most:
        errors.append(f"no more than {most} items allowed [json-pointer:/blocks]")
    for index, block in enumerate(blocks):
        errors += _block_errors(block, f"/blocks/{index}")
    return errors


def _block_errors(block: Any, where: str) -> list[str]:
    if not isinstance(block, dict) or block.get("type") not in _KNOWN_BLOCKS:
        return [f"unsupported type [json-pointer:{where}/type]"]
    kind = block["type"]
    if kind == "section":
        errors = _text_errors(block.get("text"), f"{where}/text", SECTION_LIMIT)
        accessory = block.get("accessory")
        if accessory is not None and not (
            isinstance(accessory, dict) and accessory.get("type") == "image"
        ):
            errors += _action_element(accessory, f"{where}/accessory")
        return errors
    if kind == "header":
        return _text_errors(block.get("text"), f"{where}/text", HEADER_LIMIT, plain=True)
    if kind == "context":
        return _elements_errors(block.get("elements"), where, 10, _context_element)
    if kind == "actions":
        return _elements_errors(block.get("elements"), where, 25, _action_element)
    return []


def _text_errors(text: Any, where: str, limit: int, *, plain: bool = False) -> list[str]:
    kinds = ("plain_text",) if plain else ("plain_text", "mrkdwn")
    if not isinstance(text, dict) or text.get("type") not in kinds:
        return [f"must provide an object with a valid type [json-pointer:{where}]"]
    value = text.get("text")
    if not isinstance(value, str) or not value:
        return [f"must be at least 1 characters [json-pointer:{where}/text]"]
    if len(value) > limit:
        return [f"must be less than {limit + 1} characters [json-pointer:{where}/text]"]
    return []


def _elements_errors(elements: Any, where: str, most: int, check: Callable) -> list[str]:
    if not isinstance(elements, list) or not elements:
        return [f"must provide at least 1 item [json-pointer:{where}/elements]"]
    if len(elements) > most:
        return [f"no more than {most} items allowed [json-pointer:{where}/elements]"]
    errors: list[str] = []
    for index, element in enumerate(elements):
        errors += check(element, f"{where}/elements/{index}")
    return errors


def _context_element(element: Any, where: str) -> list[str]:
    if isinstance(element, dict) and element.get("type") == "image":
        return []
    return _text_errors(element, where, SECTION_LIMIT)


def _action_element(element: Any, where: str) -> list[str]:
    kinds = ("button", "checkboxes", "static_select")
    if not isinstance(element, dict) or element.get("type") not in kinds:
        return [f"unsupported type [json-pointer:{where}/type]"]
    if element["type"] == "static_select":
        return _select_errors(element, where)
    if element["type"] == "checkboxes":
        return _checkbox_errors(element, where)
    errors = _text_errors(element.get("text"), f"{where}/text", 75, plain=True)
    if len(str(element.get("url") or "")) > 3000:
        errors.append(f"must be less than 3001 characters [json-pointer:{where}/url]")
    if len(str(element.get("value") or "")) > 2000:
        errors.append(f"must be less than 2001 characters [json-pointer:{where}/value]")
    return errors


def _checkbox_errors(element: dict[str, Any], where: str) -> list[str]:
    """Checkboxes as Slack checks them: 1 to 10 options, each a text of at most 75
    characters (mrkdwn allowed), a description of at most 75 and a value of at most 150."""
    options = element.get("options")
    if not isinstance(options, list) or not 1 <= len(options) <= 10:
        return [f"must provide 1 to 10 options [json-pointer:{where}/options]"]
    errors = []
    for index, option in enumerate(options):
        at = f"{where}/options/{index}"
        if not isinstance(option, dict):
            errors.append(f"must be an object [json-pointer:{at}]")
            continue
        errors += _text_errors(option.get("text"), f"{at}/text", 75)
        if option.get("description") is not None:
            errors += _text_errors(option["description"], f"{at}/description", 75)
        if not option.get("value") or len(str(option["value"])) > 150:
            errors.append(f"must be 1 to 150 characters [json-pointer:{at}/value]")
    return errors


def _select_errors(element: dict[str, Any], where: str) -> list[str]:
    """A static select as Slack checks one: 1 to 100 options, each a plain text of at most
    75 characters and a value of at most 150."""
    options = element.get("options")
    if not isinstance(options, list) or not 1 <= len(options) <= 100:
        return [f"must provide 1 to 100 options [json-pointer:{where}/options]"]
    errors = []
    for index, option in enumerate(options):
        at = f"{where}/options/{index}"
        if not isinstance(option, dict):
            errors.append(f"must be an object [json-pointer:{at}]")
            continue
        errors += _text_errors(option.get("text"), f"{at}/text", 75, plain=True)
        if not option.get("value") or len(str(option["value"])) > 150:
            errors.append(f"must be 1 to 150 characters [json-pointer:{at}/value]")
    return errors


_METHODS: dict[str, Callable[[FakeSlack, dict], dict]] = {
    "auth.test": _auth_test,
    "users.info": _users_info,
    "users.list": _users_list,
    "bots.info": _bots_info,
    "team.info": _team_info,
    "conversations.list": _conversations_list,
    "users.conversations": _users_conversations,
    "conversations.info": _conversations_info,
    "conversations.open": _conversations_open,
    "conversations.members": _conversations_members,
    "conversations.history": _conversations_history,
    "conversations.replies": _conversations_replies,
    "chat.postMessage": _post_message,
    "chat.update": _update,
    "chat.postEphemeral": _post_ephemeral,
    "views.open": _views_open,
    "views.publish": _views_publish,
    "files.info": _files_info,
    "chat.delete": _delete,
    "reactions.add": _reactions_add,
    "apps.connections.open": _connections_open,
}


# -- Socket Mode's websocket (RFC 6455, the subset slack_sdk's builtin client speaks) ----------


class _WebSocket:
    """One server-side websocket: unmasked frames out, masked frames in."""

    def __init__(self, sock: socket.socket, reader: Any) -> None:
        self._sock, self._reader = sock, reader
        self._lock = threading.Lock()
        self.open = True

    def send_text(self, text: str) -> None:
        self._send(0x1, text.encode())

    def _send(self, opcode: int, payload: bytes) -> None:
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x80 | opcode, size)
        elif size < 65536:
            header = struct.pack("!BBH", 0x80 | opcode, 126, size)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 127, size)
        with self._lock:
            self._sock.sendall(header + payload)

    def receive(self) -> tuple[int, bytes]:
        """The next frame's opcode and unmasked payload; (-1, b"") at end of stream."""
        head = self._reader.read(2)
        if len(head) < 2:
            return -1, b""
        opcode, size = head[0] & 0x0F, head[1] & 0x7F
        if size == 126:
            size = struct.unpack("!H", self._reader.read(2))[0]
        elif size == 127:
            size = struct.unpack("!Q", self._reader.read(8))[0]
        mask = self._reader.read(4) if head[1] & 0x80 else b""
        data = self._reader.read(size)
        if mask:
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        return opcode, data

    def close(self) -> None:
        if self.open:
            self.open = False
            with contextlib.suppress(OSError):
                self._send(0x8, struct.pack("!H", 1000))
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_RDWR)


def _serve_websocket(slack: FakeSlack, handler: LoopbackHandler) -> None:
    key = handler.headers.get("Sec-WebSocket-Key", "")
    accept = base64.b64encode(hashlib.sha1((key + _WS_GUID).encode()).digest()).decode()
    handler.wfile.write(
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
        ).encode()
    )
    handler.wfile.flush()
    ws = _WebSocket(handler.connection, handler.rfile)
    with slack._changed:
        slack._sockets.append(ws)
        slack._changed.notify_all()
    hello = {"type": "hello", "num_connections": 1, "connection_info": {"app_id": APP_ID}}
    ws.send_text(json.dumps(hello))
    try:
        _websocket_loop(slack, ws)
    finally:
        ws.open = False
        handler.close_connection = True
        with slack._changed:
            slack._sockets.remove(ws)
            slack._changed.notify_all()


def _websocket_loop(slack: FakeSlack, ws: _WebSocket) -> None:
    while ws.open:
        try:
            opcode, data = ws.receive()
        except OSError:
            return
        if opcode in (-1, 0x8):
            ws.close()
            return
        if opcode == 0x9:  # ping -> pong, as slack_sdk's client checks the connection so
            ws._send(0xA, data)
        elif opcode == 0x1:
            _record_ack(slack, data)


def _record_ack(slack: FakeSlack, data: bytes) -> None:
    try:
        ack = json.loads(data)
    except ValueError:
        return
    if isinstance(ack, dict) and ack.get("envelope_id"):
        with slack._changed:
            # Slack keeps an envelope's first acknowledgement; later ones change nothing.
            slack.envelope_acks.setdefault(str(ack["envelope_id"]), ack)
            slack._changed.notify_all()
