"""Slack's budgets outlive the bot: a bot started again after a kill goes on spending where
the last one stopped — each method's budget and each channel's posts — so a restart is not a
second burst into Slack's limits."""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom.slack import responses as t
from looproom.slack.kept_limits import FILE_NAME, Keeper, KeptLimits, KeptPacer
from looproom.slack.limits import Tier
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, Limit

ROOM, OTHER = "C0LOOP0001", "C0LOOP0002"
EDITS = {"chat.update": Tier(per_minute=1, burst=3)}
#: Edits a second apart, two at once.
QUICK = {"chat.update": Tier(per_minute=60, burst=2)}


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(ROOM, "the-loop")]) as fake:
        fake.limits = {
            "chat.update": Limit(per_minute=1, burst=3),
            "chat.postMessage": Limit(per_minute=60, burst=3, per_channel=True),
        }
        yield fake


def _bot(
    slack: FakeSlack, path: Path, wall: Clock | None = None, clock: Clock | None = None
) -> SlackTransport:
    """A bot's transport, its posts' pace and its method budgets kept at ``path``: one per
    process, each with a monotonic clock of its own."""
    keeper = Keeper(path, wall or Clock(5000.0))
    clock = clock or Clock(10.0)
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    return SlackTransport.beside(
        client,
        pacer=KeptPacer(keeper, clock=clock),
        limits=KeptLimits(keeper, EDITS, clock),
        max_inline_wait=0.0,
    )


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
    first = KeptLimits(Keeper(kept, wall), QUICK, clock)
    assert [first.reserve("chat.update", most=0.0) for _ in range(2)] == [0.0, 0.0]
    wall.now += 1.0  # down one second; the next process's clock starts anywhere
    again = KeptLimits(Keeper(kept, wall), QUICK, Clock(77.0))
    assert again.reserve("chat.update", most=0.0) == 0.0  # one second earned one turn
    assert again.reserve("chat.update", most=0.5) is None


def test_a_hold_slack_asked_for_outlives_the_restart_and_the_tier_stays_steady(
    tmp_path: Path,
) -> None:
    kept, wall = tmp_path / "kept.json", Clock(5000.0)
    tier = {"chat.update": Tier(per_minute=60, burst=10)}
    KeptLimits(Keeper(kept, wall), tier, Clock(10.0)).hold("chat.update", 30.0)
    wall.now += 10.0
    again = KeptLimits(Keeper(kept, wall), tier, Clock(3.0))
    assert again.held("chat.update") == pytest.approx(20.0)
    wall.now += 20.0
    later = KeptLimits(Keeper(kept, wall), tier, Clock(3.0))
    # After a 429 the method went without a burst; a restart does not bring the burst back.
    assert later.reserve("chat.update", most=0.0) == 0.0
    assert later.reserve("chat.update", most=0.5) is None


@pytest.mark.parametrize("text", ["", "{", "[]", '{"methods": {"chat.update": {"at": "x"}}}'])
def test_an_unreadable_kept_file_is_ignored_and_written_afresh(tmp_path: Path, text: str) -> None:
    kept = tmp_path / "kept.json"
    kept.write_text(text, encoding="utf-8")
    limits = KeptLimits(Keeper(kept), QUICK, Clock(1.0))
    assert limits.reserve("chat.update", most=0.0) == 0.0
    assert '"chat.update"' in kept.read_text(encoding="utf-8")


