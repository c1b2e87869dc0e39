"""``!theloop threads [<work item>]``: which room and thread carries each work item.

As the-loop's ``channels threads``: for every work item the room follows, the room, a
link to its thread, when the thread was opened, what opened it and what the room hears
there (every message, or a mention) — read from the room book alone, no Slack call, never
a message's text. One work item when named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from looproom import times, workitem
from looproom.decide import talk
from looproom.room.routing import ThreadBinding

#: The rooms (ids) that hear every message as words to the bot.
Listening = Callable[[], Iterable[str]]


def threads_text(threads: Sequence[ThreadBinding], listening: Listening, only: str = "") -> str:
    """One line per work item's thread, oldest first; ``only``: that work item's."""
    wanted = only.strip()
    if wanted:
        named = workitem.resolve_typed(wanted, "") or workitem.parse(wanted)
        if named is None:
            return f"`{_plain(wanted)}` is not a work item ref like `github:owner/repo#7`."
        wanted = str(named)
    shown = [t for t in threads if not wanted or workitem.same(t.work_item, wanted)]
    if wanted and not shown:
        return f"No thread carries `{wanted}` here."
    if not shown:
        return "No work item has a thread yet: the-loop has sent nothing the room posted."
    hearing = set(listening())
    lines = [f"Threads ({len(shown)}):"] + [_line(t, hearing) for t in shown]
    return "\n".join(lines)


def _line(thread: ThreadBinding, hearing: set[str]) -> str:
    link = talk.thread_link(thread.channel, thread.ts)
    opened = _opened(thread.ts)
    listen = "all" if thread.channel in hearing or talk.is_direct(thread.channel) else "mentions"
    origin = thread.origin or "not recorded (opened before this was kept)"
    return (
        f"• `{thread.work_item}` — <#{thread.channel}> · [its thread]({link}) opened "
        f"{opened} · origin: {origin} · listens to: {listen}"
    )


def _opened(ts: str) -> str:
    """When a thread's parent was posted: its Slack timestamp, in UTC."""
    try:
        return times.iso(float(ts))
    except ValueError:
        return "at an unknown time"


def _plain(typed: str) -> str:
    """What was typed, shown back inert: no code span, link or mention can open."""
    return "".join(c for c in typed[:80] if c not in "`<>&")
