"""How an event looks in the room: Block Kit, fallback text, plain text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from looproom import digest
from looproom.events import Event
from looproom.room import buttons
from looproom.room.render import (
    controls,
    render,
    render_parent,
    render_plain,
    sanitise_summary,
    state_after,
)
from looproom.settings import Settings
from tests.fakes.slack_api import block_errors
from tests.support.corpus import MESSAGES

CORPUS = sorted(MESSAGES.glob("*.json"))
VERBOSITIES = ("quiet", "normal", "verbose")
HOSTILE = "Ping <!here> and <!channel>, <!everyone>, <!subteam^S0TEAM|@devs> and <@U0ALICE01>!"


def corpus_event(path: Path) -> Event:
    wire = json.loads(path.read_text(encoding="utf-8"))
    wire.pop("origin", None)
    return Event.from_wire(wire)


def settings(verbosity: str = "normal", max_chars: int = 1500, mode: str = "digest") -> Settings:
    return Settings(verbosity=verbosity, max_chars=max_chars, long_messages=mode)


def sections(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"]["text"] for b in blocks if b["type"] == "section"]


def every_text(blocks: list[dict[str, Any]]) -> str:
    return json.dumps(blocks, ensure_ascii=False)


def test_the_corpus_is_there() -> None:
    assert len(CORPUS) >= 20


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
@pytest.mark.parametrize("verbosity", VERBOSITIES)
def test_every_real_message_fits_slacks_limits(path: Path, verbosity: str) -> None:
    drawn = render(corpus_event(path), settings(verbosity))
    assert 1 <= len(drawn.blocks) <= 50
    assert all(len(text) <= 3000 for text in sections(drawn.blocks))
    assert all(len(text) <= 1500 for text in sections(drawn.blocks))
    assert 0 < len(drawn.text) <= 40_000


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
@pytest.mark.parametrize("interactive", (False, True), ids=("plain", "interactive"))
def test_verbosity_levels_are_strict_supersets(path: Path, interactive: bool) -> None:
    event = corpus_event(path)
    quiet, normal, verbose = (
        render(event, settings(v), interactive=interactive).blocks for v in VERBOSITIES
    )
    assert all(block in normal for block in quiet)
    assert all(block in verbose for block in normal)
    # The detail is verbose's alone (a checklist's controls carry a note of their own).
    drawn_controls = [block.to_dict() for block in controls(event, interactive=interactive)]
    assert not any(b["type"] == "context" for b in normal if b not in drawn_controls)


def test_quiet_is_the_lead_and_the_link() -> None:
    event = corpus_event(MESSAGES / "06-phase-approval-pending-requirements.json")
    drawn = render(event, settings("quiet"))
    assert sections(drawn.blocks) == ["📋 *The requirements are ready for your review*"]
    assert drawn.blocks[-1]["elements"][0]["url"] == event.url


def test_the_text_section_is_the_digest_and_the_fallback_carries_it() -> None:
    event = corpus_event(MESSAGES / "20-phase-selection-checklist-with-choices.json")
    assert len(event.text) > 1500
    drawn = render(event, settings(max_chars=1200))
    digested = digest.fit(event.text, 1200, "digest", event.url)
    assert digested in sections(drawn.blocks)
    assert digested in drawn.text  # the notification leads with the same words
    assert len(digested) <= 1200


def test_truncate_mode_is_used_when_configured() -> None:
    event = corpus_event(MESSAGES / "20-phase-selection-checklist-with-choices.json")
    drawn = render(event, settings(max_chars=800, mode="truncate"))
    assert digest.fit(event.text, 800, "truncate", event.url) in sections(drawn.blocks)


def test_the_excerpt_is_digested_at_normal_and_stands_aside_for_a_summary() -> None:
    event = corpus_event(MESSAGES / "06-phase-approval-pending-requirements.json")
    excerpt = digest.fit(event.detail["excerpt"], 1500, "digest", event.url)
    assert excerpt in sections(render(event, settings()).blocks)
    summarised = Event(**{**event.__dict__, "summary": "I wrote R1–R3; least sure of R2.4."})
    shown = sections(render(summarised, settings()).blocks)
    assert excerpt not in shown
    assert "I wrote R1–R3; least sure of R2.4." in shown


def test_a_summary_shows_at_every_verbosity_and_in_the_notification() -> None:
    event = corpus_event(MESSAGES / "15-session-awaiting-input-ask.json")
    for verbosity in VERBOSITIES:
        drawn = render(event, settings(verbosity))
        summary = sanitise_summary(event.summary, settings(verbosity), event.url)
        assert summary in sections(drawn.blocks)
        assert summary in drawn.text


def test_a_summary_pings_nobody_and_is_capped_at_600() -> None:
    event = Event("session.awaiting_input", "github:acme/api#7", summary=HOSTILE + " x" * 2000)
    drawn = render(event, settings())
    summary = sections(drawn.blocks)[1]
    assert len(summary) <= 600
    for text in (every_text(drawn.blocks), drawn.text):
        assert "<!" not in text
        assert "<@" not in text


@pytest.mark.parametrize("verbosity", VERBOSITIES)
def test_nothing_a_producer_wrote_can_broadcast(verbosity: str) -> None:
    event = Event(
        "phase-approval-pending",
        "github:acme/api#7",
        text=HOSTILE,
        url="https://github.com/acme/api/issues/7",
        detail={"node": "<!here> & co", "excerpt": HOSTILE, "note": HOSTILE},
    )
    drawn = render(event, settings(verbosity))
    for text in (every_text(drawn.blocks), drawn.text):
        assert "<!" not in text
        assert "<@" not in text
    assert "&amp; co" in sections(drawn.blocks)[0]


def test_verbose_adds_the_detail_but_not_the_excerpt_as_context() -> None:
    event = corpus_event(MESSAGES / "05-phase-progress-requirements-approval.json")
    drawn = render(event, settings("verbose"))
    context = next(b for b in drawn.blocks if b["type"] == "context")["elements"][0]["text"]
    assert "*outcome:* pass" in context
    assert "*loop:* pdlc-work-item-loop" in context
    excerpted = corpus_event(MESSAGES / "06-phase-approval-pending-requirements.json")
    drawn = render(excerpted, settings("verbose"))
    context = next(b for b in drawn.blocks if b["type"] == "context")["elements"][0]["text"]
    assert "excerpt" not in context


def test_the_open_button_carries_only_a_web_link() -> None:
    with_link = Event("pr-review-pending", "github:a/b#1", url="https://github.com/a/b/pull/2")
    (actions,) = controls(with_link)
    button = actions.to_dict()["elements"][0]
    assert (button["type"], button["url"], button["text"]["text"]) == (
        "button",
        "https://github.com/a/b/pull/2",
        "Open",
    )
    assert controls(Event("pr-review-pending", "github:a/b#1")) == []
    assert controls(Event("pr-review-pending", "github:a/b#1", url="javascript:alert(1)")) == []


def _actions(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]


def test_the_decision_controls_are_drawn_where_the_room_can_be_pressed() -> None:
    gate = corpus_event(MESSAGES / "06-phase-approval-pending-requirements.json")
    pressed = render(gate, settings(), interactive=True).blocks
    assert _actions(pressed) == [
        buttons.OPEN,
        buttons.APPROVE,
        buttons.CHANGES,
    ]
    assert block_errors(pressed) == []
    assert _actions(render(gate, settings()).blocks) == [buttons.OPEN]


@pytest.mark.parametrize("interactive", (False, True), ids=("plain", "interactive"))
def test_the_checklist_keeps_its_open_link_above_its_controls(interactive: bool) -> None:
    checklist = corpus_event(MESSAGES / "01-phase-selection-checklist.json")
    drawn = render(checklist, settings(), interactive=interactive).blocks
    links = [e["url"] for b in drawn if b["type"] == "actions" for e in b["elements"] if "url" in e]
    assert links == [checklist.url] and block_errors(drawn) == []
    assert (buttons.EXECUTE in _actions(drawn)) is interactive
    if not interactive:
        assert "on GitHub>" in every_text(drawn)


def test_a_checklist_with_a_hostile_link_links_nothing() -> None:
    checklist = corpus_event(MESSAGES / "01-phase-selection-checklist.json")
    hostile = Event(
        "comment.agent", checklist.work_item, text=checklist.text, url="javascript:alert(1)|x>"
    )
    drawn = render(hostile, settings())
    assert "javascript" not in every_text(drawn.blocks) and _actions(drawn.blocks) == []


def test_an_unknown_event_type_still_reads() -> None:
    drawn = render(Event("deploy.finished", "github:a/b#1", text="Shipped."), settings())
    assert sections(drawn.blocks)[0] == "💬 *Update (deploy.finished)*"
    assert "Shipped." in sections(drawn.blocks)[1]


def test_the_parent_names_and_links_the_work_item_and_shows_its_state() -> None:
    drawn = render_parent("github:acme/api#7", "📋 Waiting for approval: design")
    top = sections(drawn.blocks)[0]
    assert top.startswith("*<https://github.com/acme/api/issues/7|acme/api#7>*")
    assert "📋 Waiting for approval: design" in top
    assert drawn.blocks[-1]["elements"][0]["url"] == "https://github.com/acme/api/issues/7"
    assert drawn.text == "acme/api#7 — 📋 Waiting for approval: design"


def test_a_parent_for_other_refs_uses_the_events_link_or_none() -> None:
    enterprise = render_parent("github:ghe.acme.com/acme/api#7", "🆕 Started")
    assert "https://ghe.acme.com/acme/api/issues/7" in sections(enterprise.blocks)[0]
    jira = render_parent("jira:KEY-1", "🆕 Started", "https://acme.atlassian.net/browse/KEY-1")
    assert "<https://acme.atlassian.net/browse/KEY-1|jira:KEY-1>" in sections(jira.blocks)[0]
    bare = render_parent("jira:KEY-1", "🆕 Started")
    assert sections(bare.blocks)[0].startswith("*jira:KEY-1*")
    assert all(b["type"] != "actions" for b in bare.blocks)


@pytest.mark.parametrize(
    ("path", "state"),
    [
        ("04-phase-started-requirements.json", "🔨 Working on the requirements"),
        ("05-phase-progress-requirements-approval.json", "🔨 Working on the requirements"),
        (
            "06-phase-approval-pending-requirements.json",
            "📋 Waiting for your review of the requirements",
        ),
        ("10-pr-review-pending.json", "👀 Waiting for your review of the PR"),
        ("13-work-item-complete.json", "🎉 Done"),
        ("15-session-awaiting-input-ask.json", "🤔 Waiting for your answer"),
        ("02-phase-selection-recorded.json", "✅ Phases chosen"),
        ("16-refusal-execute-without-unknown-number.json", "earlier state"),
    ],
)
def test_the_parents_state_follows_the_events(path: str, state: str) -> None:
    assert state_after(corpus_event(MESSAGES / path), "earlier state") == state


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_plain_text_reads_like_the_slack_message_without_slack_markup(path: Path) -> None:
    event = corpus_event(path)
    plain = render_plain(event, settings())
    assert plain.splitlines()[0].endswith("MadaraUchiha-314/the-loop#" + event.work_item[-3:])
    assert "&amp;" not in plain and "&lt;" not in plain


def test_plain_text_keeps_the_supersets_and_pings_nobody() -> None:
    event = Event(
        "decision-pending", "github:a/b#1", text=HOSTILE, detail={"node": "quiz", "k": "v"}
    )
    quiet, normal, verbose = (render_plain(event, settings(v)) for v in VERBOSITIES)
    assert normal.startswith(quiet) and verbose.startswith(normal)
    assert "k: v" in verbose and "k: v" not in normal
    for text in (quiet, normal, verbose):
        assert "<!" not in text and "<@" not in text and "@here" not in text


def test_a_checklist_row_written_to_ping_pings_no_one() -> None:
    checklist = corpus_event(MESSAGES / "01-phase-selection-checklist.json")
    hostile = Event(
        "comment.agent",
        checklist.work_item,
        text=checklist.text.replace("- [x] design\n", "- [x] design — <!channel> look\n", 1),
    )
    drawn = render(hostile, settings(), interactive=True).blocks
    options = [
        option
        for block in drawn
        if block["type"] == "actions"
        for element in block["elements"]
        for option in element.get("options", [])
    ]
    described = [
        o["description"]
        for o in options
        if "<!channel>" in o.get("description", {}).get("text", "")
    ]
    assert described and all(d["type"] == "plain_text" for d in described)


# docs/rooms.md: the summary at most 600 characters, each detail value at most 300 — each
# whole at its edge, cut one past it.


def _sentences(length: int) -> str:
    text = ("All checks pass and the branch is ready. " * (length // 40 + 1))[:length]
    return text[:-1] + "."


@pytest.mark.parametrize(("length", "whole"), [(600, True), (601, False)])
def test_a_summary_of_600_characters_is_shown_whole_and_601_is_cut(
    length: int, whole: bool
) -> None:
    summary = _sentences(length)
    event = Event("session.awaiting_input", "github:acme/api#7", summary=summary)
    shown = sections(render(event, settings("quiet")).blocks)[1]
    assert (shown == summary) is whole and len(shown) <= 600


@pytest.mark.parametrize(("length", "whole"), [(300, True), (301, False)])
def test_a_detail_value_of_300_characters_is_shown_whole_and_301_is_cut(
    length: int, whole: bool
) -> None:
    value = "v" * length
    event = Event("decision-pending", "github:a/b#1", text="Which?", detail={"note": value})
    drawn = render(event, settings("verbose")).blocks
    (context,) = [b for b in drawn if b["type"] == "context"]
    line = context["elements"][0]["text"]
    assert (line == f"*note:* {value}") is whole
    if not whole:
        assert line == f"*note:* {'v' * 299}…"
