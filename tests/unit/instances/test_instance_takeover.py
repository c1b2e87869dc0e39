"""One the-loop instance cannot take another's work item, on either store.

Two instances that both learn share one bot, assembled as the plugin assembles it, its
state in Errbot's storage on the bundle's SQLite plugin or in the shared PostgreSQL
database. The attacker signs its events right (it is a configured instance); what it must
not do is own the victim's work item:

- the alias attack: it names the victim's work item another way — GitHub's owner and
  repository in another case, its page's address, the Jira site in capitals;
- the eviction attack: it signs enough events about junk work items to push the victim's
  live claim out of the bounded book of learned claims, then names the victim's work item.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from looproom import configured
from looproom.assembly import Activation
from looproom.doctor import instances as instance_check
from looproom.doctor.findings import PROBLEM
from looproom.events import Event
from looproom.inbound import webhook as ingress
from looproom.inbound.signing import sign
from looproom.instances import owners as owners_module
from looproom.settings import Settings
from tests.support.errbot_storage import open_sqlite_storage

SECRET_A, SECRET_B = "a" * 40, "b" * 40
VICTIM = "github:acme/api#7"
SETTINGS = """
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: http://127.0.0.1:9
    workItems: {prefix: ["github:bound/", "jira:acme.atlassian.net/"]}
  team-b:
    secret: {env: TEAM_B_SECRET}
    api: http://127.0.0.1:9
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def make_room(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Activation]]:
    """A bot with two learning instances, its state on one store or the other; each call
    is the bot started again on the same state."""
    path = tmp_path / "theloop.yaml"
    path.write_text(SETTINGS, encoding="utf-8")
    env = {
        "THELOOP_CONFIG": str(path),
        "THELOOP_DATA_DIR": str(tmp_path / "data"),
        "TEAM_A_SECRET": SECRET_A,
        "TEAM_B_SECRET": SECRET_B,
    }
    if request.param == "postgresql":
        env["THELOOP_DATABASE_URL"] = request.getfixturevalue("database_url")
    built: list[Activation] = []

    def make() -> Activation:
        store = open_sqlite_storage(tmp_path, "TheLoop")
        room = Activation(
            configured.read(env)[0],
            Settings(),
            store=store,
            data_dir=tmp_path / f"data-{len(built)}",
            slack=None,
            say=lambda _to, _text: None,
            admins=("@admin",),
            bot_member=lambda: "@theloop",
        )
        built.append(room)
        return room

    yield make
    for room in built:
        room.stop()


_IDS = iter(range(1_000_000))


def post(room: Activation, work_item: str, secret: str) -> ingress.Answer:
    """An event about ``work_item``, signed with ``secret``, at the bot's webhook."""
    event = {"id": f"e{next(_IDS)}", "eventType": "session.awaiting_input", "workItem": work_item}
    body = json.dumps(event).encode()
    stamp = int(time.time())
    headers = {
        "X-TheLoop-Timestamp": str(stamp),
        "X-TheLoop-Signature": sign(secret, stamp, body),
    }
    return room.routes.receive(ingress.Request("POST", headers, body, len(body)))


def owner_of(room: Activation, work_item: str) -> str:
    assert room.fleet is not None
    owner = room.fleet.owners.owner(work_item)
    return owner.name if owner is not None else ""


@pytest.mark.parametrize(
    "alias",
    [
        "github:ACME/api#7",
        "github:acme/API#7",
        "github:GitHub.com/acme/api#7",
        "https://github.com/acme/api/issues/7",
        "https://github.com/Acme/Api/pull/7",
    ],
)
def test_the_alias_attack_another_spelling_of_a_learned_work_item_is_refused(
    make_room: Callable[[], Activation], alias: str
) -> None:
    room = make_room()
    assert post(room, VICTIM, SECRET_A).status == 202  # team-a learns it
    taken = post(room, alias, SECRET_B)
    assert taken.status == 403, taken.body
    assert "belongs to instance team-a" in taken.body["error"]
    assert owner_of(room, alias) == "team-a"
    assert owner_of(room, VICTIM) == "team-a"


@pytest.mark.parametrize(
    "alias",
    [
        "github:BOUND/api#1",
        "github:Bound/Api#1",
        "https://github.com/BOUND/api/issues/1",
        "jira:ACME.atlassian.net/OPS-12",
    ],
)
def test_the_alias_attack_on_a_configured_prefix_the_configured_bound_wins(
    make_room: Callable[[], Activation], alias: str
) -> None:
    room = make_room()
    taken = post(room, alias, SECRET_B)  # nobody learned it: it must not be B's to learn
    assert taken.status == 403, taken.body
    assert "belongs to instance team-a" in taken.body["error"]
    assert owner_of(room, alias) == "team-a"


