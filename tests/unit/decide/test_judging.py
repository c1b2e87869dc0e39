"""Typed decisions judged in order — map, drop own, authorize (an empty list denies all),
check — against the room's memory of what is open."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from looproom.decide import grammar, judging, kinds
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.judging import Received, Where
from looproom.decide.verdict import ADMITTED, IGNORED, REFUSED, Verdict
from looproom.events import Event
from looproom.relay.forms import Destinations
from looproom.room.memory import ItemState, Memory, observe
from looproom.settings.keywords import Keywords
from tests.support.corpus import MESSAGES

ITEM = "github:acme/api#7"
ALICE, MALLORY, BOT = "U0ALICE01", "U0MALLORY", "U0THELOOP"
POLICY = AccessPolicy(BOT, frozenset({ALICE}), {ALICE: "alice-gh"})
NOW = "2026-11-30T10:00:00Z"


def event(name: str, **changes: Any) -> Event:
    raw = json.loads(next(MESSAGES.glob(f"{name}-*.json")).read_text("utf-8"))
    raw.pop("origin", None)
    return Event.from_wire({**raw, "workItem": ITEM, **changes})


def state(*shown: tuple[str, str]) -> ItemState:
    """The room after posting these corpus events at these ts (in a channel C1)."""
    current = ItemState()
    for name, ts in shown:
        current = observe(current, event(name), "C1", ts)
    return current


CHECKLIST = state(("01", "100.0"))
GATE = state(("01", "100.0"), ("02", "110.0"), ("06", "200.0"))
ASK = state(("15", "300.0"))


def judge(
    text: str,
    current: ItemState = CHECKLIST,
    *,
    member: str = ALICE,
    thread: str = "100.0",
    where: Where | None = None,
    policy: AccessPolicy = POLICY,
    bound: Bound | None = None,
    **said: Any,
) -> Verdict:
    place = where if where is not None else Where(ITEM, thread_bound=True)
    # The room was shown ITEM and its thread's work item; the settings name its repository.
    shown = {ITEM, place.work_item}
    bound = bound if bound is not None else Bound(shown.__contains__, [place.repository])
    message = Received(member, text, "C1", said.pop("ts", "400.0"), thread_ts=thread, **said)
    return judging.judge_typed(
        message, place, lambda _item: current, policy, NOW, bound=bound.refusal
    )


# -- map ---------------------------------------------------------------------------------


def test_plain_words_where_no_work_item_lives_are_never_read() -> None:
    assert judge("execute", where=Where()).status == IGNORED


def test_an_explicit_command_where_no_work_item_lives_says_how_to_name_one() -> None:
    verdict = judge("execute", where=Where(), addressed=True)
    assert verdict.status == REFUSED and "github:owner/repo#7" in verdict.text


def test_a_number_resolves_in_a_room_with_one_repository() -> None:
    verdict = judge("execute #7", where=Where(repository="acme/api"), addressed=True)
    assert verdict.decision is not None and verdict.decision.work_item == ITEM
    refused = judge("execute #7", where=Where(), addressed=True)
    assert refused.status == REFUSED and "github:owner/repo#7" in refused.text


def test_a_typed_reference_wins_over_the_thread() -> None:
    verdict = judge("execute acme/api#7", where=Where("github:other/x#1", thread_bound=True))
    assert verdict.decision is not None and verdict.decision.work_item == ITEM


# -- drop own, authorize -----------------------------------------------------------------


@pytest.mark.parametrize(("member", "is_bot"), [(BOT, False), ("U0OTHER", True), (ALICE, True)])
def test_the_bots_own_messages_and_other_bots_are_never_input(member: str, is_bot: bool) -> None:
    verdict = judge("approve", GATE, member=member, thread="200.0", is_bot=is_bot, addressed=True)
    assert (verdict.status, verdict.reason) == (IGNORED, "self-authored")


def test_an_empty_allow_list_denies_everyone() -> None:
    nobody = replace(POLICY, authorized=frozenset())
    verdict = judge("execute", policy=nobody)
    assert verdict.status == REFUSED and verdict.reason == "unauthorized"
    assert "nobody may" in verdict.text and verdict.decision is None


def test_an_unknown_member_is_refused_with_the_remedy_and_nothing_is_validated() -> None:
    verdict = judge("execute without 99", member=MALLORY)
    assert verdict.reason == "unauthorized" and verdict.decision is None
    assert MALLORY in verdict.text and "slack.authorizedUsers" in verdict.text


def test_an_unknown_members_conversation_is_simply_not_input() -> None:
    assert judge("lunch?", member=MALLORY).status == IGNORED


CAROL = "U0CAROL01"
WITH_COLLABORATOR = replace(POLICY, collaborators=frozenset({CAROL}))


@pytest.mark.parametrize(
    ("text", "current", "thread"),
    [("approve", GATE, "200.0"), ("changes", GATE, "200.0"), ("execute", CHECKLIST, "100.0")],
)
def test_a_collaborators_decision_is_refused_naming_the_act(
    text: str, current: ItemState, thread: str
) -> None:
    verdict = judge(text, current, member=CAROL, thread=thread, policy=WITH_COLLABORATOR)
    assert verdict.status == REFUSED and verdict.reason == "act-not-granted"
    act = kinds.act_of(kinds.read(text))
    assert f"`{act}`" in verdict.text and verdict.decision is None


def test_a_collaborators_answer_to_an_ask_goes_through() -> None:
    verdict = judge(
        "Option 2", ASK, member=CAROL, thread="300.0", ts="301.0", policy=WITH_COLLABORATOR
    )
    assert verdict.status == ADMITTED and verdict.decision is not None
    assert verdict.decision.member == CAROL


def test_a_decision_the_room_is_not_granted_is_refused_even_to_a_decider() -> None:
    narrow = replace(POLICY, granted=frozenset({"gate.feedback"}))
    verdict = judge("execute", policy=narrow)
    assert verdict.reason == "act-not-granted" and "slack.publish" in verdict.text
    assert judge("approve", GATE, thread="200.0", policy=narrow).status == ADMITTED


# -- execute, skip ----------------------------------------------------------------------


def test_execute_at_the_open_checklist_is_the_bare_keyword() -> None:
    verdict = judge("execute")
    assert verdict.status == ADMITTED and verdict.settles == "selection"
    assert verdict.decision is not None and verdict.decision.rows == ()
    assert verdict.decision.login == "alice-gh" and verdict.decision.thread == "100.0"


def test_execute_without_unticks_the_numbered_rows() -> None:
    verdict = judge("execute without 2, 5")
    assert verdict.decision is not None
    assert "- [ ] design" in verdict.decision.rows
    assert "- [ ] brainstorm-approval" in verdict.decision.rows


def test_a_refused_clause_relays_nothing_and_says_why() -> None:
    verdict = judge("execute without 5, 21")
    assert verdict.status == REFUSED and verdict.reason == "unknown-phase"
    assert verdict.text.startswith("There is no phase 21 on this checklist")


def test_without_a_checklist_the_default_loop_is_used_and_said() -> None:
    verdict = judge("skip nonsense", ItemState())
    assert verdict.status == REFUSED and "default work-item loop" in verdict.text
    admitted = judge("skip design", ItemState())
    assert admitted.decision is not None and admitted.decision.kind == kinds.EXECUTE


def test_execute_after_the_selection_was_recorded_is_refused() -> None:
    verdict = judge("execute", GATE)
    assert verdict.status == REFUSED and verdict.reason == "selection-recorded"


def test_skip_before_the_gate_is_execute_without() -> None:
    verdict = judge("skip design")
    assert verdict.decision is not None and verdict.decision.kind == kinds.EXECUTE
    assert "- [ ] design" in verdict.decision.rows


def test_skip_after_the_gate_goes_to_the_control_plane_with_the_checkout() -> None:
    loop = replace(POLICY, destinations=Destinations(loop=True))
    refused = judge("skip evidence", GATE, policy=loop)
    assert refused.reason == "no-checkout" and "relay: {repos:" in refused.text
    ready = replace(POLICY, destinations=Destinations(loop=True, repos={"acme/api": "/srv/api"}))
    verdict = judge("skip evidence, 15", GATE, policy=ready)
    assert verdict.decision is not None and verdict.decision.kind == kinds.SKIP
    assert verdict.decision.nodes == ("evidence", "capability-docs")


# -- gates ------------------------------------------------------------------------------


def test_approve_answers_the_open_gate_under_its_message() -> None:
    verdict = judge("approve ship it", GATE, thread="200.0")
    assert verdict.settles == "gate" and verdict.decision is not None
    assert (verdict.decision.gate, verdict.decision.thread) == ("requirements-approval", "200.0")


def test_approve_with_no_open_gate_is_refused() -> None:
    assert judge("approve", CHECKLIST).reason == "no-open-gate"
    closed = observe(GATE, event("07"), "C1", "210.0")
    assert judge("approve", closed).reason == "no-open-gate"


def test_a_gate_answers_once() -> None:
    answered = replace(GATE, gate=replace(GATE.gate, answered_by=ALICE, answered_at="10:00 UTC"))  # type: ignore[arg-type]
    verdict = judge("changes rename it", answered, thread="200.0")
    assert verdict.reason == "already-answered" and f"<@{ALICE}>" in verdict.text


def test_an_approval_the_loop_would_read_as_changes_is_refused() -> None:
    verdict = judge("approve but request changes to the API", GATE, thread="200.0")
    assert verdict.reason == "approval-reads-as-changes" and verdict.decision is None


def test_a_plain_reply_at_a_gate_is_not_an_answer_to_it() -> None:
    verdict = judge("not approved yet", GATE, thread="200.0", ts="201.0")
    assert verdict.status == REFUSED and "approve [words]" in verdict.text
    assert verdict.decision is None


# -- answers ----------------------------------------------------------------------------


def test_a_reply_in_the_asks_thread_is_the_answer() -> None:
    verdict = judge("Option 2, please", ASK, thread="300.0", ts="301.0")
    assert verdict.decision is not None and verdict.decision.kind == kinds.ANSWER
    assert verdict.decision.words == "Option 2, please" and verdict.settles == "ask"


def test_a_reply_in_the_work_items_thread_after_the_ask_answers_it() -> None:
    verdict = judge("go with 1", ASK, thread="50.0", ts="301.0")
    assert verdict.decision is not None and verdict.decision.kind == kinds.ANSWER


def test_replies_before_the_ask_or_in_a_foreign_thread_are_conversation() -> None:
    assert judge("hm", ASK, thread="50.0", ts="299.0").status == IGNORED
    foreign = Where(ITEM, thread_bound=False)
    assert judge("hm", ASK, thread="999.0", ts="301.0", where=foreign).status == IGNORED
    assert judge("top level chat", ASK, thread="", ts="301.0").status == IGNORED


# -- memory -----------------------------------------------------------------------------


def test_the_room_remembers_what_is_open_and_what_closed_it() -> None:
    assert CHECKLIST.selection is not None and CHECKLIST.selection_done is False
    assert GATE.selection_done is True and GATE.gate is not None and GATE.gate.ts == "200.0"
    progressed = observe(GATE, event("05"), "C1", "205.0")  # same node: still open
    assert progressed.gate == GATE.gate
    assert observe(GATE, event("04"), "C1", "206.0").gate is None  # a later phase started
    assert observe(GATE, event("13"), "C1", "207.0").gate is None
    assert ASK.ask is not None and ASK.ask.default == "Option 1 is fine"


def test_memory_persists_settles_reopens_and_locates_messages() -> None:
    store: dict[str, Any] = {}
    memory = Memory(store)
    memory.observe(event("06"), "C1", "200.0", thread_ts="150.0")
    assert memory.locate("C1", "200.0") == ITEM and memory.locate("C1", "150.0") == ITEM
    assert memory.locate("C2", "200.0") == ""
    memory.settle(ITEM, "gate", ALICE, "10:00 UTC")
    assert Memory(store).get(ITEM).gate.answered_by == ALICE  # type: ignore[union-attr]
    memory.reopen(ITEM, "gate")
    assert Memory(store).get(ITEM).gate.answered_by == ""  # type: ignore[union-attr]


@pytest.mark.parametrize("subtype", ["message_changed", "message_deleted"])
def test_an_edited_or_deleted_message_is_never_a_new_decision(subtype: str) -> None:
    verdict = judge("approve", GATE, thread="200.0", ts="401.0", subtype=subtype, addressed=True)
    assert (verdict.status, verdict.reason, verdict.decision) == (IGNORED, "edited", None)
    assert judge("approve", GATE, thread="200.0").status == ADMITTED


# -- the control verbs ---------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["start", "stop", "pause", "resume", "contribute", "cleanup"])
def test_a_bare_control_verb_in_the_thread_is_relayed_as_that_command(verb: str) -> None:
    verdict = judge(verb)
    assert verdict.status == ADMITTED and verdict.decision is not None
    assert verdict.decision.kind == verb and verdict.settles == ""


def test_a_bare_verb_followed_by_words_is_conversation_unless_addressed() -> None:
    assert judge("stop that, the test is wrong").status == IGNORED
    addressed = judge("stop that, the test is wrong", addressed=True)
    assert addressed.status == REFUSED and "takes nothing after" in addressed.text


@pytest.mark.parametrize("verb", ["do", "review"])
def test_do_and_review_are_commands_only_when_addressed(verb: str) -> None:
    assert judge(f"{verb} you think the retry is right?").status == IGNORED
    verdict = judge(f"{verb} look at the retry path", addressed=True)
    assert verdict.decision is not None and verdict.decision.words == "look at the retry path"
    mentioned = judge(f"<@{BOT}> {verb} look at the retry path")
    assert mentioned.status == ADMITTED


@pytest.mark.parametrize("verb", ["do", "review"])
def test_do_and_review_need_their_words(verb: str) -> None:
    verdict = judge(verb, addressed=True)
    assert verdict.status == REFUSED and f"`{verb} <" in verdict.text


def test_a_control_verb_on_a_jira_item_is_refused_with_the_reason() -> None:
    verdict = judge("start", where=Where("jira:OPS-12", thread_bound=True))
    assert verdict.status == REFUSED and verdict.reason == "unwritable"
    assert "jira:OPS-12 is not a GitHub issue" in verdict.text and verdict.decision is None


def test_a_gate_answer_on_a_jira_item_is_refused_not_left_in_the_ledger() -> None:
    verdict = judge("approve", GATE, thread="200.0", where=Where("jira:OPS-12", thread_bound=True))
    assert verdict.reason == "unwritable"


def test_a_collaborator_may_not_steer_a_run() -> None:
    verdict = judge("stop", member=CAROL, policy=WITH_COLLABORATOR)
    assert verdict.reason == "act-not-granted" and "`control.command`" in verdict.text


# -- said to someone else -------------------------------------------------------------------


@pytest.mark.parametrize("text", ["<@U0BOB0001> approve it please", "<@U0BOB0001> stop"])
def test_words_opened_with_someone_elses_mention_are_said_to_them(text: str) -> None:
    assert judge(text, GATE, thread="200.0").status == IGNORED
    assert judge(f"<@{BOT}> {text.split('> ', 1)[1]}", GATE, thread="200.0").status != IGNORED


def test_a_question_to_a_colleague_in_the_asks_thread_is_not_the_answer() -> None:
    assert judge("<@U0BOB0001> what do you think?", ASK, thread="300.0").status == IGNORED
    assert judge("use the cache", ASK, thread="300.0").status == ADMITTED


# -- what an admitted decision carries, and who is never answered ---------------------------


def test_a_typed_decision_says_where_and_when_it_was_made_so_a_redelivery_is_the_same() -> None:
    verdict = judge("execute", ts="400.5")
    assert verdict.decision is not None
    made = verdict.decision
    assert (made.origin, made.channel, made.ts, made.at) == ("C1:400.5", "C1", "400.5", NOW)
    again = judge("execute", ts="400.5")
    assert again.decision is not None and again.decision.key == made.key
    elsewhere = judge("execute", ts="400.6")
    assert elsewhere.decision is not None and elsewhere.decision.key != made.key


def test_a_member_without_a_github_login_is_relayed_by_member_id_alone() -> None:
    policy = replace(POLICY, authorized=frozenset({ALICE, "U0BOB0001"}))
    verdict = judge("execute", member="U0BOB0001", policy=policy)
    assert verdict.decision is not None and verdict.decision.login == ""


def test_another_bots_command_naming_no_work_item_is_not_answered() -> None:
    # Answering a bot's unmapped command could start two bots refusing each other.
    verdict = judge("execute", where=Where(), addressed=True, member="U0OTHERBOT", is_bot=True)
    assert (verdict.status, verdict.text) == (IGNORED, "")


def test_words_to_a_standing_session_are_a_standing_command_not_a_reply() -> None:
    # A standing session belongs to no work item: steering it is `standing.command`, which
    # a room is granted only when it opts in, whoever speaks.
    standing = Where("standing:triage", thread_bound=True)
    verdict = judge("please look at the queue", where=standing, to_bot=True)
    assert verdict.status == REFUSED and "`standing.command`" in verdict.text
    # The same words to a work item's session are a reply.
    assert judge("please look at the queue", ASK, thread="300.0", to_bot=True).decision


# -- the refusals' words, and whose work item it is --------------------------------------


def test_a_room_bound_to_no_work_item_says_how_to_name_one_in_these_words() -> None:
    verdict = judge("execute", where=Where(), addressed=True)
    assert (verdict.reason, verdict.text) == (
        "unmapped",
        "This room is not bound to one work item, so say which: "
        "`execute github:owner/repo#7`, or `#7` in a room with one repository.",
    )


def test_a_plain_reply_at_a_gate_is_refused_in_these_words() -> None:
    verdict = judge("not approved yet", GATE, thread="200.0", ts="201.0")
    assert (verdict.reason, verdict.text) == (
        "not-a-gate-answer",
        "At this gate say `approve [words]` or `changes <why>` — a plain reply is not taken "
        "as an answer, so nothing was relayed.",
    )


def test_a_work_items_own_collaborator_is_heard_on_it_by_typing_too() -> None:
    policy = replace(POLICY, roster={ITEM: frozenset({"U0EVE0001"})})
    verdict = judge(
        "thanks, one more thing", ASK, thread="300.0", member="U0EVE0001", policy=policy
    )
    assert verdict.status == ADMITTED and verdict.decision is not None
    assert judge("execute", member="U0EVE0001", policy=policy).status == REFUSED


def test_a_work_item_the_room_was_never_shown_is_refused_with_the_bounds_reason() -> None:
    other = "github:elsewhere/repo#9"
    verdict = judge(f"execute {other}", bound=Bound(lambda _ref: False), addressed=True)
    assert verdict.status == REFUSED and verdict.reason == "not-the-operators"
    assert verdict.text == Bound(lambda _ref: False).refusal(other) != ""


@pytest.mark.parametrize(
    ("text", "where", "thread", "reason"),
    [
        ("execute", Where(), "100.0", "unmapped"),  # no work item here, nobody addressed
        ("<@U0BOB0001> what do you think?", None, "300.0", "conversation"),  # asks Bob
        ("lunch at noon?", None, "100.0", "conversation"),  # not to the bot, not awaited
    ],
)
def test_what_is_let_pass_is_logged_with_why(
    text: str, where: Where | None, thread: str, reason: str
) -> None:
    current = ASK if thread == "300.0" else CHECKLIST
    verdict = judge(text, current, thread=thread, where=where)
    assert (verdict.status, verdict.reason, verdict.text) == (IGNORED, reason, "")


def test_an_operators_own_command_word_is_read_with_this_deployments_keywords() -> None:
    # routing.control.commands gave this the-loop a word of its own: `ship`, said
    # `the-loop ship`. Typed here, it is that command, relayed with its keyword.
    own = Keywords(custom={"ship": "the-loop ship"})
    policy = replace(POLICY, destinations=Destinations(keywords=own))
    verdict = judge("ship", policy=policy)
    assert verdict.status == ADMITTED and verdict.decision is not None
    assert kinds.target(verdict.decision, policy.destinations)["body"].startswith("the-loop ship")
    assert judge("ship").status != ADMITTED  # a deployment without the word: not a command


# -- what the order hands on, word for word ---------------------------------------------------


def test_a_submitted_form_is_judged_as_it_says_not_as_its_text_reads() -> None:
    # A slash command's form says what it is: its text (here the trigger's) is not re-read.
    verdict = judge("/loop", parsed=grammar.Command("execute"), addressed=True)
    assert verdict.status == ADMITTED and verdict.decision is not None
    assert verdict.decision.kind == kinds.EXECUTE


def test_a_form_naming_no_work_item_ref_is_refused_naming_what_it_named() -> None:
    form = grammar.Command("execute", ref="acme")
    verdict = judge("/loop", where=Where(), parsed=form, addressed=True)
    assert verdict.status == REFUSED and verdict.reason == "unmapped"
    assert "`acme`" in verdict.text and verdict.decision is None


def test_a_number_where_the_room_has_no_repository_is_refused_as_needing_one() -> None:
    verdict = judge("execute #7", where=Where(), addressed=True)
    assert (verdict.status, verdict.reason) == (REFUSED, "unmapped")
    assert "`#7` needs a repository" in verdict.text


def test_an_unreadable_command_is_refused_under_its_own_label() -> None:
    # The log says which mistake it was, not only that something was refused.
    verdict = judge("stop that, the test is wrong", addressed=True)
    assert (verdict.status, verdict.reason) == (REFUSED, "stop-words")


@pytest.mark.parametrize(
    "text",
    ["stop that, the test is wrong", "do you think option 2?"],  # a bare verb; a sentence's verb
)
def test_words_opened_by_a_verb_in_the_asks_thread_answer_it_as_typed(text: str) -> None:
    verdict = judge(text, ASK, thread="300.0", ts="301.0")
    assert verdict.decision is not None and verdict.decision.kind == kinds.ANSWER
    assert verdict.decision.words == text


def test_an_answer_with_a_file_carries_the_words_then_the_file() -> None:
    link = "<https://files.slack.com/x/plan.pdf|plan.pdf>"
    verdict = judge("see the plan", ASK, thread="300.0", ts="301.0", files=link)
    assert verdict.decision is not None
    assert verdict.decision.words == f"see the plan\n\n{link}"
