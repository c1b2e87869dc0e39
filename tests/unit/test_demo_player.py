"""``make demo``'s player: one real work item, in order, through the signed webhook."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.webhook_bot import SECRET, Bot, serving

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "demo"))
import play


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[Bot]:
    with serving(tmp_path) as running:
        yield running


def _secret(data_dir: Path) -> None:
    (data_dir / "theloop").mkdir(parents=True)
    (data_dir / play.SECRET_FILE).write_text(SECRET + "\n", encoding="ascii")


def _play(bot: Bot, data_dir: Path) -> int:
    return play.play(bot.url, data_dir, pace=0, answer_wait=0, start_wait=10)


def test_the_work_item_is_played_in_order_and_accepted_by_the_webhook(
    bot: Bot, tmp_path: Path
) -> None:
    _secret(tmp_path)
    assert _play(bot, tmp_path) == 0
    played = [(e.event_type, e.work_item) for e in bot.events()]
    expected = [play.event_of(stem.rstrip("*")) for stem in play.TOUR]
    assert played == [(e["eventType"], e["workItem"]) for e in expected]
    assert {item for _, item in played} == {"github:MadaraUchiha-314/the-loop#260"}


def test_playing_again_posts_nothing_twice(bot: Bot, tmp_path: Path) -> None:
    _secret(tmp_path)
    _play(bot, tmp_path)
    assert _play(bot, tmp_path) == 0
    assert len(bot.events()) == len(play.TOUR)


def test_without_the_consoles_secret_it_says_what_is_wrong(bot: Bot, tmp_path: Path) -> None:
    assert play.play(bot.url, tmp_path, pace=0, answer_wait=0, start_wait=0.1) == 1
    assert bot.events() == []


def test_every_pause_has_a_hint_naming_the_work_item() -> None:
    for stem in (s for s in play.TOUR if s.endswith("*")):
        assert play.ITEM in play.HINTS[stem[:2]]
