"""A work item's own collaborators and its collaboration channel: applied as soon as a
decider's command is recorded, honoured by the authorization on that work item alone,
kept across restarts, and ended with the work item."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looproom.catchup.listen_modes import ListenAll
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.desk import Desk
from looproom.decide.effects import Effects
from looproom.decide.judging import Received, Where
from looproom.decide.room_names import Find
from looproom.decide.verdict import ADMITTED, REFUSED
from looproom.durable.queue import DurableQueue
from looproom.events import Event
from looproom.inbound.loop_records import to_event
from looproom.relay import forms, relay
from looproom.relay.sinks import LedgerSink, Sinks
from looproom.room.channel_moves import ChannelMoves
from looproom.room.memory import Memory
from looproom.room.roster import Roster
from looproom.room.routing import BindingBook
from looproom.settings import jira_config
from tests.unit.decide.test_desk import Room

ITEM, OTHER = "github:acme/api#7", "github:acme/api#8"
ALICE, EVE, DANA = "U0ALICE01", "U0EVE0001", "U0DANA001"


class Rig:
    """A desk over one store, as an activation builds it; ``again()`` is a restart."""

    def __init__(self, tmp_path: Path, store: dict[str, Any], find: Find | None = None) -> None:
        """``find``: a room's name → its id as Slack answers it (the desk looks names up)."""
        self.store, self.room = store, Room()
        self.book = BindingBook(store)
        self.roster = Roster(store)
        self.listening = ListenAll(store)
        self.effects = Effects(
            self.roster,
            ChannelMoves(store, self.book, self.room.reply),
            {DANA: "dana-gh"},
            listen=self.listening.switch,
        )
        queue = DurableQueue(tmp_path / "q.sqlite3", relay.RELAY)
        self.relay = relay.Relay(queue, Sinks(LedgerSink(tmp_path / "l.jsonl")), self.room)
        self.desk = Desk(
            Memory(store),
            self.relay,
            self.room,
            self.policy,
            recorded=self.effects.recorded,
            vet=self.effects.refusal,
            **({"find_room": find} if find is not None else {}),
            # Its threads stand for work items the room was shown (no event is played).
            bound=Bound(lambda _ref: True),
        )
        self._ts = 100

    #: Where decisions go; with ``jira``, the-loop's Jira ledger too.
    destinations = forms.Destinations()

    def policy(self) -> AccessPolicy:
        return AccessPolicy(
            "U0THELOOP",
            frozenset({ALICE}),
            roster=self.roster.snapshot(),
            destinations=self.destinations,
        )

    def say(self, member: str, text: str, item: str = ITEM, channel: str = "C1") -> Any:
        self._ts += 1
        said = Received(member, text, channel, f"{self._ts}.0", "50.0", to_bot=True)
        return self.desk.said(said, Where(item, thread_bound=True))


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path, {})


def test_a_decider_adds_a_collaborator_who_may_then_give_input_on_that_item_only(
    rig: Rig,
) -> None:
    assert rig.say(EVE, "<@U0THELOOP> use option 2").reason == "unauthorized"
    assert rig.say(ALICE, f"add-collaborator <@{EVE}>").status == ADMITTED
    assert rig.say(EVE, "<@U0THELOOP> use option 2").status == ADMITTED
    assert rig.say(EVE, "<@U0THELOOP> and here", item=OTHER).reason == "unauthorized"
    # Deciding and steering stay with the deciders.
    refused = rig.say(EVE, "stop")
    assert refused.status == REFUSED and "`control.command`" in refused.text
    assert rig.say(EVE, f"add-collaborator <@{DANA}>").reason == "act-not-granted"


def test_a_collaborator_may_not_add_anyone_and_a_stranger_is_refused(rig: Rig) -> None:
    assert rig.say(EVE, f"add-collaborator <@{EVE}>").reason == "unauthorized"
    assert rig.roster.snapshot() == {}


def test_a_login_counts_only_where_people_maps_a_member_to_it(rig: Rig) -> None:
    assert rig.say(ALICE, "add-collaborator @dana-gh @nobody-here").status == ADMITTED
    assert rig.roster.snapshot() == {ITEM: frozenset({DANA})}


def test_the_roster_survives_a_restart_and_ends_with_the_work_item(
    rig: Rig, tmp_path: Path
) -> None:
    rig.say(ALICE, f"add-collaborator <@{EVE}>")
    again = Rig(tmp_path / "again", rig.store)
    assert again.say(EVE, "<@U0THELOOP> still here").status == ADMITTED
    closed = Event.from_wire({"id": "c1", "eventType": "work-item.closed", "workItem": ITEM})
    again.effects.observe(closed)
    assert again.say(EVE, "<@U0THELOOP> gone?").reason == "unauthorized"


