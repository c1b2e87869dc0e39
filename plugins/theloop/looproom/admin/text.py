"""What theloop's own commands answer, as text: ``!theloop``, preview, status, queue, why.

Status shows the resolved configuration with secrets as set/unset only (the answer is a
chat message, which others see and keep), the queue and the last delivery error; queue
lists what is not delivered and lets an admin retry or drop one. Keys and errors come from
producers and peers, so they are defanged before display. See docs/admin.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from looproom import digest, times
from looproom.durable.queue import Failure, Item
from looproom.room.delivery_log import Why
from looproom.settings import Environment, Settings
from looproom.settings.parser import MAX_CHARS, MIN_CHARS
from looproom.slack.text import defang

ABOUT = (
    "theloop posts the-loop's events into rooms and threads and carries decisions back. "
    "Try `!theloop preview <markdown>` to see how a long message is drawn, "
    "`!theloop why <work item>` to see what the room did with its last events, "
    "`!theloop records <work item>` for what was recorded on its ticket from Slack; admins: "
    "`!theloop status`, `!theloop queue`, `!theloop doctor` (why the room may be silent)."
)
QUEUE_USAGE = "usage: !theloop queue [list | retry KEY | drop KEY]"
_LONG_MESSAGES = {
    "digest": "above maxChars: the ask first, choices numbered, code as pointers, cut at a "
    "sentence, the link for the rest",
    "truncate": "above maxChars: the first maxChars characters and a note",
}


class UsageError(ValueError):
    """The admin command's arguments do not parse; the message says how to call it."""


@dataclass(frozen=True)
class QueueCommand:
    action: str  # list | retry | drop
    key: str = ""


@dataclass(frozen=True)
class Health:
    """The live state status reports beside the configuration."""

    counts: dict[str, int]
    last_error: Failure | None
    worker_alive: bool
    bindings: int  # thread bindings kept


def preview_text(markdown: str, limit: int) -> str:
    """The mrkdwn the room would post for ``markdown``: the digest above ``limit``.

    Fenced, so every backend shows Slack's markup as it is rather than re-rendering it.
    """
    drawn = digest.fit(markdown, max(MIN_CHARS, min(limit, MAX_CHARS)))  # as maxChars allows
    return "```\n" + drawn.replace("```", "`\u200b`\u200b`") + "\n```"


def parse_queue_command(args: str) -> QueueCommand:
    """``""``/``list`` → list; ``retry KEY`` / ``drop KEY``; anything else is a UsageError."""
    words = args.split()
    if not words or words == ["list"]:
        return QueueCommand("list")
    if len(words) == 2 and words[0] in ("retry", "drop"):
        return QueueCommand(words[0], words[1])
    raise UsageError(QUEUE_USAGE)


def status_text(
    env: Environment, settings: Settings, health: Health, now: float, listening: str = ""
) -> str:
    """The answer to ``!theloop status``; ``listening`` is the HTTP server's real state."""
    lines = ["**theloop status**", *_webhook_lines(env, listening), *_queue_lines(health, now)]
    lines += ["", "**configuration** " + (settings.source or "(no file: defaults)")]
    lines += [f"- {line}" for line in _settings_lines(settings)]
    lines += [f"- warning: {defang(w)}" for w in settings.warnings]
    lines += ["", "**environment**"]
    lines += [f"- {name}: {value or '(unset)'}" for name, value in env.describe().items()]
    return "\n".join(lines)


def _webhook_lines(env: Environment, listening: str = "") -> list[str]:
    server = [f"http server: {defang(listening)}"] if listening else []
    if listening.startswith("NOT LISTENING"):
        return [*server, "webhook: POST /theloop/events — unreachable: no server listens"]
    if env.webhook_secret:
        return [*server, "webhook: POST /theloop/events — signed requests accepted"]
    return [*server, "webhook: POST /theloop/events answers 503 — set THELOOP_WEBHOOK_SECRET"]


