"""A webhook secret of the bot's own for a first run on the Text backend.

On the Text backend (a console on one machine) an unset ``THELOOP_WEBHOOK_SECRET`` would
leave the webhook answering 503, so the first run could never show an event arriving. There
the bot makes a random secret once, in its data directory (mode 0600), and says how to send
with it. On every other backend an unset secret still answers 503: fail closed.
"""

from __future__ import annotations

import os
import secrets
import shlex
from pathlib import Path

from looproom.settings import Environment

FILE = "webhook-secret"
#: Where the plugin keeps its files inside Errbot's data directory.
PLUGIN_DIR = "theloop"
SAMPLE_ITEM = "github:acme/api#1"


def path_in(env: Environment) -> Path:
    """Where the local secret lives for ``env``."""
    return Path(env.data_dir).resolve() / PLUGIN_DIR / FILE


def local_secret_in(env: Environment) -> str:
    """The local secret already made for ``env``, or ``""`` (never off the Text backend)."""
    return _read(path_in(env)) if env.backend == "Text" else ""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        return ""


def ensure(env: Environment, directory: Path, *, console: bool) -> str:
    """The secret the webhook checks: the environment's; else, when the chat backend is
    Errbot's Text ``console``, a local one in ``directory`` (made on first use); else ``""``
    (the webhook answers 503)."""
    if env.webhook_secret or not console:
        return env.webhook_secret
    path = directory / FILE
    existing = _read(path)
    if existing:
        return existing
    path.parent.mkdir(parents=True, exist_ok=True)
    value = secrets.token_hex(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # made by another start a moment ago: use that one
        return _read(path)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(value + "\n")
    return value


def send_line(env: Environment, directory: Path) -> str:
    """One shell line, run from the repository, that sends a question to the local bot
    whose local secret is in ``directory``. It names the secret's file, never the secret."""
    host = "127.0.0.1" if env.http_host in ("0.0.0.0", "") else env.http_host
    url = f"http://{host}:{env.http_port}/theloop/events"
    secret = shlex.quote(str(directory.resolve() / FILE))
    return (
        "echo 'Which option? 1. the small change 2. the rewrite' | "
        f'THELOOP_WEBHOOK_SECRET="$(cat {secret})" .venv/bin/python loopside/theloop_send.py '
        f"--url {url} --secret-env THELOOP_WEBHOOK_SECRET --event-type session.awaiting_input "
        f"--work-item '{SAMPLE_ITEM}' --text-file -"
    )


def first_run_line(env: Environment, directory: Path, secret: str) -> str:
    """On the Text backend with a local ``secret``: what to tell the console's person (the
    one line that sends an event); ``""`` when the environment set the secret or none is."""
    if not secret or env.webhook_secret:
        return ""
    return "Send the room an event — paste this in another shell:\n" + send_line(env, directory)
