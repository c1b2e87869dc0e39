"""A message claimed but not stored (the store down) is not lost: its claim is given back,
and the catch-up that reads the thread again hands it on, once."""

from __future__ import annotations

from typing import Any, cast

import pytest

from looproom.catchup.catchup import CatchUp
from looproom.catchup.cursors import Cursors
from looproom.decide.judging import Received, Where
from looproom.durable.sqlite import StorageError
from looproom.from_slack.listener import Listener

CHANNEL, THREAD = "C0LOOP001", "1800000000.000100"
ANSWER = {"type": "message", "user": "U0ALICE01", "text": "Option 2, please"}


class Desk:
    """The desk as the listener sees it: the cursors, where a thread belongs, and storing
    what was said — which fails while ``down``."""

    def __init__(self) -> None:
        self.cursors, self.down, self.stored = Cursors({}), True, []

    def where(self, channel: str, thread_ts: str, *_facts: str) -> Where:
        return Where("github:acme/api#7", "acme/api", thread_bound=thread_ts == THREAD)

    def said(self, said: Received, where: Where) -> None:
        if self.down:
            raise StorageError("the queue", OSError("the database is down"))
        self.stored.append(said.ts)


class Room:
    def facts(self, channel: str) -> tuple[str, str]:
        return "", ""


class Hearing:
    def hears_all(self, channel: str) -> bool:
        return False


def listener(desk: Desk) -> Listener:
    return Listener(
        cast(Any, desk),
        cast(Any, None),
        cast(Any, Room()),
        cast(Any, None),
        bot_member=lambda: "U0THELOOP",
        listen_all=cast(Any, Hearing()),
    )


@pytest.mark.parametrize("thread", [THREAD, ""], ids=["in its thread", "top-level"])
def test_a_message_the_store_could_not_take_is_read_again_by_the_catch_up_once(
    thread: str,
) -> None:
    desk = Desk()
    ears = listener(desk)
    said = {**ANSWER, "channel": CHANNEL, "ts": "1800000000.000200"}
    if thread:
        said["thread_ts"] = thread
    with pytest.raises(StorageError):
        ears.said("U0ALICE01", said["text"], said, elsewhere="", addressed=False)

    desk.down = False  # the database is back; the reconcile reads the thread again
    catch_up = CatchUp(
        lambda: [(CHANNEL, THREAD)] if thread else [],
        lambda channel, t, oldest: [said],
        ears.missed,
        desk.cursors,
        rooms=lambda: [] if thread else [CHANNEL],
        read_room=lambda channel, oldest, turn: [said],
        clock=lambda: 1_800_000_100.0,
    )
    desk.cursors.since(1_799_990_000.0)
    catch_up.run()
    catch_up.run()
    ears.said("U0ALICE01", said["text"], said, elsewhere="", addressed=False)  # redelivered
    assert desk.stored == [said["ts"]]


def test_a_claim_below_the_floor_stays_read() -> None:
    cursors = Cursors({})
    assert cursors.claim(CHANNEL, THREAD, "1800000000.000300")
    cursors.caught_up(CHANNEL, THREAD, "1800000000.000400")
    cursors.release(CHANNEL, THREAD, "1800000000.000300")
    assert not cursors.claim(CHANNEL, THREAD, "1800000000.000300")
