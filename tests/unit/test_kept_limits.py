"""Slack's budgets outlive the bot: a bot started again after a kill goes on spending where
the last one stopped, so a restart is not a second burst into Slack's limits."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from slack_sdk import WebClient

from looproom.slack import replies as t
from looproom.slack.kept_limits import KeptLimits
from looproom.slack.limits import Tier
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, Limit

ROOM = "C0LOOP0001"
EDITS = {"chat.update": Tier(per_minute=1, burst=3)}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        fake.limits = {"chat.update": Limit(per_minute=1, burst=3)}
        yield fake


def _bot(slack: FakeSlack, path: Path) -> SlackTransport:
    """A bot's transport, with its limits kept at ``path``: one per process."""
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    return SlackTransport.beside(client, limits=KeptLimits(path, EDITS))


def test_a_bot_started_again_does_not_spend_the_burst_its_predecessor_spent(
    slack: FakeSlack, tmp_path: Path
) -> None:
    kept = tmp_path / "slack-limits.json"
    first = _bot(slack, kept)
    ts = first.post_message(ROOM, text="v0").ts
    assert all(first.update_message(ROOM, ts, text=f"v{n}").ok for n in (1, 2, 3))
    again = _bot(slack, kept)  # killed and started again, at once
    held = again.update_message(ROOM, ts, text="v4")
    assert held.kind == t.RATE_LIMITED and held.retry_after and held.retry_after > 2
    # Slack never had to say no: the call over its budget was never made.
    assert [c.status for c in slack.calls_to("chat.update")] == [200, 200, 200]


def test_without_the_kept_file_a_restart_would_spend_into_slacks_limit(
    slack: FakeSlack, tmp_path: Path
) -> None:
    first = _bot(slack, tmp_path / "one.json")
    ts = first.post_message(ROOM, text="v0").ts
    assert all(first.update_message(ROOM, ts, text=f"v{n}").ok for n in (1, 2, 3))
    forgetful = _bot(slack, tmp_path / "another.json")
    assert forgetful.update_message(ROOM, ts, text="v4").kind == t.RATE_LIMITED
    assert [c.fault for c in slack.calls_to("chat.update")] == ["", "", "", "limit"]


def test_the_time_a_bot_was_down_refills_what_it_spent(tmp_path: Path) -> None:
    kept, wall, clock = tmp_path / "kept.json", Clock(5000.0), Clock(10.0)
    first = KeptLimits(kept, {"chat.update": Tier(per_minute=60, burst=2)}, clock, wall)
    assert [first.reserve("chat.update", most=0.0) for _ in range(2)] == [0.0, 0.0]
    wall.now += 1.0  # down one second; the next process's clock starts anywhere
    again = KeptLimits(kept, {"chat.update": Tier(per_minute=60, burst=2)}, Clock(77.0), wall)
    assert again.reserve("chat.update", most=0.0) == 0.0  # one second earned one turn
    assert again.reserve("chat.update", most=0.5) is None


def test_a_hold_slack_asked_for_outlives_the_restart_and_the_tier_stays_steady(
    tmp_path: Path,
) -> None:
    kept, wall = tmp_path / "kept.json", Clock(5000.0)
    tier = {"chat.update": Tier(per_minute=60, burst=10)}
    KeptLimits(kept, tier, Clock(10.0), wall).hold("chat.update", 30.0)
    wall.now += 10.0
    again = KeptLimits(kept, tier, Clock(3.0), wall)
    assert again.held("chat.update") == pytest.approx(20.0)
    wall.now += 20.0
    later = KeptLimits(kept, tier, Clock(3.0), wall)
    # After a 429 the method went without a burst; a restart does not bring the burst back.
    assert later.reserve("chat.update", most=0.0) == 0.0
    assert later.reserve("chat.update", most=0.5) is None


@pytest.mark.parametrize("text", ["", "{", "[]", '{"methods": {"chat.update": {"at": "x"}}}'])
def test_an_unreadable_kept_file_is_ignored_and_written_afresh(tmp_path: Path, text: str) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text(text, encoding="utf-8")
    limits = KeptLimits(kept, {"chat.update": Tier(per_minute=60, burst=2)}, Clock(1.0))
    assert limits.reserve("chat.update", most=0.0) == 0.0
    assert '"chat.update"' in kept.read_text(encoding="utf-8")


def test_a_kept_file_that_cannot_be_written_never_stops_a_call(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    limits = KeptLimits(blocked / "kept.json", {"chat.update": Tier(60, 2)}, Clock(1.0))
    assert limits.reserve("chat.update", most=0.0) == 0.0
