"""`!theloop listen`: which rooms hear every message as words to the bot."""

from __future__ import annotations

from typing import Any

from looproom.catchup import listen_modes
from looproom.catchup.listen_modes import ADDRESSED, ALL, ListenAll, command, status_line

ROOM, OTHER = "C0LOOP0001", "C0OTHER001"


def _room_id(name: str) -> str:
    return {"#the-loop": ROOM, "#other": OTHER}.get(name, "")


def _said(modes: ListenAll, args: str, here: str = ROOM, *, direct: bool = False) -> str:
    return command(modes, args, here, _room_id, direct=direct)


def test_a_room_hears_only_words_to_the_bot_until_an_admin_switches_it() -> None:
    store: dict[str, Any] = {}
    modes = ListenAll(store)
    assert not modes.hears_all(ROOM)
    assert "now listens to everything" in _said(modes, "all")
    assert modes.hears_all(ROOM) and not modes.hears_all(OTHER)
    assert ListenAll(store).hears_all(ROOM), "kept in the storage, read again after a restart"
    assert "only words addressed to the bot" in _said(modes, "addressed")
    assert not ListenAll(store).hears_all(ROOM)


def test_the_status_says_which_rooms_listen_to_everything() -> None:
    modes = ListenAll({})
    assert status_line(modes) == "listening to everything: none (every room: addressed)"
    modes.switch(ROOM, ALL)
    assert status_line(modes) == f"listening to everything: <#{ROOM}>"


def test_another_room_is_named_by_name_or_as_slack_links_it() -> None:
    modes = ListenAll({})
    assert "`#other` now listens" in _said(modes, "all #other")
    assert "now listens" in _said(modes, "all <#C0LINKED1|elsewhere>")
    assert modes.rooms() == [OTHER, "C0LINKED1"]
    assert _said(modes, "") == "Listening to everything: <#C0OTHER001>, <#C0LINKED1>"


def test_what_cannot_be_switched_is_said_and_nothing_changes() -> None:
    modes = ListenAll({})
    assert _said(modes, "everything") == listen_modes.USAGE
    assert _said(modes, "all #the-loop extra") == listen_modes.USAGE
    assert "No room `#nowhere`" in _said(modes, "all #nowhere")
    assert "Say which room" in _said(modes, "all", "D0DIRECT01", direct=True)
    assert "Say which room" in _said(modes, ALL, "")
    assert modes.rooms() == []
    assert "the default" in _said(modes, "")


def test_a_room_switched_twice_is_kept_once_and_the_list_is_bounded() -> None:
    modes = ListenAll({})
    modes.switch(ROOM, ALL)
    modes.switch(ROOM, ALL)
    assert modes.rooms() == [ROOM]
    for n in range(listen_modes.MOST_ROOMS - 1):
        assert modes.switch(f"C{n:09d}", ALL)
    assert not modes.switch(OTHER, ALL)
    assert "already listen to everything" in _said(modes, "all #other")
    assert modes.switch(ROOM, ADDRESSED) and modes.switch(OTHER, ALL)
