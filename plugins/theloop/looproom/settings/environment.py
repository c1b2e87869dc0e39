"""The environment variables (docs/configuration.md), read with their fallbacks and defaults.

Secrets come only from here and are never part of a ``repr``, a message or
:meth:`Environment.describe`, which shows only whether each is set. ``config.py`` reads the
environment with :meth:`Environment.from_env` too, so the bot and the plugin agree on it.
Each bad variable is named in one :class:`~looproom.settings.errors.ConfigError`.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from looproom import people
from looproom.http.origins import redact_url
from looproom.settings.errors import ConfigError, shown
from looproom.settings.instances import Instance

BACKENDS = ("Text", "SlackV3", "Null", "Test")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_CONFIG_PATH = "theloop.yaml"
#: Deliveries side by side. A delivery mostly waits for Slack, so N rooms busy at once take
#: about N / slots times one room's time: 16 keeps twenty rooms within twice one room's.
DEFAULT_DELIVERY_SLOTS = 16
MAX_DELIVERY_SLOTS = 64
#: Shorter webhook secrets are refused on Slack (and warned about elsewhere): an HMAC key
#: should carry at least as many bits as its 256-bit digest can tell apart in practice.
MIN_SECRET_CHARS = 32

_SECRETS = {
    "webhook_secret": "THELOOP_WEBHOOK_SECRET",
    "slack_bot_token": "THELOOP_SLACK_BOT_TOKEN",
    "slack_app_token": "THELOOP_SLACK_APP_TOKEN",
    "slack_signing_secret": "THELOOP_SLACK_SIGNING_SECRET",
    "github_token": "THELOOP_GITHUB_TOKEN",
}
#: Shown by :meth:`Environment.describe` as they are. ``config.py`` acts on the log level
#: and the Slack API URL at start, from the same environment the plugin reads.
_PLAIN = {
    "backend": "THELOOP_BACKEND",
    "data_dir": "THELOOP_DATA_DIR",
    "http_host": "THELOOP_HTTP_HOST",
    "http_port": "THELOOP_HTTP_PORT",
    "config_path": "THELOOP_CONFIG",
    "admins": "THELOOP_ADMINS",
    "github_api": "THELOOP_GITHUB_API",
    "loop_api": "THELOOP_LOOP_API",
    "loop_stream": "THELOOP_LOOP_STREAM",
    "loop_config": "THELOOP_LOOP_CONFIG",
    "log_level": "THELOOP_LOG_LEVEL",
    "slack_api_url": "THELOOP_SLACK_API_URL",
    "public_url": "THELOOP_PUBLIC_URL",
    "database_url": "THELOOP_DATABASE_URL",
    "lease_seconds": "THELOOP_LEASE_SECONDS",
    "replica": "THELOOP_REPLICA",
    "delivery_slots": "THELOOP_DELIVERY_SLOTS",
    "relay_notice_seconds": "THELOOP_RELAY_NOTICE_SECONDS",
    "relay_give_up_seconds": "THELOOP_RELAY_GIVE_UP_SECONDS",
}
#: Shown redacted: a URL may carry ``user:pass@`` or ``?token=``.
_URLS = (
    "THELOOP_GITHUB_API",
    "THELOOP_LOOP_API",
    "THELOOP_LOOP_STREAM",
    "THELOOP_SLACK_API_URL",
    "THELOOP_PUBLIC_URL",
    "THELOOP_DATABASE_URL",
)
#: The shared mode's lease: how long a stopped replica's claim holds before another takes it.
DEFAULT_LEASE_SECONDS = 30.0
#: A reply waiting on the-loop's event log: the thread hears after 10 minutes, a day parks it.
DEFAULT_RELAY_NOTICE_SECONDS = 600.0
DEFAULT_RELAY_GIVE_UP_SECONDS = 86400.0


@dataclass(frozen=True)
class Environment:
    """The environment variables (docs/configuration.md), with their fallbacks and defaults.

    Secret fields are left out of ``repr`` so a stray log line cannot carry them.
    """

    webhook_secret: str = field(default="", repr=False)
    slack_bot_token: str = field(default="", repr=False)
    slack_app_token: str = field(default="", repr=False)
    slack_signing_secret: str = field(default="", repr=False)
    github_token: str = field(default="", repr=False)
    github_api: str = "https://api.github.com"
    loop_api: str = ""
    loop_stream: str = ""
    #: the-loop's own CLI config (a mounted copy): its control keywords are read from it.
    loop_config: str = ""
    data_dir: str = "./data"
    http_host: str = "127.0.0.1"
    http_port: int = 3141
    config_path: str = DEFAULT_CONFIG_PATH
    backend: str = "Text"
    admins: tuple[str, ...] = ()
    log_level: str = "INFO"
    #: Another Slack Web API base URL (a proxy, GovSlack, a test fake); "" is Slack's own.
    slack_api_url: str = ""
    #: The bot's HTTP server as the-loop reaches it: files attached to a reply are handed
    #: to the session as links there ("" = as paths on the bot's disk).
    public_url: str = ""
    #: The shared mode: every replica's state in this PostgreSQL database ("" = SQLite).
    #: Out of ``repr``: it may carry a password (``describe`` shows it redacted).
    database_url: str = field(default="", repr=False)
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    #: This process's name among the replicas (status lines, the metrics' label).
    replica: str = field(default_factory=lambda: f"{socket.gethostname()}-{os.getpid()}")
    #: How many deliveries (and, apart, decisions) run side by side, each work item's in order.
    delivery_slots: int = DEFAULT_DELIVERY_SLOTS
    #: A reply that may have landed while the-loop cannot be asked: said to wait after this
    #: many seconds, parked for an admin after that many.
    relay_notice_seconds: float = DEFAULT_RELAY_NOTICE_SECONDS
    relay_give_up_seconds: float = DEFAULT_RELAY_GIVE_UP_SECONDS
    #: Whether ``THELOOP_CONFIG`` was set: then its file must exist.
    config_given: bool = False
    #: The ``instances:`` of the settings file with their secrets read (``configured``).
    instances: tuple[Instance, ...] = field(default=(), repr=False)
    #: What is allowed but unwise (a short secret on the console backend).
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], *, bot_token_env: str = "", app_token_env: str = ""
    ) -> Environment:
        """Read ``env`` (``os.environ``); raise :class:`ConfigError` naming each bad variable.
        ``bot_token_env``/``app_token_env``: the variables ``slack.botTokenEnv`` and
        ``slack.appTokenEnv`` name, read before the bot's own."""

        def get(*names: str, default: str = "") -> str:
            values = (env.get(name, "").strip() for name in names)
            return next((value for value in values if value), default)

        errors: list[str] = []
        bot_token = get(*_names(bot_token_env, "SLACK_BOT_TOKEN"))
        backend = _backend(
            get("THELOOP_BACKEND", default="SlackV3" if bot_token else "Text"), bot_token, errors
        )
        log_level = _log_level(get("THELOOP_LOG_LEVEL", default="INFO"), errors)
        port = _port(get("THELOOP_HTTP_PORT", default="3141"), errors)
        slots = _slots(get("THELOOP_DELIVERY_SLOTS", default=str(DEFAULT_DELIVERY_SLOTS)), errors)
        horizons = _relay_horizons(get, errors)
        urls = _peer_urls(get, errors)
        admins = _admins(get("THELOOP_ADMINS"), errors)
        data_dir = _data_dir(get("THELOOP_DATA_DIR", default="./data"), errors)
        secret = get("THELOOP_WEBHOOK_SECRET")
        shared = _shared_mode(get, errors)
        warnings = _secret_strength(secret, backend, errors)
        if errors:
            raise ConfigError(errors, "the environment")
        return cls(
            webhook_secret=secret,
            slack_bot_token=bot_token,
            slack_app_token=get(*_names(app_token_env, "SLACK_APP_TOKEN")),
            slack_signing_secret=get("THELOOP_SLACK_SIGNING_SECRET"),
            github_token=get("THELOOP_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"),
            data_dir=data_dir,
            http_host=get("THELOOP_HTTP_HOST", default="127.0.0.1"),
            http_port=port,
            delivery_slots=slots,
            config_path=get("THELOOP_CONFIG", default=DEFAULT_CONFIG_PATH),
            backend=backend,
            admins=admins,
            log_level=log_level,
            config_given=bool(get("THELOOP_CONFIG")),
            loop_config=get("THELOOP_LOOP_CONFIG"),
            warnings=warnings,
            **urls,
            **shared,
            **horizons,
        )

    def describe(self) -> dict[str, str]:
        """The resolved values by variable name, secrets shown only as set/unset."""
        shown = {var: "set" if getattr(self, name) else "unset" for name, var in _SECRETS.items()}
        for name, var in _PLAIN.items():
            value = getattr(self, name)
            shown[var] = ", ".join(value) if isinstance(value, tuple) else str(value)
        for var in _URLS:
            shown[var] = redact_url(shown[var])
        return dict(sorted(shown.items()))