def _queue_lines(health: Health, now: float) -> list[str]:
    counts = health.counts
    depth = sum(counts.values())
    lines = [
        f"queue: {depth} not delivered ({counts.get('pending', 0)} waiting, "
        f"{counts.get('inflight', 0)} in flight, {counts.get('parked', 0)} parked)",
        "delivery worker: " + ("running" if health.worker_alive else "STOPPED"),
        f"thread bindings: {health.bindings}",
    ]
    failure = health.last_error
    if failure is None:
        lines.append("last delivery error: none")
    else:
        lines.append(
            f"last delivery error ({_ago(now - failure.at)} ago, `{defang(failure.key)}`): "
            f"{defang(failure.error)}"
        )
    return lines


def _settings_lines(settings: Settings) -> list[str]:
    return [
        f"channel: {settings.channel or '(none)'}",
        f"subscribe: {', '.join(settings.subscribe) or '(nothing)'}",
        f"verbosity: {settings.verbosity}",
        f"maxChars: {settings.max_chars}",
        f"longMessages: {settings.long_messages} — {_LONG_MESSAGES[settings.long_messages]}",
        f"authorizedUsers: {len(settings.authorized_users)}"
        + ("" if settings.authorized_users else " (nobody may decide: fail closed)"),
        f"room style: {settings.room_style} — {_ROOM_STYLES[settings.room_style]}",
        f"rooms: {len(settings.rooms)} · people: {len(settings.people)} · "
        f"relay repos: {len(settings.relay_repos)}",
    ]


_ROOM_STYLES = {
    "agentic": "repeats, collapsed lines and operator notes are left out (`!theloop why`)",
    "classic": "every subscribed event is posted",
}
WHY_USAGE = "usage: !theloop why <work item> — e.g. `!theloop why acme/api#7`"


def why_text(asked: str, known: list[str], entries: list[Why], now: float) -> str:
    """The answer to ``!theloop why``: the last decisions for one work item, newest last."""
    if not asked.strip():
        return WHY_USAGE
    if not entries:
        near = ", ".join(f"`{defang(k)}`" for k in known[-5:]) or "none yet"
        return f"No decisions kept for `{defang(asked.strip())}`. Recent work items: {near}."
    lines = [f"What the room did with the last {len(entries)} events of `{defang(asked.strip())}`:"]
    for entry in entries:
        what = f"{entry.event_type}" + (f" · {entry.node}" if entry.node else "")
        lines.append(
            f"{times.clock(entry.at)} ({_ago(now - entry.at)} ago) — `{defang(what)}`: "
            f"*{entry.action}* ({entry.rule})"
        )
    return "\n".join(lines)


def queue_text(items: list[Item], depth: int, now: float) -> str:
    """The answer to ``!theloop queue`` (list)."""
    if not items:
        return "The queue is empty: every accepted event was delivered."
    lines = [f"{depth} not delivered (oldest first):"]
    lines += [_item_line(item, now) for item in items]
    if depth > len(items):
        lines.append(f"… and {depth - len(items)} more")
    lines.append("`!theloop queue retry KEY` retries now · `!theloop queue drop KEY` gives up")
    return "\n".join(lines)


def _item_line(item: Item, now: float) -> str:
    state = {"pending": "waiting", "inflight": "in flight", "parked": "PARKED"}.get(
        item.state, item.state
    )
    if item.state == "pending" and item.due > now:
        state += f", next try in {_ago(item.due - now)}"
    flags = ", maybe delivered before a restart" if item.maybe_delivered else ""
    error = f" — {defang(item.last_error)}" if item.last_error else ""
    return (
        f"- `{defang(item.key)}` {_describe(item.payload)}: {state}, "
        f"{item.attempts} attempt(s){flags}{error}"
    )


def _describe(payload: str) -> str:
    try:
        wire = json.loads(payload)
        return defang(f"{wire['eventType']} · {wire['workItem']}")
    except (ValueError, KeyError, TypeError):
        return "(unreadable payload)"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"
