"""Slack's message limits at their edges, on what the room sends the fake of Slack.

The figures are Slack's (its Block Kit and ``chat.postMessage`` references), written out
here: a section's text is at most 3000 characters, a message at most 50 blocks, and a
message's ``text`` past 40 000 characters is not kept as sent. The fake refuses past each
as Slack does (``invalid_blocks``, ``msg_too_long``) — shown first — and the room stays
within them: a text of exactly 3000 characters is posted whole and one more is cut with a
pointer to the rest; a checklist too long for 50 blocks is left to GitHub's boxes rather
than refused; a text over 40 000 characters is cut, marked, never refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from looproom.durable.outcome import Delivered
from looproom.events import KNOWN_EVENTS, Event
from looproom.room.routing import BindingBook
from looproom.room.slack_outlet import SlackOutlet
from looproom.settings import Settings
from looproom.slack.pacer import Pacer
from looproom.slack.transport import SlackTransport
from tests.fakes.slack_api import BOT_TOKEN, FakeSlack, decoded

SECTION_TEXT = 3000  # a section block's text, characters
MESSAGE_BLOCKS = 50  # blocks in one message
MESSAGE_TEXT = 40_000  # a message's text, characters
LOOP = "C0LOOP0001"
ITEM = "github:acme/app#1"
URL = "https://github.com/acme/app/issues/1"
MEMBER = "U0ALICE01"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(channels=[(LOOP, "the-loop")], users=[(MEMBER, "alice")]) as fake:
        yield fake


def _client(slack: FakeSlack) -> WebClient:
    return WebClient(token=BOT_TOKEN, base_url=slack.url)


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _refusal(call: Any) -> str:
    try:
        call()
    except SlackApiError as exc:
        return str(exc.response["error"])
    return ""


# -- the fake refuses what Slack refuses --------------------------------------------------------


def test_the_fake_takes_a_section_of_3000_characters_and_refuses_3001(slack: FakeSlack) -> None:
    client = _client(slack)
    for length, refused in ((SECTION_TEXT, ""), (SECTION_TEXT + 1, "invalid_blocks")):
        blocks = [_section("a" * length)]
        post = lambda blocks=blocks: client.chat_postMessage(  # noqa: E731
            channel=LOOP, text="t", blocks=blocks
        )
        assert _refusal(post) == refused, length


def test_the_fake_takes_50_blocks_and_refuses_51(slack: FakeSlack) -> None:
    client = _client(slack)
    for count, refused in ((MESSAGE_BLOCKS, ""), (MESSAGE_BLOCKS + 1, "invalid_blocks")):
        blocks = [_section(f"block {n}") for n in range(count)]
        post = lambda blocks=blocks: client.chat_postMessage(  # noqa: E731
            channel=LOOP, text="t", blocks=blocks
        )
        assert _refusal(post) == refused, count


def test_the_fake_takes_a_text_of_40000_characters_and_refuses_40001(slack: FakeSlack) -> None:
    client = _client(slack)
    for length, refused in ((MESSAGE_TEXT, ""), (MESSAGE_TEXT + 1, "msg_too_long")):
        post = lambda n=length: client.chat_postMessage(channel=LOOP, text="a" * n)  # noqa: E731
        assert _refusal(post) == refused, length


# -- what the room sends stays within them -----------------------------------------------------


def _outlet(slack: FakeSlack, **settings: Any) -> SlackOutlet:
    # Slack's pace of posts is not what is tried here: a burst as large as the test's posts.
    transport = SlackTransport.beside(_client(slack), pacer=Pacer(burst=100))
    chosen = Settings(channel=LOOP, subscribe=KNOWN_EVENTS, **settings)
    return SlackOutlet(transport, BindingBook({}), chosen, interactive=True)


def _prose(length: int) -> str:
    """Plain sentences (nothing to escape, no question) exactly ``length`` characters long."""
    text = ("The build is green and the tests pass. " * (length // 39 + 1))[: length - 1]
    return text.rstrip() + "." * (length - len(text.rstrip()))


def _posted(slack: FakeSlack, event: Event) -> list[dict[str, Any]]:
    """The blocks of the post that carried ``event`` — Slack took it at the first try."""
    calls = [
        call
        for call in slack.calls_to("chat.postMessage")
        if ((decoded(call.args.get("metadata")) or {}).get("event_payload") or {}).get("key")
        == event.delivery_key
    ]
    assert [call.landed for call in calls] == [True], [c.response for c in calls]
    return decoded(calls[0].args.get("blocks")) or []


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b["text"]["text"]) for b in blocks if b["type"] == "section"]


@pytest.mark.parametrize("mode", ["digest", "truncate"])
def test_a_text_of_exactly_3000_characters_is_posted_whole_and_3001_is_cut_to_fit(
    slack: FakeSlack, mode: str
) -> None:
    outlet = _outlet(slack, max_chars=SECTION_TEXT, long_messages=mode)
    whole, over = _prose(SECTION_TEXT), _prose(SECTION_TEXT + 1)
    first = Event("comment.agent", ITEM, text=whole, url=URL, id="edge-3000")
    second = Event("comment.agent", ITEM, text=over, url=URL, id="edge-3001")
    assert isinstance(outlet.deliver(first, maybe_delivered=False), Delivered)
    assert isinstance(outlet.deliver(second, maybe_delivered=False), Delivered)
    assert whole in _texts(_posted(slack, first))
    blocks = _posted(slack, second)
    (cut,) = [t for t in _texts(blocks) if t.startswith("The build")]
    assert len(cut) <= SECTION_TEXT and cut != over
    assert "…" in cut.splitlines()[-1]  # a note that it was cut…
    assert URL in json.dumps(blocks)  # …and where to read the rest


def _checklist(phases: int) -> Event:
    rows = "\n".join(f"- [x] phase-{n}" for n in range(1, phases + 1))
    text = f"<!-- the-loop:phase-selection -->\n### Phases\n{rows}\n"
    return Event("comment.agent", ITEM, text=text, url=URL, id=f"checklist-{phases}")


def _boxes(blocks: list[dict[str, Any]]) -> int:
    return sum(
        len(element["options"])
        for block in blocks
        for element in block.get("elements", [])
        if element.get("type") == "checkboxes"
    )


def test_a_checklist_is_drawn_up_to_50_blocks_and_past_them_left_to_github(
    slack: FakeSlack,
) -> None:
    outlet = _outlet(slack)
    drawn: dict[int, tuple[int, int]] = {}  # phases -> (blocks, boxes) as Slack took them
    for phases in range(400, 501, 5):
        event = _checklist(phases)
        assert isinstance(outlet.deliver(event, maybe_delivered=False), Delivered)
        blocks = _posted(slack, event)
        drawn[phases] = (len(blocks), _boxes(blocks))
    # Every phase is a box, or none is (a partial checklist would execute without the rest).
    assert all(boxes in (0, phases) for phases, (_n, boxes) in drawn.items())
    assert all(count <= MESSAGE_BLOCKS for count, _boxes_ in drawn.values())
    full = [phases for phases, (count, _b) in drawn.items() if count == MESSAGE_BLOCKS]
    assert full, "some checklist fills exactly 50 blocks, and is drawn"
    assert drawn[full[-1]][1] == full[-1]
    past = full[-1] + 5
    blocks = _posted(slack, _checklist(past))
    assert _boxes(blocks) == 0
    assert any("edited" in t and "GitHub" in t for t in _context_texts(blocks))


def _context_texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [
        str(element.get("text", ""))
        for block in blocks
        if block["type"] == "context"
        for element in block["elements"]
    ]


def test_a_text_of_40000_characters_is_sent_whole_and_40001_is_cut_and_marked(
    slack: FakeSlack,
) -> None:
    transport = SlackTransport.beside(_client(slack), pacer=Pacer())
    whole, over = "a" * MESSAGE_TEXT, "b" * (MESSAGE_TEXT + 1)
    sends = [
        lambda text: transport.post_message(LOOP, text=text),
        lambda text: transport.post_ephemeral(LOOP, MEMBER, text=text),
    ]
    for send in sends:
        assert send(whole).ok and send(over).ok
    sent = [
        str(call.args["text"])
        for method in ("chat.postMessage", "chat.postEphemeral")
        for call in slack.calls_to(method)
    ]
    cut = "b" * (MESSAGE_TEXT - 1) + "…"
    assert sent == [whole, cut, whole, cut]
    posted = transport.post_message(LOOP, text="short")
    assert transport.update_message(LOOP, posted.ts, text=over).ok
    assert slack.calls_to("chat.update")[-1].args["text"] == cut


def test_a_checklist_row_named_in_150_characters_is_a_box_and_151_leave_it_to_github(
    slack: FakeSlack,
) -> None:
    # Slack's option value is at most 150 characters; a box's value is its row's name.
    outlet = _outlet(slack)
    for length, boxes in ((150, 2), (151, 0)):
        name = "p" * length
        text = f"<!-- the-loop:phase-selection -->\n### Phases\n- [x] {name}\n- [x] design\n"
        event = Event("comment.agent", ITEM, text=text, url=URL, id=f"named-{length}")
        assert isinstance(outlet.deliver(event, maybe_delivered=False), Delivered)
        blocks = _posted(slack, event)
        assert _boxes(blocks) == boxes, length
