"""How people are written: an admin as the operator gives one, and a mention in a plain chat.

An admin may be written as a Slack member id (``U0AUTH``), as Slack writes a mention of one
(``<@U0AUTH>``), or as a handle (``@alice``; the Text console's ``@localhost``). Errbot
needs two forms of each: its admin check matches the caller's member id on Slack, and its
``build_identifier`` takes a person only as ``<@U0AUTH>`` or ``@handle`` there. Both forms
are made here, from the one the operator wrote.

The room's texts mention members as Slack does (``<@U0AUTH>``). A plain chat (the Text
console) shows that raw; :func:`plain_mentions` writes each the way the backend shows a
person instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: A Slack member id: users are ``U…``, Enterprise Grid's are ``W…``.
_MEMBER_ID = re.compile(r"[UW][A-Z0-9]{2,}")
#: Slack's mention of a member: ``<@U0AUTH>``, or the older ``<@U0AUTH|alice>``.
_MENTION = re.compile(r"<@([^<>|\s]+)(?:\|[^<>]*)?>")


def is_member_id(text: str) -> bool:
    """Whether ``text`` is a Slack member id, written whole."""
    return bool(_MEMBER_ID.fullmatch(text))


def admin_id(entry: str) -> str:
    """The form Errbot's admin check compares: a mention's member id (``<@U0AUTH>`` →
    ``U0AUTH``), anything else as written (an id, a handle, a glob)."""
    entry = entry.strip()
    whole = _MENTION.fullmatch(entry)
    return whole.group(1) if whole else entry


def addressee(who: str, *, slack: bool) -> str:
    """The form the chat backend builds a person (or a room) from: on Slack a member id
    becomes its mention; elsewhere a bare name becomes ``@name``, as the Text backend
    wants. A room (``#…``), a mention or a handle is passed as it is."""
    who = admin_id(who)
    if slack:
        return f"<@{who}>" if is_member_id(who) else who
    return who if who.startswith(("#", "@")) else f"@{who}"


def notified(admins: tuple[str, ...], *, slack: bool) -> tuple[str, ...]:
    """Errbot's ``BOT_ADMINS_NOTIFICATIONS``: each admin as the backend builds a person, for
    Errbot's own warnings (a plugin that failed to start). A glob names no one to tell. On
    Slack only member ids: Errbot's warning does not survive a handle Slack does not know
    (the plugin's own telling does, and tells handles too)."""
    if slack:
        return tuple(addressee(a, slack=True) for a in admins if is_member_id(admin_id(a)))
    return tuple(addressee(a, slack=False) for a in admins if not any(c in a for c in "*?["))


def plain_mentions(text: str, shown: Callable[[str], str]) -> str:
    """``text`` with each Slack mention ``<@member>`` written as ``shown(member)``: how the
    chat backend shows that person."""
    return _MENTION.sub(lambda found: shown(found.group(1)), text)
