"""Errbot's configuration for theloop, read from the environment (DESIGN §3.5).

Errbot imports this file (``errbot -c config.py``). Every knob an operator turns is an
environment variable, so the same file serves ``make run`` (Text backend, no Slack), a
headless run (``THELOOP_BACKEND=Null``) and production on Slack (a bot token set).
Secrets are read here and handed to Errbot in memory only; nothing here logs them.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def _env(name: str, default: str = "") -> str:
    """One variable, stripped; an empty value counts as unset."""
    return os.environ.get(name, "").strip() or default


def _first_env(*names: str) -> str:
    """The first of several variables that is set (ours first, then the-loop's names)."""
    return next((value for value in (_env(name) for name in names) if value), "")


def _slackv3_dir() -> str | None:
    """Where the errbot-backend-slackv3 package keeps its ``.plug`` (site-packages)."""
    try:
        import slackv3  # optional until a Slack run
    except ImportError:
        return None
    return str(Path(slackv3.__file__).resolve().parent)


SLACK_BOT_TOKEN = _first_env("THELOOP_SLACK_BOT_TOKEN", "THE_LOOP_SLACK_BOT_TOKEN")
SLACK_APP_TOKEN = _first_env("THELOOP_SLACK_APP_TOKEN", "THE_LOOP_SLACK_APP_TOKEN")
SLACK_SIGNING_SECRET = _env("THELOOP_SLACK_SIGNING_SECRET")

BACKEND = _env("THELOOP_BACKEND", "SlackV3" if SLACK_BOT_TOKEN else "Text")
_BACKENDS = ("Text", "SlackV3", "Null", "Test")
if BACKEND not in _BACKENDS:
    raise SystemExit(f"THELOOP_BACKEND={BACKEND!r} is not one of {', '.join(_BACKENDS)}")
if BACKEND == "SlackV3" and not SLACK_BOT_TOKEN:
    raise SystemExit("THELOOP_BACKEND=SlackV3 needs THELOOP_SLACK_BOT_TOKEN (an xoxb- token)")


# -- THELOOP_SLACK_API_URL: another Slack Web API base URL (GovSlack, a proxy, a test fake) --
# SlackV3 builds `WebClient(token=…)` with slack_sdk's default https://slack.com/api/ and has
# no setting for it. Errbot executes the backend's module after reading this file, so a
# WebClient subclass whose *default* base_url is this one, put where SlackV3 imports it
# from (`slack_sdk.web`), reaches every client the backend builds — Socket Mode included,
# which asks that client for its websocket URL. An explicit base_url still wins. Unset:
# nothing is touched.
def _use_slack_api_url(url: str) -> None:
    # Imported here: only a run that sets the variable pays for slack_sdk at config time.
    from urllib.parse import urlsplit

    import slack_sdk
    import slack_sdk.web

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SystemExit("THELOOP_SLACK_API_URL must be an http(s) URL like https://slack.com/api/")
    base_url = url if url.endswith("/") else url + "/"
    slack_web_client = slack_sdk.web.WebClient

    class WebClient(slack_web_client):  # type: ignore[misc, valid-type]
        def __init__(self, *args: object, **kwargs: object) -> None:
            if len(args) < 2:  # (token, base_url, …): base_url not given positionally
                kwargs.setdefault("base_url", base_url)
            super().__init__(*args, **kwargs)

    slack_sdk.web.WebClient = slack_sdk.WebClient = WebClient


SLACK_API_URL = _env("THELOOP_SLACK_API_URL")
if SLACK_API_URL:
    _use_slack_api_url(SLACK_API_URL)
# -- end THELOOP_SLACK_API_URL --------------------------------------------------------------

BOT_DATA_DIR = str(Path(_env("THELOOP_DATA_DIR", "./data")).resolve())
Path(BOT_DATA_DIR).mkdir(parents=True, exist_ok=True)
BOT_EXTRA_PLUGIN_DIR = str(_HERE / "plugins")
BOT_EXTRA_BACKEND_DIR = _slackv3_dir()
BOT_LOG_FILE = str(Path(BOT_DATA_DIR) / "errbot.log")
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_LOG_LEVEL = _env("THELOOP_LOG_LEVEL", "INFO").upper()
if _LOG_LEVEL not in _LOG_LEVELS:  # a typo must not silently log at another level
    raise SystemExit(
        f"THELOOP_LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, got {_LOG_LEVEL[:40]!r}"
    )
BOT_LOG_LEVEL = getattr(logging, _LOG_LEVEL)
BOT_PREFIX = "!"
BOT_ASYNC = True
# Shelf sits on dbm, and where only dbm.dumb exists a SIGKILL mid-write leaves it unreadable
# (DESIGN §4 fact 2): everything Errbot stores goes to SQLite (WAL, fsync per commit).
STORAGE = "SQLite"
BOT_EXTRA_STORAGE_PLUGINS_DIR = str(_HERE / "storage" / "sqlite")
# VersionChecker phones home; the rest are Errbot's own admin surface.
CORE_PLUGINS = (
    "ACLs",
    "ChatRoom",
    "CommandNotFoundFilter",
    "Health",
    "Help",
    "Plugins",
    "TextCmds",
    "Utils",
    "Webserver",
)

if BACKEND == "SlackV3":
    BOT_IDENTITY = {"token": SLACK_BOT_TOKEN}
    if SLACK_APP_TOKEN:
        BOT_IDENTITY["app_token"] = SLACK_APP_TOKEN
    if SLACK_SIGNING_SECRET:
        BOT_IDENTITY["signing_secret"] = SLACK_SIGNING_SECRET
    _DEFAULT_ADMIN = ""
else:
    BOT_IDENTITY = {"username": "@theloop"}
    _DEFAULT_ADMIN = "@localhost"  # the Text backend's console user

BOT_ADMINS = tuple(
    admin.strip() for admin in _env("THELOOP_ADMINS", _DEFAULT_ADMIN).split(",") if admin.strip()
)
BOT_ADMINS_NOTIFICATIONS = ()
TEXT_COLOR_THEME = "light"


def _http_port() -> int:
    raw = _env("THELOOP_HTTP_PORT", "3141")
    if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 65535):
        raise SystemExit(f"THELOOP_HTTP_PORT must be an integer from 1 to 65535, got {raw!r}")
    return int(raw)


# Errbot's Webserver plugin reads its HOST/PORT from its stored plugin configuration, not
# from this file; `make run` provisions it before start with Errbot's own tool:
#   python config.py --webserver | errbot -c config.py --storage-merge core
WEBSERVER = {
    "HOST": _env("THELOOP_HTTP_HOST", "127.0.0.1"),
    "PORT": _http_port(),
    "SSL": {"enabled": False, "host": "127.0.0.1", "port": 3142, "certificate": "", "key": ""},
}

if __name__ == "__main__" and sys.argv[1:] == ["--webserver"]:
    print(repr({"configs": {"Webserver": WEBSERVER}}))
