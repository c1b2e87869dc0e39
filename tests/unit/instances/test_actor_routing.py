"""Routing by who caused a work item: a work item no instance claims, opened by a person
an instance registered, becomes that instance's — kept, so a restart and the webhook agree;
a claim (the file's, or one learned before) always comes first, and a person nobody
registered leaves the work item waiting as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.durable.outcome import Delivered, RetryLater
from looproom.durable.queue import DurableQueue
from looproom.instances import owners as owners_module
from looproom.instances.actors import (
    Askers,
    Registry,
    causers_for,
    issue_authors,
    nobody,
    on_opened,
)
from looproom.instances.fleet import Fleet
from looproom.instances.owners import Owners
from looproom.instances.relay import RoutedLoop
from looproom.instances.report import describe_claims
from looproom.settings.instances import Actors, Claims, Instance
from tests.fakes.github_api import TOKEN, FakeGitHub

BOB, CAROL = "U0BOB0001", "U0CAROL01"
NEW = "github:gamma/x#1"
OLD = "github:gamma/x#5"


NOBODY, NO_CLAIM = Actors(), Claims()


def instance(name: str, claims: Claims = NO_CLAIM, actors: Actors = NOBODY) -> Instance:
    return Instance(name, name, (name * 32,), f"http://{name}:1", claims=claims, actors=actors)


A = instance("team-a", Claims(repos=("acme/*",), learn=False))
B = instance("team-b", Claims(repos=("beta/*",), learn=False), Actors((BOB,), ("carol-gh",)))
TOLD: list[tuple[str, str]] = []


def opened(store: dict[str, Any], people: dict[str, str] | None = None) -> Any:
    owners = Owners((A, B), store)
    TOLD.clear()
    told = lambda *pair: TOLD.append(pair)  # noqa: E731
    return owners, on_opened(told, owners, Registry((A, B)), people or {}, Askers(store))


def test_a_work_item_nobody_claims_goes_to_the_instance_that_registered_who_asked() -> None:
    store: dict[str, Any] = {}
    owners, hook = opened(store)
    assert owners.owner(NEW) is None
    hook(NEW, BOB)
    assert TOLD == [(NEW, BOB)]  # the room's own owner is still told first
    assert owners.owner(NEW) == B
    assert Owners((A, B), store).owner("github:GAMMA/x#1") == B  # kept: a restart reads it
    assert owners.claim(A, NEW) == B  # A's event about it would be refused, naming B


def test_the_github_login_people_names_routes_too() -> None:
    owners, hook = opened({}, people={CAROL: "Carol-GH"})
    hook(NEW, CAROL)
    assert owners.owner(NEW) == B


def test_a_claim_comes_before_who_asked() -> None:
    store: dict[str, Any] = {}
    owners, hook = opened(store)
    hook("github:acme/api#9", BOB)  # the file says acme/* is A's
    assert owners.owner("github:acme/api#9") == A
    learner = instance("team-c")
    Owners((A, B, learner), store).claim(learner, NEW)  # C's event named it first
    owners = Owners((A, B, learner), store)
    on_opened(lambda *_: None, owners, Registry((A, B, learner)), {}, Askers(store))(NEW, BOB)
    assert owners.owner(NEW) == learner


def test_nobody_registered_who_asked_so_it_waits_until_an_instance_does(
    tmp_path: Path,
) -> None:
    store: dict[str, Any] = {}
    inbox = DurableQueue(tmp_path / "inbox.sqlite3", "inbox")
    Fleet((A, B), store, inbox).on_opened(lambda *_: None, {CAROL: "Carol-X"})(NEW, CAROL)
    assert Owners((A, B), store).owner(NEW) is None  # it waits, as before
    sent: list[str] = []
    reply = {"path": "/sessions/reply", "json": {"ref": NEW, "text": "use staging"}}
    # The settings change and the bot starts again: C now registers Carol's login.
    c = instance("team-c", Claims(repos=("gamma/y",), learn=False), Actors(github=("carol-x",)))
    fleet = Fleet((A, B, c), store, inbox)
    relay = RoutedLoop(
        (A, B, c),
        fleet.owners,
        sink_for=lambda i, _f, _b: Plane(i.name, sent),
        unowned=fleet.route_unowned,
    )
    assert isinstance(relay.send(reply, key="k1"), Delivered)
    assert sent == [f"team-c:{NEW}"] and fleet.owners.owner(NEW) == c


def test_claims_full_leaves_it_unrouted_and_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 1)
    store: dict[str, Any] = {}
    owners, hook = opened(store)
    hook("github:gamma/x#2", BOB)
    hook(NEW, BOB)  # the one kept is in use: nothing is taken from it
    assert owners.owner("github:gamma/x#2") == B and owners.owner(NEW) is None
    assert owners.refused["team-b"] == 1


class Plane:
    """One instance's control plane, as the relay sees it: what it was sent."""

    def __init__(self, name: str, sent: list[str]) -> None:
        self.name, self.sent = name, sent

    def send(self, target: Any, *, key: str, unsure: bool = False, first_try: float = 0.0) -> Any:
        self.sent.append(f"{self.name}:{target['json']['ref']}")
        return Delivered("ok")