def _logged(command: str, effect: str, **who: str) -> dict[str, Any]:
    """A ``control.command`` record as the-loop's CLI or ticket ingress logs a grant."""
    return {"event": "control.command", "work_item": ITEM, "command": command,
            "source": "cli", "actor": "ops", "effect": effect, **who}  # fmt: skip


def test_a_grant_the_loop_logged_puts_the_member_or_mapped_login_on_the_roster(
    rig: Rig,
) -> None:
    for record in (
        _logged("add-collaborator", "granted", slack=EVE),
        _logged("add-collaborator", "granted", collaborator="dana-gh"),
        _logged("add-collaborator", "granted", collaborator="nobody-mapped"),
    ):
        event = to_event(record)
        assert event is not None
        rig.effects.observe(event)
    assert rig.roster.snapshot() == {ITEM: frozenset({EVE, DANA})}
    gone = to_event(_logged("remove-collaborator", "revoked", slack=EVE))
    assert gone is not None
    rig.effects.observe(gone)
    assert rig.roster.snapshot() == {ITEM: frozenset({DANA})}


def test_a_logged_command_that_changed_no_roster_is_not_read() -> None:
    for record in (
        _logged("add-collaborator", "already-granted", slack=EVE),
        _logged("remove-collaborator", "not-a-collaborator", slack=EVE),
        _logged("start", "spawned"),
        _logged("add-collaborator", "granted", slack="not-an-id"),
    ):
        assert to_event(record) is None, record


def test_remove_collaborator_takes_the_right_away(rig: Rig) -> None:
    rig.say(ALICE, f"add-collaborator <@{EVE}> <@{DANA}>")
    rig.say(ALICE, f"remove-collaborator <@{EVE}>")
    assert rig.roster.snapshot() == {ITEM: frozenset({DANA})}


def test_a_collaborator_command_naming_no_one_is_refused_whole(rig: Rig) -> None:
    verdict = rig.say(ALICE, f"add-collaborator <@{EVE}> please")
    assert verdict.status == REFUSED and "`please` is not a person" in verdict.text
    assert rig.relay.queue.depth() == 0 and rig.roster.snapshot() == {}


def test_add_channel_moves_the_work_item_and_tells_the_old_thread(rig: Rig) -> None:
    assert rig.say(ALICE, "add-channel <#C0WAR0001|war-room>").status == ADMITTED
    assert rig.book.room_for(ITEM, "#the-loop", ()) == "C0WAR0001"
    (note,) = [text for kind, _t, text in rig.room.of("reply") if "Moved to" in text]
    assert "<#C0WAR0001>" in note
    # Said in the new room, plainly, `remove-channel` undoes it; an admin's binding stays.
    rig.book.bind_room(OTHER, "C0ADMIN01")
    assert rig.say(ALICE, "remove-channel", channel="C0WAR0001").status == ADMITTED
    assert rig.book.room_for(ITEM, "#the-loop", ()) == "#the-loop"
    assert rig.book.room_bindings() == {OTHER: "C0ADMIN01"}


def test_a_move_ends_with_the_work_item_but_an_admins_binding_does_not(rig: Rig) -> None:
    rig.say(ALICE, "add-channel #war-room")
    rig.book.bind_room(OTHER, "C0ADMIN01")
    rig.say(ALICE, "cleanup")
    rig.effects.end(OTHER)
    assert rig.book.room_bindings() == {OTHER: "C0ADMIN01"}


def test_what_the_loop_never_got_is_taken_back_here(rig: Rig) -> None:
    rig.say(ALICE, f"add-collaborator <@{EVE}>")
    rig.say(ALICE, "add-channel #war-room")
    stored = [forms.decision_of(item.payload) for item in rig.relay.queue.list()]
    assert len(stored) == 2
    for decision in stored:
        assert decision is not None
        rig.effects.given_up(decision)  # the relay parked it for good
    assert rig.roster.snapshot() == {} and rig.book.room_bindings() == {}


def test_a_room_named_when_moved_is_the_room_its_id_names_when_moved_back(
    tmp_path: Path,
) -> None:
    store: dict[str, Any] = {}
    book = BindingBook(store)
    said: list[str] = []

    def known(room: str) -> str:
        return book.channel_id(room) or room

    moves = ChannelMoves(store, book, lambda _c, _t, text: said.append(text), known)
    moves.move(ITEM, "#war-room", ("C1", "50.0"))
    book.learn_channel_id("#war-room", "C0WAR0001")  # the first post there learnt it
    assert moves.back(ITEM, "C0WAR0001", ("C0WAR0001", "60.0"))
    assert book.room_bindings() == {} and "no longer" in said[-1]