def test_a_kept_file_that_cannot_be_written_never_stops_a_call(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    limits = KeptLimits(Keeper(blocked / "kept.json"), QUICK, Clock(1.0))
    assert limits.reserve("chat.update", most=0.0) == 0.0


def test_a_bot_started_again_at_once_waits_for_the_posts_its_predecessor_made(
    slack: FakeSlack, tmp_path: Path
) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    first = _bot(slack, kept, wall, Clock(10.0))
    assert all(first.post_message(ROOM, text=f"p{n}").ok for n in range(3))
    again = _bot(slack, kept, wall, Clock(3.0))  # killed and started again, at once
    assert again.post_wait(ROOM) == pytest.approx(1.0)
    assert again.post_wait(OTHER) == 0.0  # another channel's pace is its own
    forgetful = _bot(slack, tmp_path / "another.json", wall, Clock(3.0))
    assert forgetful.post_wait(ROOM) == 0.0  # what it would have posted into Slack's 429
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [200, 200, 200]


def test_a_hold_slack_asked_for_on_a_post_outlives_the_restart(
    slack: FakeSlack, tmp_path: Path
) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    slack.fail("chat.postMessage", "429", retry_after=30)
    first = _bot(slack, kept, wall, Clock(10.0))
    assert first.post_message(ROOM, text="p0").kind == t.RATE_LIMITED
    wall.now += 10.0
    clock = Clock(3.0)
    again = _bot(slack, kept, wall, clock)
    assert again.post_wait(ROOM) == pytest.approx(20.0)
    clock.now += 20.0  # the hold is over: one post, then Slack's steady pace, no burst
    assert again.post_wait(ROOM) == 0.0
    assert again.post_message(ROOM, text="p1").ok
    assert again.post_wait(ROOM) == pytest.approx(1.0)


def test_the_time_a_bot_was_down_refills_its_channels(tmp_path: Path) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    first = KeptPacer(Keeper(kept, wall), clock=Clock(10.0))
    for _ in range(3):
        first.reserve(ROOM, most=0.0)
    wall.now += 1.5
    soon = KeptPacer(Keeper(kept, wall), clock=Clock(77.0))
    assert soon.wait(ROOM) == 0.0  # a second and a half earned one post, not the burst
    soon.reserve(ROOM, most=0.0)
    assert soon.wait(ROOM) == pytest.approx(0.5)
    wall.now += 60.0
    later = KeptPacer(Keeper(kept, wall), clock=Clock(5.0))
    for _ in range(3):  # long enough down: the whole burst again
        assert later.wait(ROOM) == 0.0
        later.reserve(ROOM, most=0.0)
    assert later.wait(ROOM) == pytest.approx(1.0)


def test_after_a_kept_hold_the_channel_posts_one_at_a_time(tmp_path: Path) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    KeptPacer(Keeper(kept, wall), clock=Clock(10.0)).hold(ROOM, 5.0)
    wall.now += 65.0  # down well past the hold: its bucket refilled from the hold's end
    assert KeptPacer(Keeper(kept, wall), clock=Clock(1.0)).wait(ROOM) == 0.0
    KeptPacer(Keeper(kept, wall), clock=Clock(10.0)).hold(OTHER, 5.0)
    wall.now += 5.0  # down just the hold: one post, then Slack's steady pace, no burst
    again = KeptPacer(Keeper(kept, wall), clock=Clock(1.0))
    assert again.wait(OTHER) == 0.0
    again.reserve(OTHER, most=0.0)
    assert again.wait(OTHER) == pytest.approx(1.0)


#: docs/rooms.md: a restarted bot keeps a hold of at most two minutes.
LONGEST_KEPT_HOLD = 120.0


@pytest.mark.parametrize(
    ("held", "inherited"),
    [
        (LONGEST_KEPT_HOLD + 1, LONGEST_KEPT_HOLD),
        (LONGEST_KEPT_HOLD, LONGEST_KEPT_HOLD),
        (LONGEST_KEPT_HOLD - 1, LONGEST_KEPT_HOLD - 1),
    ],
)
def test_a_kept_hold_is_never_longer_than_the_longest_a_restart_inherits(
    tmp_path: Path, held: float, inherited: float
) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    KeptPacer(Keeper(kept, wall), clock=Clock(10.0)).hold(ROOM, held)
    again = KeptPacer(Keeper(kept, wall), clock=Clock(3.0))
    assert again.wait(ROOM) == pytest.approx(inherited)


def test_a_clock_set_back_never_makes_the_kept_posts_later_than_now(tmp_path: Path) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    first = KeptPacer(Keeper(kept, wall), clock=Clock(10.0))
    for _ in range(3):
        first.reserve(ROOM, most=0.0)
    wall.now -= 3600.0  # the wall clock set back an hour while the bot was down
    again = KeptPacer(Keeper(kept, wall), clock=Clock(3.0))
    assert again.wait(ROOM) == pytest.approx(1.0)  # spent as of now: no hour's wait


def test_the_method_limits_and_the_channels_share_one_file_and_both_come_back(
    tmp_path: Path,
) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    keeper = Keeper(kept, wall)
    limits, pacer = KeptLimits(keeper, QUICK, Clock(10.0)), KeptPacer(keeper, clock=Clock(10.0))
    assert [limits.reserve("chat.update", most=0.0) for _ in range(2)] == [0.0, 0.0]
    pacer.reserve(ROOM, most=0.0)
    assert set(json.loads(kept.read_text(encoding="utf-8"))) == {"methods", "channels"}
    keeper = Keeper(kept, wall)
    limits, pacer = KeptLimits(keeper, QUICK, Clock(1.0)), KeptPacer(keeper, clock=Clock(1.0))
    assert limits.reserve("chat.update", most=0.5) is None
    assert pacer.wait(ROOM) == 0.0  # one of three spent
    for _ in range(2):
        pacer.reserve(ROOM, most=0.0)
    assert pacer.wait(ROOM) == pytest.approx(1.0)


def test_a_file_kept_before_the_channels_were_still_gives_the_methods_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    kept, wall = tmp_path / FILE_NAME, Clock(5000.0)
    limits = KeptLimits(Keeper(kept, wall), QUICK, Clock(10.0))
    assert [limits.reserve("chat.update", most=0.0) for _ in range(2)] == [0.0, 0.0]
    assert set(json.loads(kept.read_text(encoding="utf-8"))) == {"methods"}
    keeper = Keeper(kept, wall)
    assert KeptLimits(keeper, QUICK, Clock(1.0)).reserve("chat.update", most=0.5) is None
    assert KeptPacer(keeper, clock=Clock(1.0)).wait(ROOM) == 0.0
    assert "unreadable" not in caplog.text


def test_channels_with_their_whole_burst_back_are_not_written(tmp_path: Path) -> None:
    kept, clock = tmp_path / FILE_NAME, Clock(10.0)
    pacer = KeptPacer(Keeper(kept, Clock(5000.0)), clock=clock)
    for n in range(50):
        pacer.reserve(f"C{n:09d}", most=0.0)
    clock.now += 3.0  # every one of them refilled
    pacer.reserve(ROOM, most=0.0)
    assert list(json.loads(kept.read_text(encoding="utf-8"))["channels"]) == [ROOM]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "[]",
        '{"channels": []}',
        '{"channels": {"C0LOOP0001": {"tokens": "x", "at": 1}}}',
        '{"channels": {"C0LOOP0001": {"held": null}}}',
    ],
)
def test_an_unreadable_kept_file_is_ignored_with_a_warning_and_written_afresh(
    tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    kept = tmp_path / FILE_NAME
    kept.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        pacer = KeptPacer(Keeper(kept), clock=Clock(1.0))
    assert "unreadable" in caplog.text
    assert pacer.wait(ROOM) == 0.0
    pacer.reserve(ROOM, most=0.0)
    assert ROOM in json.loads(kept.read_text(encoding="utf-8"))["channels"]


def test_a_kept_file_that_cannot_be_written_never_stops_a_post(
    slack: FakeSlack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    bot = _bot(slack, blocked / FILE_NAME, Clock(5000.0), Clock(10.0))
    with caplog.at_level(logging.WARNING):
        assert all(bot.post_message(ROOM, text=f"p{n}").ok for n in range(2))
    assert bot.post_wait(ROOM) == 0.0  # still paced, in memory
    assert caplog.text.count("cannot keep Slack's limits") == 1


#: A step of the property: which channel; eighths of a second before it; a hold's seconds
#: (0: a post, taken if the pacer allows it now); and whether the bot was killed just
#: before, and then down how many eighths. Eighths keep every time exact.
STEPS = st.lists(
    st.tuples(
        st.sampled_from([ROOM, OTHER]),
        st.integers(0, 16),
        st.sampled_from([0, 0, 0, 1, 3]),
        st.none() | st.integers(0, 48),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(steps=STEPS, start=st.integers(0, 10**6))
def test_restarts_anywhere_change_no_channels_pace(
    steps: list[tuple[str, int, int, int | None]], start: int
) -> None:
    """Whatever was posted and held, and however often and long the bot was down, the bot
    started again allows each channel exactly what one bot going on all along would."""
    with tempfile.TemporaryDirectory() as folder:
        kept, wall, along = Path(folder) / FILE_NAME, Clock(1_700_000_000.0), Clock(0.0)
        continuous, clocks = Pacer(clock=along), [along, wall, Clock(start / 8)]
        bot = KeptPacer(Keeper(kept, wall), clock=clocks[2])
        for channel, eighths, hold, down in steps:
            if down is not None:  # killed, down a while, started with a clock of its own
                along.now, wall.now = along.now + down / 8, wall.now + down / 8
                clocks[2] = Clock(start / 8 + along.now)
                bot = KeptPacer(Keeper(kept, wall), clock=clocks[2])
            for clock in clocks:
                clock.now += eighths / 8
            assert bot.wait(channel) == continuous.wait(channel)
            if hold:
                bot.hold(channel, hold)
                continuous.hold(channel, hold)
            else:  # a post now, or none: the same answer from both
                assert bot.reserve(channel, most=0.0) == continuous.reserve(channel, most=0.0)