def test_the_fleet_routes_the_kickoff_and_the_relay_follows(tmp_path: Path) -> None:
    fleet = Fleet((A, B), {}, DurableQueue(tmp_path / "inbox.sqlite3", "inbox"))
    sent: list[str] = []
    relay = RoutedLoop((A, B), fleet.owners, sink_for=lambda i, _f, _b: Plane(i.name, sent))
    reply = {"path": "/sessions/reply", "json": {"ref": NEW, "text": "use staging"}}
    assert isinstance(relay.send(reply, key="k1"), RetryLater)  # nobody's yet: it waits
    fleet.on_opened(lambda *_: None, {})(NEW, BOB)
    assert isinstance(relay.send(reply, key="k1"), Delivered)
    assert sent == [f"team-b:{NEW}"]


def test_status_names_the_actors_and_counts_what_they_routed(tmp_path: Path) -> None:
    fleet = Fleet((A, B), {}, DurableQueue(tmp_path / "inbox.sqlite3", "inbox"))
    fleet.on_opened(lambda *_: None, {})(NEW, BOB)
    assert describe_claims(fleet, B) == (
        "work items: repos beta/*; 1 learned; actors 1 Slack, 1 GitHub"
    )
    assert describe_claims(fleet, A) == "work items: repos acme/*"


def test_the_author_of_an_issue_is_asked_of_github_once() -> None:
    with FakeGitHub({"gamma/x": {5}}) as github:
        github.authors[("gamma/x", 5)] = "Carol-GH"
        causers = issue_authors(github.url, TOKEN)
        assert causers("github:gamma/x#5") == [("github", "Carol-GH")]
        assert causers("https://github.com/gamma/x/issues/5") == [("github", "Carol-GH")]
        assert causers("github:gamma/x#6") == []  # GitHub does not know it: nobody
        assert causers("jira:acme.atlassian.net/OPS-1") == [] and causers("github:gamma/x") == []
        asked = [q.path for q in github.requests]
        assert asked == ["/repos/gamma/x/issues/5", "/repos/gamma/x/issues/6"]


def test_github_is_asked_only_when_an_instance_registers_logins_and_there_is_a_token() -> None:
    slack_only = instance("team-s", actors=Actors((BOB,)))
    assert causers_for((A, slack_only), "http://127.0.0.1:9", TOKEN) is nobody
    assert causers_for((A, B), "http://127.0.0.1:9", "") is nobody
    assert causers_for((A, B), "http://127.0.0.1:9", TOKEN) is not nobody


def test_an_issue_nobody_claims_goes_to_the_instance_that_registered_its_author(
    tmp_path: Path,
) -> None:
    store: dict[str, Any] = {}
    authors = {OLD: [("github", "Carol-GH")], NEW: [("github", "dave")]}
    inbox = DurableQueue(tmp_path / "inbox.sqlite3", "inbox")
    fleet = Fleet((A, B), store, inbox, causers=lambda ref: authors.get(ref, []))
    sent: list[str] = []
    relay = RoutedLoop(
        (A, B),
        fleet.owners,
        sink_for=lambda i, _f, _b: Plane(i.name, sent),
        unowned=fleet.route_unowned,
    )
    for ref in (OLD, NEW):
        reply = {"path": "/sessions/reply", "json": {"ref": ref, "text": "use staging"}}
        relay.send(reply, key=ref)
    assert sent == [f"team-b:{OLD}"]  # dave is nobody's: his work item waits
    assert Owners((A, B), store).owner(OLD) == B and fleet.owners.owner(NEW) is None


MEMBERS = ("U0M000000", "U0M000001", "U0M000002", "U0M000003")


@settings(max_examples=200, deadline=None)
@given(
    repos=st.lists(st.frozensets(st.integers(0, 2)), min_size=3, max_size=3),
    learns=st.lists(st.booleans(), min_size=3, max_size=3),
    whose=st.lists(st.none() | st.integers(0, 2), min_size=4, max_size=4),
    repo=st.integers(0, 3),
    first_sender=st.none() | st.integers(0, 2),
    asker=st.integers(0, 3),
)
def test_the_owner_is_the_files_then_the_first_sender_then_who_registered_the_asker(
    repos: list[frozenset[int]],
    learns: list[bool],
    whose: list[int | None],
    repo: int,
    first_sender: int | None,
    asker: int,
) -> None:
    """Three instances, each naming some of three repositories, learning or not, and
    registering some of four members (each member at most one instance's); a work item in
    one of four repositories (the fourth nobody names), perhaps sent about first by one
    instance, then asked for in Slack by one member."""
    fleet = [
        instance(
            f"team-{n}",
            Claims(repos=tuple(f"o/r{r}" for r in sorted(repos[n])), learn=learns[n]),
            Actors(tuple(m for m, owner in zip(MEMBERS, whose, strict=True) if owner == n)),
        )
        for n in range(3)
    ]
    work_item = f"github:o/r{repo}#1"
    store: dict[str, Any] = {}
    owners = Owners(fleet, store)
    if first_sender is not None:
        owners.claim(fleet[first_sender], work_item)
    hook = on_opened(lambda *_: None, owners, Registry(fleet), {}, Askers(store))
    hook(work_item, MEMBERS[asker])

    named = [n for n in range(3) if repo in repos[n]]
    registrar = whose[asker]
    if named:
        expected: int | None = named[0]
    elif first_sender is not None and learns[first_sender]:
        expected = first_sender
    else:
        expected = registrar
    found = Owners(fleet, store).owner(work_item)  # as the bot reads it after a restart
    assert (found.name if found else None) == (f"team-{expected}" if expected is not None else None)
