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
    events = bot.events()
    assert {e.work_item for e in events} == {"github:MadaraUchiha-314/the-loop#260"}
    played = [(e.event_type, str(e.detail.get("node", "")), e.text[:40]) for e in events]
    # The story a newcomer sees, written out: the checklist, requirements and their gate,
    # the quiz, the review, a question, then done and closed.
    assert [(kind, node) for kind, node, _ in played] == [
        ("comment.agent", ""),
        ("comment.agent", ""),
        ("phase.started", "phase-selection"),
        ("phase.started", "requirements-definition"),
        ("phase.progress", "requirements-approval"),
        ("phase-approval-pending", "requirements-approval"),
        ("phase.completed", "requirements-approval"),
        ("decision-pending", "spec-quiz"),
        ("phase.progress", "critic-review"),
        ("pr-review-pending", "human-approval"),
        ("session.awaiting_input", ""),
        ("work-item-complete", "complete"),
        ("work-item.closed", ""),
    ]
    assert played[0][2].startswith("## 🤖 the-loop — which phases")
    assert played[1][2].startswith("🤖 _the-loop_ — **phase selection")


def test_playing_again_posts_nothing_twice(bot: Bot, tmp_path: Path) -> None:
    _secret(tmp_path)
    _play(bot, tmp_path)
    assert _play(bot, tmp_path) == 0
    assert len(bot.events()) == 13  # the story above, once


def test_without_the_consoles_secret_it_says_what_is_wrong(bot: Bot, tmp_path: Path) -> None:
    assert play.play(bot.url, tmp_path, pace=0, answer_wait=0, start_wait=0.1) == 1
    assert bot.events() == []


def test_every_pause_has_a_hint_naming_the_work_item() -> None:
    for stem in (s for s in play.TOUR if s.endswith("*")):
        assert play.ITEM in play.HINTS[stem[:2]]
