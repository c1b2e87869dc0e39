"""Reading what people say and press, before the desk judges it.

A typed message arrives as the chat backend's text and, on Slack, Slack's own event. Here
it becomes one :class:`~looproom.decide.judging.Received`: Slack's raw text where the backend
made a mention a name, a bot's message marked as one, a direct message naming a work item
taken as about it, and a thread message claimed once (live or by the catch-up) before the
desk sees it. ``@theloop help`` and a kickoff are answered here and go no further.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from looproom.attach import slack_files
from looproom.catchup.catchup import TOP
from looproom.catchup.cursors import Cursors
from looproom.catchup.listen_modes import ListenAll
from looproom.decide import talk
from looproom.decide.desk import Desk, Taken, ThreadLines
from looproom.decide.judging import Received, Where
from looproom.decide.policies import Policies
from looproom.from_slack import room_help
from looproom.from_slack.channel_roles import Places
from looproom.from_slack.menu_desk import MenuDesk
from looproom.slack.names import Names
from looproom.slack.transport import SlackTransport

#: A member mentioned in a message, as Slack writes it.
_MENTIONED = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


class Kickoffs(Protocol):
    """What the listener hands a new work item to (``looproom.kickoff.opener.Opener``):
    the kickoff sits above the desk, so the listener names only what it asks of it."""

    def message(self, member: str, text: str, channel: str, ts: str, thread_ts: str) -> bool:
        """Whether a message was a kickoff (then taken, and the desk never sees it)."""
        ...

    def picked(self, payload: Mapping[str, Any], taken: Taken) -> bool:
        """Whether a press was the kickoff's repository picker (then taken: ``taken`` is
        told once it is stored, before Slack is called)."""
        ...


#: A press as the desk should read it (``looproom.attention.side.AttentionSide.pressed``).
DirectPress = Callable[[Mapping[str, Any]], "Mapping[str, Any] | None"]


class Listener:
    """Every message and press of one activation, read and handed on once."""

    def __init__(
        self,
        desk: Desk,
        menu_desk: MenuDesk,
        places: Places,
        policies: Policies,
        *,
        bot_member: Callable[[], str],
        listen_all: ListenAll,
        opener: Kickoffs | None = None,
        direct_press: DirectPress = lambda payload: payload,
    ) -> None:
        """``direct_press``: a press in an ask's direct message as the press on the ask
        (``looproom.attention.side``), None when it was a claim, nothing more to read."""
        self._desk, self._menus, self._places, self._policies = desk, menu_desk, places, policies
        self._bot_member, self._listen_all, self._opener = bot_member, listen_all, opener
        self._direct_press = direct_press

    @property
    def _cursors(self) -> Cursors:
        return self._desk.cursors

    def said(
        self, member: str, text: str, event: Mapping[str, Any], *, elsewhere: str, addressed: bool
    ) -> None:
        """A typed message. ``event`` is Slack's message event ({} on another backend);
        ``elsewhere`` is where to answer when there is no Slack channel (a plain backend)."""
        channel = str(event.get("channel") or "") or elsewhere
        ts = str(event.get("ts") or "") or f"plain-{time.time_ns()}"
        thread_ts = str(event.get("thread_ts") or "")
        if thread_ts == ts:
            # A thread's parent read back from the room's history carries its own ts as
            # ``thread_ts``: it is the top-level message it was when said, claimed as one.
            thread_ts = ""
        if self._read_before(event, channel, thread_ts):
            return  # a top-level message read already, live or by the catch-up
        try:
            self._handled(member, text, event, channel, ts, thread_ts, addressed)
        except Exception:
            # Not stored (the store down, a bug): its claim is given back, so the catch-up
            # reads it again rather than it being passed over as read.
            self._cursors.release(channel, thread_ts or TOP, ts)
            raise

    def _handled(
        self,
        member: str,
        text: str,
        event: Mapping[str, Any],
        channel: str,
        ts: str,
        thread_ts: str,
        addressed: bool,
    ) -> None:
        """A message not read before: help, a kickoff, or judged by the desk."""
        if self._help(member, event, channel, ts, thread_ts):
            return
        if self._kickoff(member, event, channel, thread_ts):
            return
        # Slack's own text keeps a mention as ``<@U…>``; the backend's has made it a name.
        raw = talk.without_signature(str(event.get("text") or ""))
        if raw and not addressed:
            text = raw
        text = talk.without_signature(text)
        named = talk.named_work_item(text) if talk.is_direct(channel) else ""
        attached = slack_files.kept(event.get("files") or [])
        said = Received(
            member,
            text.strip(),
            channel,
            ts,
            thread_ts,
            is_bot=bool(event.get("bot_id")) or event.get("subtype") == "bot_message",
            addressed=addressed,
            subtype=str(event.get("subtype") or ""),
            # In a 1:1 DM the only other one there is the bot: every message is to it, as
            # in the-loop's room (a group DM is a room: a mention, or listen all).
            to_bot=talk.mentions(raw or text, self._bot_member())
            or talk.is_direct(channel)
            or self._listen_all.hears_all(channel),
            files=slack_files.record(attached),
            attached=attached,
        )
        where = self._desk.where(channel, thread_ts, *self._places.facts(channel))
        if named and not where.work_item:
            where = Where(named, where.repository)
        if where.thread_bound and not self._cursors.claim(channel, thread_ts, ts):
            return  # read already, live or by the catch-up
        self._desk.said(said, where)

    def missed(self, message: Mapping[str, Any]) -> None:
        """A message the catch-up found: through the same pipeline as a live one."""
        member = str(message.get("user") or message.get("bot_id") or "")
        self.said(member, str(message.get("text") or ""), message, elsewhere="", addressed=False)

    def pressed(self, payload: Mapping[str, Any], taken: Taken = lambda: None) -> None:
        """A press, a shortcut or a submitted form (its signature already checked);
        ``taken`` is told as soon as a press is stored, before the room is answered."""
        if self._opener is not None and self._opener.picked(payload, taken):
            return
        read = self._direct_press(payload)
        if read is None:
            taken()
            return
        payload = read
        if not self._menus.interactive(payload, taken):
            self._desk.pressed(payload, taken)

    def _help(
        self, member: str, event: Mapping[str, Any], channel: str, ts: str, thread_ts: str
    ) -> bool:
        """``@theloop help [public]``: this room's grammar — to the asker, or to the thread."""
        wanted = room_help.asked(str(event.get("text") or ""), self._bot_member())
        if not wanted or event.get("bot_id") or event.get("subtype"):
            return False
        where = self._desk.where(channel, thread_ts, *self._places.facts(channel))
        if where.thread_bound and not self._cursors.claim(channel, thread_ts, ts):
            return True  # answered already, live or by the catch-up
        kickoff = self._places.kickoff_for(channel)
        room = room_help.AskedIn(
            where.work_item, where.thread_bound, where.repository, kickoff.repos if kickoff else ()
        )
        text = room_help.text(room, self._policies.now().on(where.work_item))
        if wanted == "public":
            self._desk.room.reply(channel, thread_ts or ts, text)
        else:
            self._desk.room.tell(channel, member, text, thread_ts)
        return True

    def _read_before(self, event: Mapping[str, Any], channel: str, thread_ts: str) -> bool:
        """Claim a top-level message in a room (the catch-up reads rooms too); True when
        it was claimed before. Threads are claimed once their work item is known."""
        ts = str(event.get("ts") or "")
        if not ts or thread_ts or talk.is_direct(channel):
            return False
        return not self._cursors.claim(channel, TOP, ts)

    def _kickoff(self, member: str, event: Mapping[str, Any], channel: str, thread_ts: str) -> bool:
        """Whether a message was a kickoff (then the opener took it, not the desk)."""
        subtype = str(event.get("subtype") or "")
        if self._opener is None or event.get("bot_id") or subtype not in ("", "file_share"):
            return False
        raw = str(event.get("text") or "")  # Slack's own, mentions as <@U…>
        # The issue names what was attached, as the-loop's does: names and permalinks,
        # nothing fetched (no session reads a path yet).
        named = slack_files.record(slack_files.kept(event.get("files") or []))
        ts = str(event.get("ts") or "")
        return self._opener.message(member, raw, channel, ts, thread_ts, files=named)


