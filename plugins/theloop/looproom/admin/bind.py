"""``!theloop bind`` and ``unbind``: a room of its own for a work item, and back.

A room is typed as ``#name``, ``name``, an id, or Slack's ``<#C…|name>`` link; a work item
as its ref or its URL. A name is resolved to the room's id before anything is stored, as
Slack's events name rooms by id: a room that cannot be found or seen is refused, not kept
by a name no message will ever carry. What is typed is shortened and quoted before it is
echoed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from looproom import workitem
from looproom.room.routing import BindingBook, BindingError
from looproom.slack.responses import is_channel_id

#: A room as an admin types it: ``#name``, ``name``, an id, or Slack's ``<#C…|name>``.
_ROOM = re.compile(r"^(?:#?[A-Za-z0-9._-]{1,80}|<#([CG][A-Z0-9]+)(?:\|[^>]*)?>)$")


#: ``find(room)``: ``(id, "")``, or ``("", why)`` — Slack's error, or ``no_slack`` where
#: there is no Slack to ask (the Text backend: the name is then kept as typed).
FindRoom = Callable[[str], tuple[str, str]]

BIND_USAGE = "usage: `!theloop bind <work item> <room>` (e.g. `github:acme/api#7 #api-war-room`)"


def bind_command(book: BindingBook, args: str, find: FindRoom) -> str:
    """``!theloop bind``: list the bindings; ``!theloop bind ITEM ROOM``: bind one."""
    words = args.split()
    if not words:
        bound = book.room_bindings()
        lines = [f"• `{item}` → {_shown(room)}" for item, room in sorted(bound.items())]
        return (
            "\n".join(["Work items bound to a room of their own:", *lines])
            if lines
            else ("No work item is bound to a room of its own. " + BIND_USAGE)
        )
    if len(words) != 2:
        return BIND_USAGE
    ref, room = workitem.parse(words[0]) or workitem.from_url(words[0]), _room_word(words[1])
    if ref is None:
        return f"`{words[0][:80]}` is not a work item ref like `github:acme/api#7`. {BIND_USAGE}"
    item = str(ref)
    if not room:
        return f"`{words[1][:80]}` is not a room name (#api-loop) or id (C…). {BIND_USAGE}"
    channel, why = find(room)
    if why and why != "no_slack":
        return (
            f"I cannot find or see the room `{words[1][:80]}` ({why}): check its name, "
            "and invite me to a private room first. Nothing was bound."
        )
    try:
        book.bind_room(item, channel or room)
    except BindingError as exc:
        return str(exc)
    return (
        f"`{item}` now posts to {_shown(channel or room)}; its next event opens its thread there."
    )


def unbind_command(book: BindingBook, args: str) -> str:
    """``!theloop unbind ITEM``: back to the configured room."""
    words = args.split()
    if len(words) != 1:
        return "usage: `!theloop unbind <work item>`"
    named = workitem.from_url(words[0])
    if book.unbind_room(str(named) if named is not None else words[0]):
        return f"`{words[0]}` posts to its configured room again."
    return f"`{words[0][:80]}` was not bound to a room (see `!theloop bind`)."


def _room_word(word: str) -> str:
    """A room as typed: ``#name``, ``name``, an id, or Slack's ``<#C…|name>`` link; else ""."""
    match = _ROOM.match(word)
    if not match:
        return ""
    return match.group(1) or word


def _shown(room: str) -> str:
    """A room as Slack draws it: an id as a link to the room (Slack shows its name)."""
    return f"<#{room}>" if is_channel_id(room) else room