def _names(configured: str, suffix: str) -> tuple[str, ...]:
    """Where a Slack token is read: the configured variable, then the bot's, then the-loop's."""
    return tuple(n for n in (configured, f"THELOOP_{suffix}", f"THE_LOOP_{suffix}") if n)


def short_secret(key: str, secret: str) -> str:
    """What is wrong with a secret set shorter than :data:`MIN_SECRET_CHARS`, naming ``key``
    and its length only; ``""`` for one long enough or unset."""
    if not secret or len(secret) >= MIN_SECRET_CHARS:
        return ""
    return (
        f"{key}: {len(secret)} characters, fewer than {MIN_SECRET_CHARS} "
        "(make one with `openssl rand -hex 32`)"
    )


def _secret_strength(secret: str, backend: str, errors: list[str]) -> tuple[str, ...]:
    """A short webhook secret: an error where the webhook faces Slack's world, else a warning.
    Only its length is ever said, never a character of it."""
    problem = short_secret("THELOOP_WEBHOOK_SECRET", secret)
    if not problem:
        return ()
    if backend == "SlackV3":
        errors.append(problem)
        return ()
    return (problem,)


def _backend(backend: str, bot_token: str, errors: list[str]) -> str:
    if backend not in BACKENDS:
        errors.append(f"THELOOP_BACKEND: must be one of {', '.join(BACKENDS)}, got {backend!r}")
    elif backend == "SlackV3" and not bot_token:
        errors.append("THELOOP_BACKEND: SlackV3 needs THELOOP_SLACK_BOT_TOKEN (an xoxb- token)")
    return backend


