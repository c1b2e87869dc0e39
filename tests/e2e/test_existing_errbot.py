"""A team's Errbot that already runs takes the bundle as docs/existing-errbot.md says.

A stock bot made by ``errbot --init`` — its own ``config.py``, Errbot's default Shelf
storage, the Text backend — gets exactly one line more: ``BOT_EXTRA_PLUGIN_DIR`` naming
this checkout's ``plugins/`` beside its own folder. With the ``THELOOP_*`` environment
(the webhook secret, the HTTP port, the settings file) TheLoop activates on that bot,
answers a command at its console, and posts a signed event from the-loop there.

The same bot can instead take the plugin with Errbot's own ``!repos install``: a clone of
this repository loads TheLoop alone (the storage and backend plugins beside it are not
mistaken for chat plugins), and the installed plugin is loaded again at the next start.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.botproc import ERRBOT, REPO, BotProcess
from tests.support import messages, signed
from tests.support.wait import wait_for

pytestmark = pytest.mark.e2e

SECRET = "existing-bot-secret-0123456789abcdef"
TIMEOUT = 60.0
#: The one line the guide adds to the bot's own configuration.
PLUGIN_DIR_LINE = "\nBOT_EXTRA_PLUGIN_DIR = [BOT_EXTRA_PLUGIN_DIR, {plugins!r}]\n"


#: What the guide adds for `!repos install` on a bot that cannot reach Errbot's plugin index.
NO_INDEX_LINE = "\nBOT_PLUGIN_INDEXES = ()\n"


def _stock_bot(tmp_path: Path, added: str) -> BotProcess:
    """A bot made by ``errbot --init``, its configuration with ``added`` appended."""
    home = tmp_path / "mybot"
    home.mkdir()
    made = subprocess.run(
        [str(ERRBOT), "--init"], cwd=home, capture_output=True, text=True, timeout=60
    )
    assert made.returncode == 0, made.stderr
    config = home / "config.py"
    generated = config.read_text(encoding="utf-8")
    assert 'BACKEND = "Text"' in generated and "STORAGE" not in generated  # Shelf, Errbot's
    config.write_text(generated + added)
    # THELOOP_CONFIG names it: the room posts what the-loop's agents say.
    (home / "theloop.yaml").write_text("slack:\n  subscribe: [comment.agent]\n")
    return BotProcess(
        home,
        backend="Text",
        console=True,
        config=config,
        env={"THELOOP_WEBHOOK_SECRET": SECRET},
    )


@pytest.fixture
def stock_bot(tmp_path: Path) -> Iterator[BotProcess]:
    bot = _stock_bot(tmp_path, PLUGIN_DIR_LINE.format(plugins=str(REPO / "plugins")))
    bot.start(timeout=90.0)
    try:
        yield bot
    finally:
        bot.kill()


def _repository_of_this_checkout(where: Path) -> Path:
    """A git repository holding what this checkout tracks, as a team's remote would."""
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, tracked):
        if (REPO / name).is_file():
            (where / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, where / name)
    git = ["git", "-c", "user.name=ops", "-c", "user.email=ops@example.invalid"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-gpg-sign", "-m", "x"]):
        subprocess.run([*git, *step], cwd=where, capture_output=True, check=True)
    return where


def _shown(bot: BotProcess, words: str) -> None:
    wait_for(
        lambda: words in bot.log_text(),
        TIMEOUT,
        lambda: f"{words!r} on the console; it shows:\n{bot.log_text()[-3000:]}",
    )


def test_a_stock_errbot_runs_theloop_from_the_plugin_dir_alone(stock_bot: BotProcess) -> None:
    stock_bot.type("!status plugins")
    _shown(stock_bot, "TheLoop")
    assert "Error" not in stock_bot.log_text()

    stock_bot.type("!theloop")
    _shown(stock_bot, "theloop posts the-loop's events into rooms and threads")

    body = json.dumps(messages.event("01", id="existing-01")).encode()
    headers = signed.webhook_headers(SECRET, body)
    status, _ = signed.post(stock_bot.host, stock_bot.port, signed.WEBHOOK_PATH, body, headers)
    assert status == 202
    _shown(stock_bot, "which phases does this work item need?")
    forged = signed.webhook_headers("another-secret-0123456789abcdefghij", body)
    assert signed.post(stock_bot.host, stock_bot.port, signed.WEBHOOK_PATH, body, forged)[0] == 401

    # The plugin kept its state in the bot's own storage: Errbot's Shelf, one file per plugin.
    data = stock_bot.data_dir / "data"
    assert list(data.glob("TheLoop.db*")), sorted(p.name for p in data.iterdir())
    assert not (data / "storage.sqlite3").exists()


def test_repos_install_of_this_repository_loads_theloop_on_a_stock_errbot(tmp_path: Path) -> None:
    remote = _repository_of_this_checkout(tmp_path / "ops" / "theloop")
    bot = _stock_bot(tmp_path, NO_INDEX_LINE)
    try:
        bot.start(wait=False)  # TheLoop is not there yet, so neither is its port
        bot.type(f"!repos install {remote}")
        _shown(bot, "has been installed correctly")
        bot.wait_ready(TIMEOUT)  # TheLoop activated and its server listens
        clone = bot.data_dir / "data" / "plugins" / "ops" / "theloop"  # <owner>/<repository>
        assert (clone / ".errbot-parts" / "storage" / "sqlite" / "sqlite.plug").is_file()
        assert "Did not find any plugin" not in bot.log_text(), (
            "a storage plugin taken for a chat one"
        )

        bot.type("!theloop")
        _shown(bot, "theloop posts the-loop's events into rooms and threads")

        bot.restart()  # installed once, loaded at every start
        body = json.dumps(messages.event("01", id="installed-01")).encode()
        headers = signed.webhook_headers(SECRET, body)
        assert signed.post(bot.host, bot.port, signed.WEBHOOK_PATH, body, headers)[0] == 202
        _shown(bot, "which phases does this work item need?")
    finally:
        bot.kill()
