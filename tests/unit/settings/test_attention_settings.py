"""``attention:`` read from the settings file: quiet by default, a room's own keys over
everyone's, and every bad key named."""

from __future__ import annotations

import pytest

from looproom.settings import ConfigError, Settings
from looproom.settings.attention import DEFAULT_ESCALATE, DEFAULT_REMIND, RoomAttention


def test_nothing_configured_means_nobody_is_messaged() -> None:
    attention = Settings.from_mapping({}).attention
    assert attention.of("C1") == RoomAttention()
    assert (attention.of("C1").direct, attention.any_direct()) == (False, False)
    assert (attention.default.remind_after, attention.default.escalate_after) == (
        DEFAULT_REMIND,
        DEFAULT_ESCALATE,
    )


def test_a_room_takes_everyones_keys_and_its_own_over_them() -> None:
    attention = Settings.from_mapping(
        {
            "attention": {
                "remindAfter": 60,
                "escalateAfter": 120,
                "escalateTo": ["S0LEADS", "@oncall"],
                "workingHours": "08:30-17:00",
                "rooms": {"#payments": {"direct": True, "ask": "deciders"}, "C9": {}},
            }
        }
    ).attention
    payments = attention.of("C7", {"#payments": "C7"}.get)
    assert (payments.direct, payments.ask, payments.remind_after) == (True, "deciders", 60)
    assert (payments.escalate_to, payments.hours) == (("S0LEADS", "@oncall"), (510, 1020))
    assert attention.of("C9").direct is False and attention.any_direct() is True
    assert attention.of("C8", {"#payments": "C7"}.get).direct is False


@pytest.mark.parametrize(
    ("raw", "named"),
    [
        ({"direct": "yes"}, "attention.direct: expected true or false"),
        ({"ask": "everyone"}, "attention.ask: expected owner or deciders"),
        ({"remindAfter": 0}, "attention.remindAfter: expected a whole number of seconds ≥ 1"),
        ({"remindAfter": 10, "escalateAfter": 10}, "escalateAfter: must be longer"),
        ({"escalateTo": ["#room"]}, "attention.escalateTo[0]: expected U…, W…, S…"),
        ({"workingHours": "18:00-09:00"}, "workingHours: the end must come after the start"),
        ({"workingHours": "9-5"}, "workingHours: expected HH:MM-HH:MM"),
        ({"rooms": {"#x": {"snooze": 1}}}, "attention.rooms['#x'].snooze: unknown key"),
        ({"remind": 1}, "attention.remind: unknown key"),
        ({"snoozeFor": 0}, "attention.snoozeFor: expected a whole number of seconds ≥ 1"),
        ({"rooms": {"#x": {"snoozeFor": "1h"}}}, "attention.rooms['#x'].snoozeFor: expected"),
    ],
)
def test_a_bad_key_is_named(raw: dict, named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        Settings.from_mapping({"attention": raw})


def test_the_edges_one_second_and_midnight_are_taken() -> None:
    room = Settings.from_mapping(
        {"attention": {"remindAfter": 1, "escalateAfter": 2, "workingHours": "00:00-24:00"}}
    ).attention.default
    assert (room.remind_after, room.escalate_after, room.hours) == (1, 2, (0, 1440))


def test_remind_me_later_puts_a_reminder_back_an_hour_unless_a_room_says() -> None:
    attention = Settings.from_mapping({"attention": {"rooms": {"C9": {"snoozeFor": 1}}}}).attention
    assert (attention.default.snooze_for, attention.of("C9").snooze_for) == (3600, 1)