def _log_level(raw: str, errors: list[str]) -> str:
    """Any case: a typo must not silently log at another level."""
    level = raw.upper()
    if level not in LOG_LEVELS:
        levels = ", ".join(LOG_LEVELS)
        errors.append(f"THELOOP_LOG_LEVEL: must be one of {levels}, got {shown(level)}")
    return level


def _admins(raw: str, errors: list[str]) -> tuple[str, ...]:
    admins = tuple(people.admin_id(a) for a in raw.split(",") if a.strip())
    if raw and not admins:
        errors.append(f"THELOOP_ADMINS: no admin in {shown(raw)} (comma-separated ids)")
    return admins


def _data_dir(path: str, errors: list[str]) -> str:
    if os.path.exists(path) and not os.path.isdir(path):
        errors.append(f"THELOOP_DATA_DIR: {path!r} is a file, not a directory")
    return path


def _port(raw: str, errors: list[str]) -> int:
    """0 lets the OS pick a free port (tests); ``!theloop status`` shows the one it took."""
    if raw.isascii() and raw.isdigit() and 0 <= int(raw) <= 65535:
        return int(raw)
    errors.append(f"THELOOP_HTTP_PORT: must be an integer from 0 to 65535, got {shown(raw)}")
    return 0


def _shared_mode(get: Callable[..., str], errors: list[str]) -> dict[str, Any]:
    """THELOOP_DATABASE_URL (a ``postgresql://`` URL), THELOOP_LEASE_SECONDS, THELOOP_REPLICA."""
    shared: dict[str, Any] = {}
    url = get("THELOOP_DATABASE_URL")
    if url and urlsplit(url).scheme not in ("postgresql", "postgres"):
        # Only the scheme is echoed: the URL may carry a password.
        scheme = urlsplit(url).scheme or "none"
        errors.append(f"THELOOP_DATABASE_URL: must be a postgresql:// URL, got scheme {scheme!r}")
    shared["database_url"] = url
    lease = get("THELOOP_LEASE_SECONDS")
    try:
        shared["lease_seconds"] = float(lease) if lease else DEFAULT_LEASE_SECONDS
        if not 1 <= shared["lease_seconds"] <= 3600:
            raise ValueError
    except ValueError:
        errors.append(f"THELOOP_LEASE_SECONDS: must be seconds from 1 to 3600, got {shown(lease)}")
    if get("THELOOP_REPLICA"):
        shared["replica"] = get("THELOOP_REPLICA")
    return shared