def thread_lines(slack: SlackTransport | None, bot_member: Callable[[], str]) -> ThreadLines:
    """How ``record-context`` reads a thread: every reply in it, the bot's own lines (the
    question being discussed among them) and other apps' too, oldest first, each person
    and each person mentioned named as people know them; ``None`` when Slack cannot say,
    and always without Slack (a plain backend has no threads)."""
    names = Names(slack) if slack is not None else None

    def read(channel: str, thread: str) -> list[talk.ThreadMessage] | None:
        messages = slack.thread(channel, thread) if slack is not None else None
        if messages is None or names is None:
            return None
        own = bot_member()

        def name(member: str) -> str:
            return talk.OWN_NAME if member == own else names.name(member)

        def line(message: Mapping[str, Any]) -> talk.ThreadMessage:
            member = str(message.get("user") or "")
            who = name(member) if member else str(message.get("username") or "an app")
            text = _MENTIONED.sub(lambda m: "@" + name(m.group(1)), str(message.get("text") or ""))
            return talk.ThreadMessage(str(message.get("ts")), member, text + _pins(message), who)

        return [line(m) for m in messages]

    return read


def _pins(message: Mapping[str, Any]) -> str:
    """A file in a recorded thread is named and linked, never fetched: `` 📎 name (link)``."""
    files = message.get("files")
    said = ""
    for attached in files if isinstance(files, list) else ():
        if isinstance(attached, Mapping):
            name = slack_files.safe_name(str(attached.get("name") or attached.get("title") or ""))
            link = str(attached.get("permalink") or "")
            said += f" 📎 {name}" + (f" ({link})" if link else "")
    return said
