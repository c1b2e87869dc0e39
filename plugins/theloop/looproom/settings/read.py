"""``slack.read``: how Slack's messages reach the bot (``mode``), how often a poll reads
(``intervalSeconds``), which of Slack's limits on the history methods the app has (``app``,
ours), how often the periodic reconcile runs and how many heartbeats a split check posts —
otherwise the-loop's keys. ``catchUpSeconds`` 900, ``0`` at connect only, below 60
raised to 60; ``splitCheckBeats`` 2, at most 5, ``0`` off. The reconcile itself is
``looproom.catchup.reconcile``; the poll is the same catch-up every ``intervalSeconds``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from looproom.settings.environment import Environment
from looproom.slack import limits

DEFAULT_SECONDS, MIN_SECONDS = 900, 60
DEFAULT_BEATS, MAX_BEATS = 2, 5
#: How Slack's messages reach the bot: Socket Mode (an app-level token), the Events API
#: (a signing secret, a public request URL), or a poll of the followed threads.
SOCKET, EVENTS, POLL = "socket", "events", "poll"
MODES = (SOCKET, EVENTS, POLL)
#: A poll's pause between reads: the-loop's default, and the least taken. Below it a poll
#: would spend the history methods' budget that ``record-context`` and the kickoff share.
DEFAULT_INTERVAL, MIN_INTERVAL = 30, 10
#: The kinds of Slack app by the limits Slack puts on ``conversations.history``/``replies``:
#: tier 3 for an app made for its own workspace or approved for the Marketplace; one call a
#: minute and 15 messages a page for one distributed outside it.
INTERNAL, MARKETPLACE, DISTRIBUTED = "internal", "marketplace", "distributed"
APPS = (INTERNAL, MARKETPLACE, DISTRIBUTED)
KEYS = ("mode", "intervalSeconds", "app", "catchUpSeconds", "splitCheckBeats")


@dataclass(frozen=True)
class ReadSettings:
    """``slack.read``: the way in, the poll's interval, the reconcile, the split check.
    ``mode`` ``""``: not set, the tokens decide (:func:`way_in`)."""

    catch_up_seconds: int = DEFAULT_SECONDS
    split_check_beats: int = DEFAULT_BEATS
    mode: str = ""
    interval_seconds: int = DEFAULT_INTERVAL
    app: str = INTERNAL

    def history_tiers(self) -> Mapping[str, limits.Tier]:
        """The Slack budget's tiers, the history methods at the pace this app has."""
        return limits.outside_marketplace() if self.app == DISTRIBUTED else limits.TIERS

    def history_page(self) -> int:
        """How many messages to ask a page of the history methods for."""
        return limits.OUTSIDE_MARKETPLACE_PAGE if self.app == DISTRIBUTED else limits.HISTORY_PAGE

    def describe(self, way: str = "") -> str:
        """``!theloop status``'s line; ``way``: the mode in force (:func:`way_in`)."""
        if way == POLL:
            return f"read: a poll of the followed threads and rooms every {self.interval_seconds} s"
        every = (
            f"every {self.catch_up_seconds} s"
            if self.catch_up_seconds
            else "at connect only (slack.read.catchUpSeconds: 0)"
        )
        return (
            f"catch-up: at connect and {every}" if self.catch_up_seconds else f"catch-up: {every}"
        )


def way_in(read: ReadSettings, *, app_token: bool, signing_secret: bool) -> str:
    """The mode in force: the one set, else Socket Mode with an app token, the Events API
    with a signing secret, and with neither a poll — the one way that still hears."""
    if read.mode:
        return read.mode
    return SOCKET if app_token else EVENTS if signing_secret else POLL


def way_of(read: ReadSettings, env: Environment) -> str:
    """:func:`way_in` with ``env``'s tokens; ``""`` off Slack, where nothing is read."""
    if env.backend != "SlackV3":
        return ""
    return way_in(
        read, app_token=bool(env.slack_app_token), signing_secret=bool(env.slack_signing_secret)
    )


