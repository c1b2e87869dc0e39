"""The environment and the settings file read together, in the order each needs the other.

The file is found through the environment (``THELOOP_CONFIG``), and the environment's
Slack tokens through the file (``slack.botTokenEnv``/``appTokenEnv``, as the-loop names
them): so the file is read first, then the environment with the names it gives. Both
``config.py`` and the plugin read them here, so they agree — on the tokens, and on how
Slack's messages reach the bot (``slack.read.mode``), which decides how the backend runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from looproom.instances import resolve
from looproom.settings import ConfigError, Environment, Settings
from looproom.settings import read as reading
from looproom.settings.environment import DEFAULT_CONFIG_PATH


def read(env: Mapping[str, str]) -> tuple[Environment, Settings]:
    """The environment and the settings; :class:`looproom.settings.ConfigError` names
    what is wrong in either."""
    named = env.get("THELOOP_CONFIG", "").strip()
    settings = Settings.load(named or DEFAULT_CONFIG_PATH, required=bool(named))
    environment = Environment.from_env(
        env, bot_token_env=settings.bot_token_env, app_token_env=settings.app_token_env
    )
    if settings.instances:  # each instance's secrets, from where the file names them
        errors: list[str] = []
        instances = resolve.resolve(settings.instances, env, errors)
        if errors:
            raise ConfigError(errors, settings.source or "the environment")
        environment = replace(environment, instances=instances)
    if environment.backend == "SlackV3":  # a mode set must have what it needs to hear
        missing = reading.needs(settings.read.mode, **_tokens(environment))
        if missing:
            raise ConfigError([missing], settings.source or "the settings")
    return environment, settings


def environment(env: Mapping[str, str]) -> Environment:
    """The environment alone, for ``config.py``: a settings file it cannot read is the
    plugin's to report (to the admins, naming the key), so here only its token names
    are taken from it, when it reads."""
    try:
        return read(env)[0]
    except ConfigError as exc:
        if exc.source == "the environment":
            raise
    return Environment.from_env(env)


def way_in(env: Mapping[str, str]) -> str:
    """How Slack's messages reach the bot (``looproom.settings.read``'s modes), for
    ``config.py`` to start the backend that way. A file that does not read is the plugin's
    to report; meanwhile the tokens decide, as when no mode is set."""
    try:
        environment, settings = read(env)
        return reading.way_of(settings.read, environment)
    except ConfigError:
        return reading.way_of(reading.ReadSettings(), Environment.from_env(env))


def _tokens(environment: Environment) -> dict[str, bool]:
    return {
        "app_token": bool(environment.slack_app_token),
        "signing_secret": bool(environment.slack_signing_secret),
    }
