"""Errbot's configuration for theloop, read from the environment (docs/configuration.md).

Errbot imports this file (``errbot -c config.py``). Every knob an operator turns is an
environment variable, so the same file serves ``make run`` (Text backend, no Slack), a
headless run (``THELOOP_BACKEND=Null``) and production on Slack (a bot token set).
The variables are read by the plugin's own parser (``looproom.settings.Environment``), so
a bad value stops the bot here with the same error, naming the variable, that the plugin
would give. Secrets are handed to Errbot in memory only; nothing here logs them.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
# Errbot puts the plugin's folder on sys.path only after reading this file.
if str(_HERE / "plugins" / "theloop") not in sys.path:
    sys.path.insert(0, str(_HERE / "plugins" / "theloop"))

from looproom import configured, people  # noqa: E402 - needs the path above
from looproom.settings import ConfigError  # noqa: E402


def _slackv3_dir() -> str | None:
    """Where the errbot-backend-slackv3 package keeps its ``.plug`` (site-packages)."""
    try:
        import slackv3  # optional until a Slack run
    except ImportError:
        return None
    return str(Path(slackv3.__file__).resolve().parent)


try:
    # The file may name where the Slack tokens are (slack.botTokenEnv): it is read too.
    _ENV = configured.environment(os.environ)
    # The whole file is the plugin's to report on; only whether a named one exists is said here.
    if _ENV.config_given and not Path(_ENV.config_path).is_file():
        raise ConfigError(["THELOOP_CONFIG names a file that does not exist"], _ENV.config_path)
except ConfigError as _error:
    raise SystemExit(f"theloop cannot start, fix the environment: {_error}") from None

_ON_SLACK = _ENV.backend == "SlackV3"
# slack.read.mode: poll (or neither an app token nor a signing secret): no listener at all,
# the followed threads read on an interval through the Web API (docs/slack-app.md#poll-mode).
# slack.read.mode: events with an app token set too: the token is not handed over.
_WAY = configured.way_in(os.environ) if _ON_SLACK else ""
_POLL = _WAY == "poll"
# THELOOP_SLACK_API_URL (GovSlack, a proxy, a test's loopback Slack): SlackV3 has no setting
# for the Web API's base URL, so the bundle's own SlackV3Url backend (.errbot-parts/backends/,
# SlackV3 but for that one client) runs instead, given the URL in BOT_IDENTITY; it is also
# the one that connects without a listener, for a poll. Otherwise: SlackV3.
BACKEND = "SlackV3Url" if _ON_SLACK and (_ENV.slack_api_url or _POLL) else _ENV.backend


# -- THELOOP_DATABASE_URL: the shared mode -----------------------------------------------------
# Reached, and its schema made or migrated, before Errbot starts: a database that cannot be
# reached, or that a newer theloop migrated, stops this process with the reason (an
# orchestrator restarts it) rather than leaving a bot up whose room cannot work.
def _open_database(url: str) -> None:
    from looproom.durable.sqlite import StorageError
    from looproom.postgres.database import Database
    from looproom.postgres.schema import SchemaTooNew

    try:
        Database(url).close()
    except (StorageError, SchemaTooNew) as error:
        raise SystemExit(f"theloop cannot start, THELOOP_DATABASE_URL: {error}") from None


if _ENV.database_url and __name__ != "__main__":
    _open_database(_ENV.database_url)
# -- end THELOOP_DATABASE_URL -------------------------------------------------------------------

BOT_DATA_DIR = str(Path(_ENV.data_dir).resolve())
Path(BOT_DATA_DIR).mkdir(parents=True, exist_ok=True)
BOT_EXTRA_PLUGIN_DIR = str(_HERE / "plugins")
# The storage and backend plugins sit in a hidden folder: Errbot skips hidden folders when
# `!repos install` looks for chat plugins, so a clone loads TheLoop alone (docs/existing-errbot.md).
_PARTS = _HERE / ".errbot-parts"
BOT_EXTRA_BACKEND_DIR = [str(_PARTS / "backends"), *filter(None, [_slackv3_dir()])]
BOT_LOG_FILE = str(Path(BOT_DATA_DIR) / "errbot.log")
BOT_LOG_LEVEL = getattr(logging, _ENV.log_level)
BOT_PREFIX = "!"
BOT_ASYNC = True
# Shelf sits on dbm, and where only dbm.dumb exists a SIGKILL mid-write leaves it unreadable:
# everything Errbot stores goes to SQLite (WAL, fsync per commit; docs/configuration.md).
STORAGE = "SQLite"
BOT_EXTRA_STORAGE_PLUGINS_DIR = str(_PARTS / "storage" / "sqlite")
# VersionChecker phones home; the rest are Errbot's own admin surface. Errbot's Webserver
# is left out: theloop serves its own routes with its own server (docs/security.md), so
# Errbot's development server and its open `/echo` never listen.
CORE_PLUGINS = (
    "ACLs",
    "ChatRoom",
    "CommandNotFoundFilter",
    "Health",
    "Help",
    "Plugins",
    "TextCmds",
    "Utils",
)

if _ON_SLACK:
    BOT_IDENTITY = {"token": _ENV.slack_bot_token}
    if _ENV.slack_api_url:  # slack_sdk's base_url ends with a slash
        BOT_IDENTITY["base_url"] = _ENV.slack_api_url.rstrip("/") + "/"
    if _POLL:  # neither listener is opened, whatever tokens are set
        BOT_IDENTITY["read"] = "poll"
    if _WAY == "socket":
        BOT_IDENTITY["app_token"] = _ENV.slack_app_token
    if _ENV.slack_signing_secret and not _POLL:
        BOT_IDENTITY["signing_secret"] = _ENV.slack_signing_secret
    _DEFAULT_ADMINS: tuple[str, ...] = ()
else:
    BOT_IDENTITY = {"username": "@theloop"}
    _DEFAULT_ADMINS = ("@localhost",)  # the Text backend's console user

BOT_ADMINS = _ENV.admins or _DEFAULT_ADMINS
# Errbot builds whom to warn with the backend's build_identifier: on Slack a member id only as
# its mention, so an admin written as an id or a mention is warned that way (the plugin's own
# telling reaches handles too).
BOT_ADMINS_NOTIFICATIONS = people.notified(BOT_ADMINS, slack=_ON_SLACK)
TEXT_COLOR_THEME = "light"
# Errbot's own commands that read Slack for whoever asks would show any member what the
# bot's read scopes reach: ChatRoom's `!room list|occupants|topic` a private room's name,
# members and topic (and its join, leave, invite, create, destroy act on rooms), Utils'
# `!whoami <someone>` a person's profile; Utils' `!echo` posts anything, @channel included, in
# the bot's name (sent with link_names). Admins only, in a direct message, as Errbot's
# own admin commands are; with no BOT_ADMINS, no one (docs/security.md).
_ADMINS_ONLY = {"allowusers": BOT_ADMINS, "allowmuc": False}
ACCESS_CONTROLS = {
    "ChatRoom:*": _ADMINS_ONLY,
    "Utils:whoami": _ADMINS_ONLY,
    "Utils:echo": _ADMINS_ONLY,
}


if __name__ == "__main__" and sys.argv[1:] == ["--check"]:
    # `python config.py --check`: the environment read as the bot will read it.
    print(f"theloop: {BACKEND} backend, http server on {_ENV.http_host}:{_ENV.http_port}")
    print(f"Errbot core plugins: {', '.join(CORE_PLUGINS)}")