def seconds_between(read: ReadSettings, way: str) -> int:
    """How long between two reads of what the room follows: a poll's interval, or the
    reconcile's (``0``: none between connects)."""
    return read.interval_seconds if way == POLL else read.catch_up_seconds


def needs(mode: str, *, app_token: bool, signing_secret: bool) -> str:
    """What ``mode`` set in the file lacks in the environment (``""``: nothing)."""
    if mode == SOCKET and not app_token:
        return (
            "slack.read.mode: socket needs an app-level token (THELOOP_SLACK_APP_TOKEN or "
            "the variable slack.appTokenEnv names); without one set mode: poll"
        )
    if mode == EVENTS and not signing_secret:
        return (
            "slack.read.mode: events needs the app's signing secret "
            "(THELOOP_SLACK_SIGNING_SECRET); without one set mode: poll"
        )
    return ""


def parse(raw: Any, errors: list[str], warnings: list[str]) -> ReadSettings:
    """``slack.read``; a reconcile or split check outside its range is brought into it,
    with a warning, as the-loop does; a mode not known, a poll interval below
    :data:`MIN_INTERVAL`, or a value that is not a number is an error naming the key."""
    if raw is None:
        return ReadSettings()
    if not isinstance(raw, Mapping):
        errors.append(f"slack.read: expected a mapping ({', '.join(KEYS)})")
        return ReadSettings()
    for key in raw:
        if key not in KEYS:
            errors.append(f"slack.read.{key}: unknown key (known: {', '.join(KEYS)})")
    seconds = _number(raw.get("catchUpSeconds"), "catchUpSeconds", DEFAULT_SECONDS, errors)
    if 0 < seconds < MIN_SECONDS:
        warnings.append(
            f"slack.read.catchUpSeconds: {seconds} is below {MIN_SECONDS} — using {MIN_SECONDS}; "
            "the reconcile is a safety net, not a second way to read"
        )
        seconds = MIN_SECONDS
    beats = _number(raw.get("splitCheckBeats"), "splitCheckBeats", DEFAULT_BEATS, errors)
    if beats > MAX_BEATS:
        warnings.append(f"slack.read.splitCheckBeats: {beats} is above {MAX_BEATS} — using it")
        beats = MAX_BEATS
    return ReadSettings(
        max(0, seconds),
        max(0, beats),
        _mode(raw.get("mode"), errors),
        _interval(raw, errors),
        _app(raw.get("app"), errors),
    )


def _app(value: Any, errors: list[str]) -> str:
    if value is None:
        return INTERNAL
    if value not in APPS:
        errors.append(
            f"slack.read.app: {value!r} is not one of {', '.join(APPS)} (which of Slack's "
            "limits on conversations.history and conversations.replies the app has)"
        )
        return INTERNAL
    return str(value)


def _mode(value: Any, errors: list[str]) -> str:
    if value is None:
        return ""
    if value not in MODES:
        errors.append(
            f"slack.read.mode: {value!r} is not one of {', '.join(MODES)} (the-loop's "
            "'gateway' and 'off' have no meaning here)"
        )
        return ""
    return str(value)


def _interval(raw: Mapping[str, Any], errors: list[str]) -> int:
    interval = _number(raw.get("intervalSeconds"), "intervalSeconds", DEFAULT_INTERVAL, errors)
    if interval < MIN_INTERVAL:
        errors.append(
            f"slack.read.intervalSeconds: {interval} is below {MIN_INTERVAL} — a poll that "
            "often spends the history methods' budget the room's other reads share"
        )
        return DEFAULT_INTERVAL
    return interval


def _number(value: Any, key: str, default: int, errors: list[str]) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        errors.append(f"slack.read.{key}: expected a whole number, got {value!r}")
        return default
    return value