def _relay_horizons(get: Callable[..., str], errors: list[str]) -> dict[str, float]:
    """THELOOP_RELAY_NOTICE_SECONDS and THELOOP_RELAY_GIVE_UP_SECONDS: seconds, the notice
    no later than the give-up."""
    found: dict[str, float] = {}
    for name, var, default in (
        ("relay_notice_seconds", "THELOOP_RELAY_NOTICE_SECONDS", DEFAULT_RELAY_NOTICE_SECONDS),
        ("relay_give_up_seconds", "THELOOP_RELAY_GIVE_UP_SECONDS", DEFAULT_RELAY_GIVE_UP_SECONDS),
    ):
        raw = get(var)
        try:
            found[name] = float(raw) if raw else default
            if not 1 <= found[name] <= 30 * 86400:
                raise ValueError
        except ValueError:
            errors.append(f"{var}: must be seconds from 1 to 2592000 (30 days), got {shown(raw)}")
            found[name] = default
    if found["relay_notice_seconds"] > found["relay_give_up_seconds"]:
        errors.append(
            "THELOOP_RELAY_NOTICE_SECONDS: must not be more than THELOOP_RELAY_GIVE_UP_SECONDS"
        )
    return found


def _slots(raw: str, errors: list[str]) -> int:
    """Delivery slots: at least one; past :data:`MAX_DELIVERY_SLOTS` Slack's workspace-wide
    limits, not the slots, are what holds deliveries back."""
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_DELIVERY_SLOTS:
        return int(raw)
    errors.append(
        f"THELOOP_DELIVERY_SLOTS: must be an integer from 1 to {MAX_DELIVERY_SLOTS}, "
        f"got {shown(raw)}"
    )
    return DEFAULT_DELIVERY_SLOTS


def _peer_urls(get: Callable[..., str], errors: list[str]) -> dict[str, str]:
    """GitHub's API, the-loop's API and stream, Slack's Web API, the bot's own address as
    the-loop reaches it: each checked as a URL."""
    return {
        name: _url(get(variable, default=default), variable, errors)
        for name, variable, default in (
            ("github_api", "THELOOP_GITHUB_API", "https://api.github.com"),
            ("loop_api", "THELOOP_LOOP_API", ""),
            ("loop_stream", "THELOOP_LOOP_STREAM", ""),
            ("slack_api_url", "THELOOP_SLACK_API_URL", ""),
            ("public_url", "THELOOP_PUBLIC_URL", ""),
        )
    }


def _url(raw: str, name: str, errors: list[str]) -> str:
    """An http(s) base URL, without a trailing slash; "" stays "" (the sink is off)."""
    if not raw:
        return ""
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        # Only the scheme is echoed: a URL may carry credentials in its userinfo.
        errors.append(f"{name}: must be an http(s) URL, got scheme {parts.scheme or 'none'!r}")
        return ""
    return raw.rstrip("/")
