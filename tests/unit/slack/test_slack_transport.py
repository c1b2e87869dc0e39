"""The one transport to Slack against the loopback fake: replies, retries, pacing."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from slack_sdk import WebClient

from looproom.metrics import Metrics
from looproom.slack import responses as t
from looproom.slack.channel_lookup import find_channel, lookup_channel
from looproom.slack.limits import MethodLimits, Tier
from looproom.slack.pacer import Pacer
from looproom.slack.speakers import SlackPoster
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

ROOM = "C0LOOP0001"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def transport(slack: FakeSlack, clock: Clock) -> SlackTransport:
    backend_client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    return SlackTransport.beside(backend_client, pacer=Pacer(clock=clock))


def test_a_post_answers_the_ts_and_the_channel_id_even_when_posted_by_name(
    transport: SlackTransport,
) -> None:
    response = transport.post_message("#the-loop", text="hello")
    assert (response.kind, response.channel) == (t.OK, ROOM)
    assert response.ts


def test_metadata_is_read_back_only_when_asked_for(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    meta = {"event_type": "theloop_event", "event_payload": {"key": "evt-1"}}
    posted = transport.post_message(ROOM, text="hello", metadata=meta)
    history = transport.history(ROOM)
    assert history.data["messages"][0]["metadata"] == meta
    plain = WebClient(token=BOT_TOKEN, base_url=slack.url).conversations_history(channel=ROOM)
    assert "metadata" not in plain["messages"][0]
    replies = transport.replies(ROOM, posted.ts)
    assert replies.data["messages"][0]["metadata"] == meta


def test_a_short_retry_after_is_honoured_inline(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.fail("chat.postMessage", "429", retry_after=0)
    response = transport.post_message(ROOM, text="hello")
    assert response.ok
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [429, 200]
    assert len(slack.messages(ROOM)) == 1


def test_a_long_retry_after_goes_back_to_the_caller_and_holds_the_channel(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.fail("chat.postMessage", "429", retry_after=30)
    response = transport.post_message(ROOM, text="hello")
    assert (response.kind, response.retry_after) == (t.RATE_LIMITED, 30.0)
    assert len(slack.calls_to("chat.postMessage")) == 1  # no sleeping in the worker
    assert transport.post_wait(ROOM) >= 29
    assert transport.post_wait("C0ELSEWHERE") == 0


def test_every_429_is_counted_in_the_metrics_also_those_retried_inline(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    metrics = Metrics()
    transport.on_rate_limited = metrics.slack_rate_limited.inc

    def counted() -> float:
        text = metrics.render()[0].decode()
        return next(
            float(line.split()[-1])
            for line in text.splitlines()
            if line.startswith("theloop_slack_rate_limited_total ")
        )

    slack.fail("chat.postMessage", "429", retry_after=0)
    assert transport.post_message(ROOM, text="retried inline").ok
    assert counted() == 1
    slack.fail("reactions.add", "429", retry_after=0, times=2)  # the inline retry meets one too
    assert transport.add_reaction(ROOM, "1.0", "eyes").kind == t.RATE_LIMITED
    assert counted() == 3
    slack.fail("chat.update", "429", retry_after=30)  # too long to wait inline: the caller's
    assert transport.update_message(ROOM, "1.0", text="x").kind == t.RATE_LIMITED
    assert counted() == 4
    statuses = [c.status for c in slack.calls]
    assert statuses.count(429) == 4


def test_a_429_retried_inline_takes_the_one_call_slack_takes_again(
    slack: FakeSlack, clock: Clock
) -> None:
    # slack_sdk's inline retry takes no turn: at the 429's end Slack takes one call, and the
    # retry is it — a turn handed out then as well would reach Slack beside it, refused.
    limits = MethodLimits({"conversations.replies": Tier(per_minute=60, burst=5)}, clock)
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    transport = SlackTransport.beside(client, pacer=Pacer(clock=clock), limits=limits)
    ts = transport.post_message(ROOM, text="a thread").ts
    slack.fail("conversations.replies", "429", retry_after=0)
    assert transport.replies(ROOM, ts).ok
    assert [c.status for c in slack.calls_to("conversations.replies")] == [429, 200]
    assert limits.wait("conversations.replies") == pytest.approx(1.0)  # one a second after


def test_a_5xx_on_a_post_is_not_repeated_inline_because_it_may_have_landed(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.fail("chat.postMessage", "land_then_5xx")
    response = transport.post_message(ROOM, text="hello")
    assert (response.kind, response.status) == (t.UNAVAILABLE, 500)
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert len(slack.messages(ROOM)) == 1  # it did land: only a metadata search can tell


def test_a_5xx_on_an_update_is_retried_inline(slack: FakeSlack, transport: SlackTransport) -> None:
    posted = transport.post_message(ROOM, text="v1")
    slack.fail("chat.update", "5xx", status=503)
    assert transport.update_message(ROOM, posted.ts, text="v2").ok
    assert [c.status for c in slack.calls_to("chat.update")] == [503, 200]
    assert slack.messages(ROOM)[0]["text"] == "v2"


def test_a_dropped_connection_is_unavailable(slack: FakeSlack, transport: SlackTransport) -> None:
    slack.fail("chat.postMessage", "disconnect")
    response = transport.post_message(ROOM, text="hello")
    assert (response.kind, response.status) == (t.UNAVAILABLE, 0)
    assert slack.messages(ROOM) == []


def test_refused_connections_are_unavailable_until_slack_is_back(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.refuse()
    assert transport.post_message(ROOM, text="hello").kind == t.UNAVAILABLE
    slack.start()
    assert transport.post_message(ROOM, text="hello").ok


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("invalid_blocks", t.REJECTED),
        ("msg_too_long", t.REJECTED),
        ("channel_not_found", t.ROOM),
        ("not_in_channel", t.ROOM),
        ("invalid_auth", t.AUTH),
        ("missing_scope", t.AUTH),
        ("fatal_error", t.UNAVAILABLE),
        ("ratelimited", t.RATE_LIMITED),
    ],
)
def test_ok_false_answers_are_typed_never_raised(
    slack: FakeSlack, transport: SlackTransport, fault: str, kind: str
) -> None:
    slack.fail("chat.postMessage", "ok_false", error=fault)
    response = transport.post_message(ROOM, text="hello")
    assert (response.ok, response.error, response.kind) == (False, fault, kind)


def test_slacks_own_limits_come_back_as_rejections_with_its_reasons(
    transport: SlackTransport,
) -> None:
    long_section = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * 3001}}]
    response = transport.post_message(ROOM, text="t", blocks=long_section)
    assert (response.kind, response.error) == (t.REJECTED, "invalid_blocks")
    assert "3001" in response.data["errors"][0]
    # A text past Slack's 40 000 characters is cut by the transport, not refused by Slack
    # (tests/unit/room/test_slack_message_limits.py has it at the edge).
    assert transport.post_message(ROOM, text="x" * 40_001).ok
    assert transport.post_message("#nowhere", text="hello").kind == t.ROOM


def test_an_unknown_message_is_gone(transport: SlackTransport) -> None:
    assert transport.update_message(ROOM, "1.000001", text="v2").kind == t.GONE
    assert transport.replies(ROOM, "1.000001").kind == t.GONE


def test_a_reaction_already_there_counts_as_done(transport: SlackTransport) -> None:
    posted = transport.post_message(ROOM, text="hello")
    assert transport.add_reaction(ROOM, posted.ts, "white_check_mark").ok
    assert transport.add_reaction(ROOM, posted.ts, "white_check_mark").ok


def test_an_ephemeral_post_reaches_the_fake(slack: FakeSlack, transport: SlackTransport) -> None:
    assert transport.post_ephemeral(ROOM, "U0ALICE01", text="only you").ok
    assert slack.calls_to("chat.postEphemeral")[0].args["user"] == "U0ALICE01"


def test_a_channel_is_found_by_name_across_pages(slack: FakeSlack) -> None:
    for n in range(1200):
        slack.add_channel(f"room-{n:04d}")
    wanted = slack.add_channel("far-away")
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    found, _reply = find_channel(SlackTransport(client), "#Far-Away")
    assert found == wanted
    assert len(slack.calls_to("users.conversations")) == 2  # the bot's own rooms first
    missing, response = find_channel(SlackTransport(client), "#nowhere")
    assert (missing, response.ok) == ("", True)


def test_a_private_room_the_listing_hides_is_found_among_the_bots_own(slack: FakeSlack) -> None:
    hidden = slack.add_channel("secret-war-room", private=True, listed=False)
    transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
    found = lookup_channel(transport, "#secret-war-room")
    assert (found.id, found.member) == (hidden, True)
    assert slack.calls_to("conversations.list") == []


def test_a_room_the_bot_is_not_in_is_found_in_the_listing_as_not_a_member(
    slack: FakeSlack,
) -> None:
    outside = slack.add_channel("elsewhere", member=False)
    transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
    found = lookup_channel(transport, "elsewhere")
    assert (found.id, found.member, found.truncated) == (outside, False, False)
    assert lookup_channel(transport, outside).id == outside  # an id is checked the same way


def test_a_listing_cut_short_says_so_rather_than_no_such_room(slack: FakeSlack) -> None:
    slack.page_limit = 2
    for n in range(10):
        slack.add_channel(f"room-{n}", member=False)
    transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
    found = lookup_channel(transport, "#beyond", max_pages=3)
    assert (found.id, found.truncated) == ("", True)
    missing, response = find_channel(transport, "#beyond", max_pages=3)
    assert (missing, response.error) == ("", "listing_truncated")


def test_the_sibling_client_shares_identity_but_not_the_backends_retry_policy(
    slack: FakeSlack,
) -> None:
    backend_client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    before = list(backend_client.retry_handlers)
    transport = SlackTransport.beside(backend_client)
    assert backend_client.retry_handlers == before
    assert transport.post_message(ROOM, text="hello").ok
    assert slack.calls_to("chat.postMessage")[0].token == BOT_TOKEN


def test_a_failure_is_logged_without_the_token(
    slack: FakeSlack, transport: SlackTransport, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    slack.fail("chat.postMessage", "ok_false", error="invalid_blocks")
    slack.fail("chat.postMessage", "5xx")
    transport.post_message(ROOM, text="hello")
    transport.post_message(ROOM, text="hello")
    assert "invalid_blocks" in caplog.text
    assert BOT_TOKEN not in caplog.text


def test_the_pacer_allows_a_burst_then_one_post_a_second(clock: Clock) -> None:
    pacer = Pacer(rate=1.0, burst=3.0, clock=clock)
    for _ in range(3):
        assert pacer.wait(ROOM) == 0
        assert pacer.reserve(ROOM, most=0.0) == 0
    assert pacer.wait(ROOM) == pytest.approx(1.0)
    assert pacer.reserve(ROOM, most=0.5) is None  # nothing taken
    assert pacer.wait(ROOM) == pytest.approx(1.0)
    clock.now += 0.5
    assert pacer.wait(ROOM) == pytest.approx(0.5)
    clock.now += 0.5
    assert pacer.wait(ROOM) == 0
    assert pacer.wait("C0OTHER001") == 0


def test_posts_beyond_a_rooms_pace_wait_their_turn_or_are_held_back_without_asking_slack(
    slack: FakeSlack, clock: Clock
) -> None:
    transport = _short_waits(slack, clock, most=0.5)
    assert all(transport.post_message(ROOM, text=f"p{n}").ok for n in range(3))
    clock.now += 0.75  # a quarter of a second before the room takes one more
    assert transport.post_message(ROOM, text="p3").ok  # waited its turn, in its slot
    held = transport.post_message(ROOM, text="p4")  # more than a short wait away
    assert (held.kind, held.retry_after) == (t.RATE_LIMITED, pytest.approx(1.25))
    assert transport.post_message("C0OTHER001", text="elsewhere").kind != t.RATE_LIMITED
    posted = [c.args["text"] for c in slack.calls_to("chat.postMessage")]
    assert posted == ["p0", "p1", "p2", "p3", "elsewhere"]  # Slack never asked for p4


def test_a_post_answered_429_is_retried_once_in_the_rooms_turn_which_counts_it(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    slack.fail("chat.postMessage", "429", retry_after=0)
    assert transport.post_message(ROOM, text="hello").ok
    assert [c.status for c in slack.calls_to("chat.postMessage")] == [429, 200]
    # The 429 spent the burst; the retry Slack counted took the one post left.
    assert transport.post_wait(ROOM) == pytest.approx(1.0)
    slack.fail("chat.postMessage", "429", retry_after=30)  # too long to wait in a slot
    held = transport.post_message("C0OTHER001", text="hello")
    assert (held.kind, held.retry_after) == (t.RATE_LIMITED, pytest.approx(30))
    assert len(slack.calls_to("chat.postMessage")) == 3


def test_slots_posting_to_one_room_at_once_never_both_take_its_last_post(
    slack: FakeSlack, clock: Clock
) -> None:
    transport = _short_waits(slack, clock, most=0.0)
    with ThreadPoolExecutor(max_workers=8) as slots:
        replies = list(slots.map(lambda n: transport.post_message(ROOM, text=f"p{n}"), range(8)))
    assert [r.kind for r in replies].count(t.OK) == 3  # the burst, and not one more
    assert len(slack.calls_to("chat.postMessage")) == 3


def _short_waits(slack: FakeSlack, clock: Clock, most: float) -> SlackTransport:
    """A transport that waits at most ``most`` seconds inline for a turn."""
    client = WebClient(token=BOT_TOKEN, base_url=slack.url)
    return SlackTransport.beside(client, pacer=Pacer(clock=clock), max_inline_wait=most)


def test_a_hold_outlasts_the_bucket(clock: Clock) -> None:
    pacer = Pacer(clock=clock)
    pacer.hold(ROOM, 10)
    assert pacer.wait(ROOM) == pytest.approx(10)
    clock.now += 10
    assert pacer.wait(ROOM) == 0


def test_the_sibling_calls_the_slack_api_address_it_is_given(slack: FakeSlack) -> None:
    # THELOOP_SLACK_API_URL as the environment keeps it (no trailing slash), beside a
    # backend client still at Slack's own address.
    backend_client = WebClient(token=BOT_TOKEN)
    transport = SlackTransport.beside(backend_client, base_url=slack.url.rstrip("/"))
    assert transport.post_message(ROOM, text="hello").ok
    assert [call.token for call in slack.calls_to("chat.postMessage")] == [BOT_TOKEN]
    assert backend_client.base_url == WebClient.BASE_URL


def test_a_kickoff_post_is_found_again_by_its_mark_in_its_thread_and_at_the_rooms_top(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    poster = SlackPoster(transport)
    asked = slack.say(ROOM, "U0ALICE01", "<@U0THELOOP> Flaky teardown")
    since = float(asked["ts"]) - 600
    assert poster.posted(ROOM, asked["ts"], "kickoff:message:1", since) == ""
    line = poster.post(ROOM, "🆕 Opened", [], asked["ts"], key="kickoff:message:1")
    top = poster.post(ROOM, "🆕 Opened", [], "", key="kickoff:slash:1")
    assert line and top
    assert poster.posted(ROOM, asked["ts"], "kickoff:message:1", since) == line
    assert poster.posted(ROOM, "", "kickoff:slash:1", since) == top
    assert poster.posted(ROOM, "", "kickoff:slash:2", since) == ""  # marked for another
    assert poster.posted(ROOM, "", "kickoff:slash:1", float(top) + 1) == ""  # older than asked


def test_a_thread_slack_will_not_show_is_not_taken_for_an_empty_one(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    poster = SlackPoster(transport)
    asked = slack.say(ROOM, "U0ALICE01", "<@U0THELOOP> Flaky teardown")
    slack.fail("conversations.replies", "429", retry_after=300)
    assert poster.posted(ROOM, asked["ts"], "kickoff:message:1", 0.0) is None
    slack.fail("chat.postMessage", "5xx")
    assert poster.post(ROOM, "🆕 Opened", [], asked["ts"], key="kickoff:message:1") == ""


def test_a_rooms_members_are_read_over_every_page_and_none_when_slack_cannot_say(
    slack: FakeSlack, transport: SlackTransport
) -> None:
    people = [f"U0PERSON{n:03d}" for n in range(2500)]  # three pages of 1000
    room = slack.add_channel("big-room", private=True, members=people)
    found = transport.members(room)
    assert found is not None and set(people) <= found and len(found) == 2501  # and the bot
    assert transport.members(room, max_pages=2) is None  # not all of them known: unknown
    hidden = slack.add_channel("hidden", private=True, member=False, members=people)
    assert transport.members(hidden) is None


@pytest.mark.parametrize(("position", "found"), [(10_000, True), (10_001, False)])
def test_a_room_is_looked_for_among_10000_and_no_more(
    slack: FakeSlack, position: int, found: bool
) -> None:
    # docs/rooms.md: the lookup reads at most 10 000 rooms — the 10 000th is found, the
    # 10 001st is not, and the lookup says it stopped short rather than that none exists.
    for n in range(position - 1 - len(slack.channels)):
        slack.add_channel(f"room-{n:05d}", member=False)
    wanted = slack.add_channel("far-away", member=False)
    transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
    looked = lookup_channel(transport, "#far-away")
    assert (looked.id == wanted, looked.truncated) == (found, not found)