def test_a_claim_learned_under_another_spelling_before_the_upgrade_is_still_found(
    make_room: Callable[[], Activation],
) -> None:
    room = make_room()
    room.stores.state["instances.claims"] = {"github:ACME/Api#7": "team-a"}  # as kept before
    assert owner_of(room, "github:ACME/Api#7") == "team-a"
    assert owner_of(room, VICTIM) == "team-a"
    assert post(room, VICTIM, SECRET_B).status == 403
    assert post(room, VICTIM, SECRET_A).status == 202


def test_the_eviction_attack_junk_events_never_push_out_a_live_claim(
    make_room: Callable[[], Activation], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 3)
    room = make_room()
    assert post(room, VICTIM, SECRET_A).status == 202
    # At the cap: the victim's claim and two of the attacker's — all three kept.
    assert post(room, "github:junk/x#1", SECRET_B).status == 202
    assert post(room, "github:junk/x#2", SECRET_B).status == 202
    # One past it: the new claim is refused, loudly, and nobody's claim goes.
    refused = post(room, "github:junk/x#3", SECRET_B)
    assert refused.status == 503, refused.body
    assert "claims" in refused.body["error"] and "3" in refused.body["error"]
    assert refused.headers.get("Retry-After")
    taken = post(room, VICTIM, SECRET_B)
    assert taken.status == 403 and "belongs to instance team-a" in taken.body["error"]
    assert owner_of(room, VICTIM) == "team-a"
    assert post(room, VICTIM, SECRET_A).status == 202  # the victim goes on being heard
    assert owner_of(room, "github:junk/x#3") == ""
    metrics = room.routes.metrics_text()[0].decode()
    # (on PostgreSQL each sample also names the replica that counted it)
    assert re.search(
        r'theloop_instance_claims_refused_total\{instance="team-b"[^}]*\} 1\.0', metrics
    )
    assert room.fleet is not None
    found = instance_check.fleet_findings(
        room.fleet, room.inbox, room.decisions.relay.queue, time.time()
    )
    cap = [f for f in found if "learned claims" in f.subject]
    assert cap and cap[0].level == PROBLEM, found
    assert "3" in cap[0].says and "team-b" in cap[0].says


def test_a_claim_refused_at_the_cap_is_taken_once_room_is_made(
    make_room: Callable[[], Activation], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 1)
    room = make_room()
    assert post(room, VICTIM, SECRET_A).status == 202
    assert post(room, "github:junk/x#1", SECRET_B).status == 503
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 2)  # the operator raised the cap
    assert post(room, "github:junk/x#1", SECRET_B).status == 202
    assert owner_of(room, "github:junk/x#1") == "team-b"
    assert owner_of(room, VICTIM) == "team-a"


def test_learned_claims_survive_a_restart_on_the_same_store(
    make_room: Callable[[], Activation],
) -> None:
    first = make_room()
    assert post(first, "github:ACME/api#7", SECRET_A).status == 202
    first.stop()
    again = make_room()
    assert owner_of(again, "https://github.com/acme/api/issues/7") == "team-a"
    assert post(again, VICTIM, SECRET_B).status == 403


def test_a_new_claim_from_a_stream_at_the_cap_is_read_again_later_not_skipped(
    make_room: Callable[[], Activation], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(owners_module, "MOST_CLAIMS", 1)
    room = make_room()
    assert room.fleet is not None
    team_a, team_b = room.fleet.instances
    assert post(room, VICTIM, SECRET_A).status == 202
    depth = room.inbox.depth()
    junk = Event.from_wire(
        {"id": "s1", "eventType": "session.awaiting_input", "workItem": "github:j/x#1"}
    )
    # The follower reads a record again when its accept raises; a False would skip it.
    with pytest.raises(owners_module.ClaimsFull):
        room.fleet.admit(team_b, junk)
    assert room.inbox.depth() == depth  # nothing stored
    again = Event.from_wire({"id": "s2", "eventType": "session.awaiting_input", "workItem": VICTIM})
    assert room.fleet.admit(team_b, again) is False  # another's work item: skipped
    assert room.fleet.admit(team_a, again) is True
