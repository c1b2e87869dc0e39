"""The doctor's look at attention: which rooms message the members an ask waits on, and
whether the token may (``im:write``), so a room with ``attention.direct`` on is not
silently only naming people in threads; and whether the app's Home tab, where each member
finds what waits on them, is on."""

from __future__ import annotations

from looproom.doctor.findings import NOTE, OK, PROBLEM, Finding
from looproom.http import rules as http_rules
from looproom.settings.attention import AttentionSettings
from looproom.slack.responses import Response

SUBJECT = "Attention"


def finding(attention: AttentionSettings, answer: Response | None) -> Finding:
    """One finding from the settings and ``auth.test``'s answer (its granted scopes)."""
    if not attention.any_direct():
        return Finding(
            NOTE,
            SUBJECT,
            "quiet: no room has attention.direct, so nobody is messaged or reminded; the asks "
            "are recorded (`!theloop asks`) and listed on each member's Home tab",
            "set `attention.direct: true` for every room or one (docs/attention.md)",
        )
    where = (
        "every room"
        if attention.default.direct
        else "rooms " + ", ".join(room for room, own in attention.rooms.items() if own.direct)
    )
    header = http_rules.header(answer.headers, "x-oauth-scopes") if answer is not None else ""
    granted = {scope.strip() for scope in header.split(",") if scope.strip()}
    if header and "im:write" not in granted:
        return Finding(
            PROBLEM,
            SUBJECT,
            f"direct messages are on for {where}, but the token lacks `im:write`: the asked "
            "members are named in the thread, and no direct message or reminder reaches them",
            "add im:write under OAuth & Permissions → Bot Token Scopes, then reinstall the app",
        )
    return Finding(OK, SUBJECT, f"direct messages, reminders and escalation on for {where}")


HOME = "App Home"
HOME_REMEDY = (
    "turn the Home tab on: the app's App Home → Show Tabs → Home Tab (or create the app "
    "again from `make manifest`)"
)


def home_finding(tab_on: bool | None) -> Finding:
    """The Home tab as Slack last answered a publish: on, off (``not_enabled``), or not
    known (nothing published yet, or the doctor runs outside the bot)."""
    if tab_on is None:
        return Finding(
            NOTE,
            HOME,
            "Slack's API cannot tell whether the app's Home tab is on, and no Home was "
            "published here yet",
            "open the app in Slack, then Home: `Waiting on you` there means it is on; "
            "else " + HOME_REMEDY,
        )
    if not tab_on:
        return Finding(
            PROBLEM,
            HOME,
            "Slack refuses the Home views (`not_enabled`): nobody sees what waits on them",
            HOME_REMEDY,
        )
    return Finding(OK, HOME, "each member's Home tab is published")
