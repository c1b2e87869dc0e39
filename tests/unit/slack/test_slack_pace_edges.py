"""Slack's pace at its edges (docs/rooms.md), on a clock the test moves: a room's burst of
three posts, then one a second; a ``Retry-After`` of 2 s waited inline and one of 3 s
handed back to the queue; a method held at its steady rate for ten minutes after a 429 and
given its burst back at ten; a call finding out alone whether Slack takes more holding the
others a minute at most.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState

from looproom.slack.limits import MethodLimits, Tier
from looproom.slack.pacer import Pacer
from looproom.slack.retries import retry_handlers

INLINE = 2.0  # seconds of Retry-After waited at once
STEADY = 600.0  # ten minutes without a 429 before the burst is back
LEASE = 60.0  # a call finding out holds the others a minute at most
PAST = 1e-6
METHOD = "chat.update"
ROOM = "C0LOOP0001"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _retried_inline(retry_after: str) -> bool:
    request = HttpRequest(method="POST", url=f"https://slack.com/api/{METHOD}", headers={})
    answer = HttpResponse(status_code=429, headers={"Retry-After": [retry_after]})
    state = RetryState()
    return any(
        handler.can_retry(state=state, request=request, response=answer)
        for handler in retry_handlers()
    )


@pytest.mark.parametrize(("retry_after", "inline"), [("2", True), ("3", False)])
def test_a_retry_after_of_2_s_is_waited_inline_and_one_of_3_s_goes_back_to_the_queue(
    retry_after: str, inline: bool
) -> None:
    assert _retried_inline(retry_after) is inline


def _burst_after(seconds: float) -> int:
    """Calls taken at once ``seconds`` after a 429 (its Retry-After long over)."""
    clock = Clock()
    limits = MethodLimits({METHOD: Tier(per_minute=60, burst=5)}, clock=clock)
    limits.hold(METHOD, 0.0)
    limits.answered(METHOD, limited=False)  # Slack took the next call: one at a time is over
    clock.now += seconds
    taken = 0
    while limits.reserve(METHOD, most=0.0) is not None and taken < 10:
        taken += 1
    return taken


def test_the_steady_rate_holds_ten_minutes_after_a_429_and_the_burst_is_back_at_ten() -> None:
    assert _burst_after(STEADY - PAST) == 1  # one call at the rate, no burst
    assert _burst_after(STEADY) == 5


def _in_other_thread(call: Callable[[], Any]) -> Any:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(call()))
    thread.start()
    thread.join()
    return result[0]


def test_a_call_finding_out_alone_holds_the_others_a_minute_and_no_longer() -> None:
    clock = Clock()
    limits = MethodLimits({METHOD: Tier(per_minute=60, burst=5)}, clock=clock)
    assert _in_other_thread(lambda: limits.find_out(METHOD))  # its thread then never answers
    clock.now += LEASE - PAST
    assert limits.others_finding_out(METHOD) and limits.reserve(METHOD, most=0.0) is None
    clock.now += PAST
    assert not limits.others_finding_out(METHOD)
    assert limits.reserve(METHOD, most=0.0) == 0.0


def test_a_room_takes_a_burst_of_three_posts_then_one_a_second() -> None:
    clock = Clock()
    pacer = Pacer(clock=clock)
    assert [pacer.reserve(ROOM, most=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert pacer.reserve(ROOM, most=0.0) is None  # a fourth at once: not taken
    clock.now += 1.0 - PAST
    assert pacer.reserve(ROOM, most=0.0) is None
    clock.now += PAST
    assert pacer.reserve(ROOM, most=0.0) == 0.0  # a second on: one more, and only one
    assert pacer.reserve(ROOM, most=0.0) is None
    assert pacer.reserve("C0OTHER001", most=0.0) == 0.0  # another room's posts are its own