def test_a_room_that_backs_another_work_item_is_refused(rig: Rig) -> None:
    """One room backs one work item, as in the-loop: a second is refused before anything
    is recorded, whether the room was moved to or bound by an admin."""
    assert rig.say(ALICE, "add-channel <#C0WAR0001|war-room>").status == ADMITTED
    taken = rig.say(ALICE, "add-channel <#C0WAR0001|war-room>", item=OTHER)
    assert taken.status == REFUSED and f"already the room of `{ITEM}`" in taken.text
    rig.book.bind_room("github:acme/api#9", "C0ADMIN01")
    assert rig.say(ALICE, "add-channel <#C0ADMIN01>", item=OTHER).status == REFUSED
    assert len(rig.relay.queue.list()) == 1  # only the first was relayed
    assert rig.say(ALICE, "add-channel <#C0WAR0001|war-room>").status == ADMITTED  # its own


def test_add_channel_with_listen_all_switches_the_room(rig: Rig) -> None:
    assert rig.say(ALICE, "add-channel <#C0WAR0001|war-room> --listen all").status == ADMITTED
    assert rig.listening.hears_all("C0WAR0001")
    assert rig.say(ALICE, "add-channel <#C0WAR0001> --listen addressed").status == ADMITTED
    assert not rig.listening.hears_all("C0WAR0001")
    wrong = rig.say(ALICE, "add-channel <#C0WAR0001> --listen loudly")
    assert wrong.status == REFUSED and "--listen all|mentions" in wrong.text


def test_a_room_named_as_people_type_it_is_recorded_by_its_id_or_refused(tmp_path: Path) -> None:
    looked_up: list[str] = []

    def find(name: str) -> tuple[str, str]:
        looked_up.append(name)
        found = {"#war-room": "C0WAR0001"}.get(name.lower(), "")
        return (found, "") if found else ("", "channel_not_found")

    rig = Rig(tmp_path, {}, find)
    assert rig.say(ALICE, "add-channel #War-Room --listen all").status == ADMITTED
    (stored,) = [forms.decision_of(item.payload) for item in rig.relay.queue.list()]
    assert stored is not None and stored.subjects == ("slack@C0WAR0001", "--listen", "all")
    assert stored.words == "#war-room"  # the name, for the people reading the record
    assert rig.book.room_bindings() == {ITEM: "C0WAR0001"}
    assert "C0WAR0001" in rig.listening.rooms()
    # The same room, named by its id, its link or its bare name, backs no second work item.
    for named in ("C0WAR0001", "<#C0WAR0001|war-room>", "war-room"):
        taken = rig.say(ALICE, f"add-channel {named}", item=OTHER)
        assert taken.status == REFUSED and f"already the room of `{ITEM}`" in taken.text
    lost = rig.say(ALICE, "add-channel #war-rom", item=OTHER)
    assert lost.reason == "room-not-found" and "no room called `#war-rom`" in lost.text
    assert rig.relay.queue.depth() == 1 and rig.book.room_bindings() == {ITEM: "C0WAR0001"}
    assert "C0WAR0001" not in looked_up  # an id is never looked up


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ("listing_truncated", "invite me to it"),
        ("missing_scope", "`channels:read` and `groups:read`"),
        ("ratelimited", "try again shortly"),
    ],
)
def test_a_name_slack_cannot_answer_for_is_refused_with_what_to_do(
    tmp_path: Path, error: str, words: str
) -> None:
    rig = Rig(tmp_path, {}, lambda _name: ("", error))
    verdict = rig.say(ALICE, "add-channel #war-room")
    assert verdict.status == REFUSED and words in verdict.text and "link it" in verdict.text
    assert rig.relay.queue.depth() == 0 and rig.book.room_bindings() == {}


def test_a_jira_ticket_named_as_the_channel_moves_nothing_in_slack(tmp_path: Path) -> None:
    """Without the-loop's Jira integration it is refused; with it, recorded for the-loop
    to mirror the work item there, and no Slack room is bound, looked up or switched."""
    looked_up: list[str] = []

    def find(name: str) -> tuple[str, str]:
        looked_up.append(name)
        return "", "channel_not_found"

    rig = Rig(tmp_path, {}, find)
    refused = rig.say(ALICE, "add-channel jira@OPS-13")
    assert refused.reason == "jira-channel" and "integrations.jira" in refused.text
    site = jira_config.parse(
        {"site": "acme.atlassian.net", "deployment": "cloud", "projects": {"OPS": {}}}, "jira", {}
    )
    rig.destinations = forms.Destinations(jira=site)  # the-loop's Jira ledger configured
    assert rig.say(ALICE, "add-channel jira@ops-13").status == ADMITTED
    (stored,) = [forms.decision_of(item.payload) for item in rig.relay.queue.list()]
    assert stored is not None and stored.subjects == ("jira@OPS-13",)
    assert rig.book.room_bindings() == {} and looked_up == [] and rig.listening.rooms() == []
