"""Who owns a work item: the file's claims before any learned one, and a learned claim
taken once — by one instance, even when two race for it on two replicas of the shared
database."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from looproom.instances import owners as owners_module
from looproom.instances.owners import ClaimsFull, Owners
from looproom.postgres.database import Database
from looproom.postgres.state import PostgresState
from looproom.settings.instances import Claims, Instance


def instance(name: str, **claims: Any) -> Instance:
    return Instance(name, name, (name * 32,), f"http://{name}:1", claims=Claims(**claims))


A = instance("team-a", repos=("acme/*",), prefixes=("jira:OPS-",))
B = instance("team-b")
QUIET = instance("team-c", repos=("quiet/api",), learn=False)
GONE = instance("team-gone")


def test_the_files_claims_win_over_whoever_sends_first() -> None:
    owners = Owners((A, B, QUIET), {})
    assert owners.claim(B, "github:acme/api#7") == A
    assert owners.claim(B, "jira:OPS-12") == A
    assert owners.claim(B, "github:Acme/API#7") == A  # GitHub's names ignore case
    assert owners.owner("github:quiet/api#1") == QUIET


def test_the_first_instance_to_send_about_a_work_item_nobody_claims_keeps_it() -> None:
    store: dict[str, Any] = {}
    owners = Owners((A, B, QUIET), store)
    assert owners.owner("github:beta/web#3") is None
    assert owners.claim(B, "github:beta/web#3") == B
    assert owners.claim(A, "github:beta/web#3") == B
    assert owners.claim(QUIET, "github:other/x#1") is None  # it does not learn
    again = Owners((A, B, QUIET), store)  # the claim is kept in the store, not in memory
    assert again.owner("github:beta/web#3") == B
    assert again.learned_count("team-b") == 1 and again.learned_count("team-a") == 0


def test_a_claim_of_an_instance_no_longer_configured_is_learned_again() -> None:
    store: dict[str, Any] = {}
    Owners((A, B, GONE), store).claim(GONE, "github:beta/web#3")
    owners = Owners((A, B), store)  # the settings no longer name team-gone
    assert owners.owner("github:beta/web#3") is None
    assert owners.claim(B, "github:beta/web#3") == B


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


DAY = 86_400.0


def test_a_claim_used_within_the_window_is_kept_past_the_cap_one_idle_longer_makes_room(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 2)
    clock, store = Clock(), {}
    owners = Owners((A, B), store, clock=clock)
    assert owners.claim(A, "github:beta/web#1") == A
    assert owners.claim(B, "github:beta/web#2") == B
    clock.now += owners_module.IN_USE_SECONDS - DAY
    assert owners.claim(A, "github:beta/web#1") == A  # used again: refreshed
    clock.now += 2 * DAY  # B's claim is now idle past the window, A's is not
    assert owners.claim(B, "github:beta/web#3") == B  # B's idle claim made room
    assert owners.owner("github:beta/web#1") == A
    assert owners.owner("github:beta/web#2") is None
    with pytest.raises(ClaimsFull):  # both kept claims are in use now
        owners.claim(B, "github:beta/web#4")
    assert owners.refused == {"team-b": 1}


def test_a_relayed_call_keeps_its_claim_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 1)
    clock, store = Clock(), {}
    owners = Owners((A, B), store, clock=clock)
    assert owners.claim(A, "github:beta/web#1") == A
    clock.now += owners_module.IN_USE_SECONDS - DAY
    assert owners.owner("github:beta/web#1", used=True) == A
    assert owners.owner("github:beta/web#1") == A  # a look-up alone refreshes nothing
    clock.now += 2 * DAY
    with pytest.raises(ClaimsFull):
        owners.claim(B, "github:beta/web#2")
    clock.now += owners_module.IN_USE_SECONDS
    assert owners.claim(B, "github:beta/web#2") == B


def test_claims_of_an_instance_no_longer_configured_make_room_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 2)
    store: dict[str, Any] = {}
    Owners((A, B, GONE), store).claim(GONE, "github:gone/x#1")
    owners = Owners((A, B), store)
    assert owners.claim(A, "github:beta/web#1") == A
    assert owners.claim(B, "github:beta/web#2") == B
    assert owners.owner("github:beta/web#1") == A


@pytest.fixture
def two_replicas(database_url: str) -> Iterator[tuple[PostgresState, PostgresState]]:
    here, there = Database(database_url), Database(database_url)  # two processes' pools
    yield PostgresState(here), PostgresState(there)
    here.close()
    there.close()


def test_replicas_racing_for_a_work_item_agree_on_one_owner(
    two_replicas: tuple[PostgresState, PostgresState],
) -> None:
    replicas = [Owners((A, B), state) for state in two_replicas]
    items = [f"github:beta/web#{n}" for n in range(20)]
    won: dict[tuple[str, str], str] = {}

    def race(owners: Owners, sender: Instance) -> None:
        for item in items:
            found = owners.claim(sender, item)
            assert found is not None
            won[(sender.name, item)] = found.name

    threads = [
        threading.Thread(target=race, args=(replicas[0], A)),
        threading.Thread(target=race, args=(replicas[1], B)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for item in items:
        # Both senders were told the same owner, and every replica reads that one.
        assert won[("team-a", item)] == won[("team-b", item)]
        for owners in replicas:
            owner = owners.owner(item)
            assert owner is not None and owner.name == won[("team-a", item)]
