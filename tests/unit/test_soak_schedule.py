"""The soak's fault schedule: what a seed promises a run of one bot, and of two replicas."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from soak.faults import DB_DOWN, KINDS, SHARED_KINDS, schedule

LEASE = 10.0
TEN_MINUTES = 600.0
seeds = st.integers(min_value=0, max_value=10**6)


def test_one_bots_schedule_is_what_it_was_before_the_shared_mode() -> None:
    # CI replays this seed; a red run must replay the same faults it always had.
    found = [(f.at, f.kind) for f in schedule(69449, 120)]
    assert found == [
        (10.9, "socket-drop"),
        (21.6, "slack-drop"),
        (34.4, "github-502"),
        (45.3, "kill"),
        (48.1, "slack-429"),
        (65.2, "loop-lost-answer"),
        (80.3, "slack-lost-answer"),
        (97.2, "loop-restart"),
        (101.9, "kill"),
        (113.5, "slack-5xx"),
    ]


@given(seeds)
def test_one_bot_never_meets_a_fault_of_the_shared_mode(seed: int) -> None:
    assert {f.kind for f in schedule(seed, TEN_MINUTES)} <= set(KINDS)


@given(seeds)
@settings(max_examples=50)
def test_ten_minutes_of_two_replicas_kill_each_and_restart_the_database(seed: int) -> None:
    faults = schedule(seed, TEN_MINUTES, replicas=2, lease=LEASE)
    kills = Counter(f.options["replica"] for f in faults if f.kind == "kill")
    assert kills[0] >= 4 and kills[1] >= 4  # ≥ 8 kills spread over both
    restarts = [f for f in faults if f.kind == "db-restart"]
    assert len(restarts) >= 2
    assert all(DB_DOWN[0] <= f.options["down"] <= DB_DOWN[1] for f in restarts)
    assert {"db-cut", "replica-pause"} <= {f.kind for f in faults}


@given(seeds)
@settings(max_examples=50)
def test_a_replica_stays_away_longer_than_a_lease_or_comes_back_at_once(seed: int) -> None:
    # Longer than a lease: the other replica must take its claims over meanwhile.
    faults = schedule(seed, TEN_MINUTES, replicas=2, lease=LEASE)
    for fault in faults:
        if fault.kind == "replica-pause":
            assert fault.options["for"] > LEASE
        if fault.kind == "kill":
            assert fault.options["after"] == 0.0 or fault.options["after"] > LEASE


@given(seeds)
@settings(max_examples=50)
def test_the_same_seed_the_same_schedule_and_every_fault_within_the_run(seed: int) -> None:
    first = schedule(seed, 120, replicas=2, lease=LEASE)
    assert first == schedule(seed, 120, replicas=2, lease=LEASE)
    assert all(0 <= f.at <= 120 for f in first)  # rounded to a tenth
    assert {f.kind for f in first} <= set(KINDS + SHARED_KINDS)
