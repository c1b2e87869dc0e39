"""``/the-loop``: what a slash command asks, read from Slack's payload, and its help.

``/the-loop help | status [<work item>] | new <title> | <verb> <work item> [words] |
restart | upgrade | standing list|start|stop|restart <name>``.
Slack sends a slash command over Socket Mode (a ``slash_commands`` envelope) or as a
signed form ``POST /theloop/slack/commands`` — verified here with slack_sdk's
``SignatureVerifier`` like a press: anything unverifiable is 401, no signing secret 503.
Every answer is ephemeral: only the member who typed it sees it. The verbs are the
typed ones (``looproom.decide.kinds``), judged on the same path, by the same grants.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from looproom.decide import kinds
from looproom.settings import grants, keywords
from looproom.slack.signed import Checked, signed_body

COMMAND = "/the-loop"
HELP, STATUS, NEW, MINE = "help", "status", "new", "mine"
RESTART, UPGRADE, STANDING = "restart", "upgrade", "standing"
#: The words ``/the-loop`` itself reads before the verbs: no command word may be one.
WORDS = (HELP, STATUS, NEW, MINE, RESTART, UPGRADE, STANDING)
#: A bare number first after a work-item verb — the-loop's own ``/the-loop`` reads
#: ``pause 7`` as ``pause #7`` (its ``resolve_work_item``), so a team moving over may
#: type either; ``#N``'s own bound (nine digits) is kept.
_BARE_NUMBER = re.compile(r"^([0-9]{1,9})(?=\s|$)")
#: The payload's fields read; Slack sends each as one string.
_FIELDS = ("command", "text", "user_id", "channel_id", "trigger_id", "team_id")


@dataclass(frozen=True)
class Slash:
    """One slash command: who typed what where. ``action`` is ``help``, ``status``,
    ``new`` or a verb; ``rest`` what followed it."""

    member: str
    channel: str
    action: str
    rest: str = ""
    trigger: str = ""


def read(payload: Mapping[str, Any]) -> Slash | None:
    """The command in a slash-command payload — ``None`` when it is not ours or has no
    member or channel to answer."""
    fields = {name: str(payload.get(name) or "") for name in _FIELDS}
    if fields["command"] != COMMAND or not fields["user_id"] or not fields["channel_id"]:
        return None
    first, _, rest = fields["text"].strip().partition(" ")
    action = first.lower() or HELP
    return Slash(
        fields["user_id"], fields["channel_id"], action, rest.strip(), fields["trigger_id"]
    )


def numbered(command: Slash, own: bool = False) -> Slash:
    """``command`` with a bare ``N`` first after a work-item verb read as ``#N``, as
    the-loop reads it: only after one of the-loop's control verbs (``own``: the
    operator's own word), whose first word the-loop takes as the work item. After any
    other verb a number keeps its meaning (``skip 2`` names a phase, ``new 3 bugs`` a
    title)."""
    if command.action not in keywords.COMMANDS and not own:
        return command
    return replace(command, rest=_BARE_NUMBER.sub(r"#\1", command.rest, count=1))


def work_item_word(word: str) -> str:
    """A word naming a work item in ``status <work item>``: a bare ``N`` is ``#N``."""
    return f"#{word}" if _BARE_NUMBER.fullmatch(word) else word


def verify(headers: Mapping[str, str], body: bytes, secret: str, now: float) -> Checked:
    """Slack's signature on a slash-command request, then its form fields."""
    checked = signed_body(headers, body, secret, now)
    if checked.status != 200:
        return checked
    try:
        form = urllib.parse.parse_qs(body.decode("utf-8"), strict_parsing=True)
    except ValueError:
        return Checked(400, error="expected a form")
    return Checked(200, {key: values[0] for key, values in form.items() if values})


def is_verb(action: str, own: Iterable[str] = ()) -> bool:
    """A typed verb, or one of the operator's own command words (``own``)."""
    return action in kinds.BY_VERB or action in own


def grants_line(granted: Iterable[str]) -> str:
    """Which of the acts this room is granted (``slack.publish``), as the-loop's help says
    which act grants its channel holds: a verb whose act is not granted is refused."""
    held = set(granted) | {grants.REPLY}
    said = " · ".join(
        f"{act}: {'granted' if act in held else 'not granted'}" for act in grants.ACTS
    )
    return f"What this room may do here (`slack.publish`): {said}."


def help_text(own: Iterable[str] = (), granted: Iterable[str] | None = None) -> str:
    """``/the-loop help``: the grammar, every verb (the operator's own words too), and
    where each can be used; with ``granted``, which acts the room holds."""
    verbs = ", ".join(f"`{verb}`" for verb in (*kinds.VERBS, *own))
    held = (grants_line(granted),) if granted is not None else ()
    return "\n".join(
        (
            f"*{COMMAND}* — the-loop's room from anywhere in Slack:",
            f"• `{COMMAND} status` — the-loop instance, and the work items the room follows: "
            "where each is, what it waits on, who is asked; `status <work item>` for one",
            f"• `{COMMAND} mine` — the asks waiting on you, oldest first, and what you "
            "answered lately",
            f"• `{COMMAND} new [<repo>:] <title>` — open a new work item (a GitHub issue "
            "the-loop can start), with a thread for it",
            f"• `{COMMAND} <verb> <work item> [words]` — {verbs}; e.g. "
            f"`{COMMAND} start github:acme/api#7`, `{COMMAND} do acme/api#7 fix the flaky test`; "
            "the work item may be `#7` or `7` (of the room's one repository, else the "
            "kickoff's), its GitHub link, or a Jira ticket (`jira:OPS-12`) where "
            "the Jira ledger is configured",
            f"• `{COMMAND} restart` · `{COMMAND} upgrade` — the-loop instance (`instance.command`)",
            f"• `{COMMAND} standing list` · `{COMMAND} standing start|stop|restart <name>` — "
            "standing sessions (`standing.command`)",
            "With many the-loop instances, name one last: "
            f"`{COMMAND} restart team-b`, `{COMMAND} status team-b`.",
            "In a work item's thread the verbs are typed as they are (`start`, `approve`).",
            *held,
        )
    )


def unknown_text(action: str, own: Iterable[str] = ()) -> str:
    return f"`{action}` is not something `{COMMAND}` does. " + help_text(own)


def ephemeral(text: str, blocks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The answer Slack shows only to the member who typed the command."""
    answer: dict[str, Any] = {"response_type": "ephemeral", "text": text}
    if blocks:
        answer["blocks"] = blocks
    return answer
