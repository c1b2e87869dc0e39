"""Relay forms and idempotency keys; the-loop's acceptance of them is in
``tests/contract/test_relay_contract.py``."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from looproom.decide import kinds
from looproom.relay import forms
from looproom.relay.decision import Decision
from looproom.relay.forms import Destinations
from looproom.settings.jira_config import JiraSite
from tests.support import loop_words

AT = "2026-11-30T10:00:00Z"


def relay_body(decision: Decision) -> str:
    """The issue comment ``decision`` is relayed as (the ledger keeps the same body)."""
    return str(kinds.target(decision, Destinations())["body"])


def loop_request(decision: Decision, repos: dict[str, str]) -> dict[str, Any]:
    """The control-plane call ``decision`` is relayed as."""
    return kinds.target(decision, Destinations(loop=True, repos=repos))


def decision(kind: str = kinds.APPROVE, **fields: object) -> Decision:
    base = {"work_item": "github:acme/api#7", "member": "U1", "origin": "C1:1.1", "at": AT}
    return Decision(kind=kind, **{**base, **fields})  # type: ignore[arg-type]


def test_a_retry_of_the_same_decision_has_the_same_key() -> None:
    first = decision(words="ok")
    assert first.key == decision(words="ok").key == Decision.from_dict(first.to_dict()).key
    assert first.key != decision(origin="C1:1.2").key
    assert first.key != decision(kinds.CHANGES).key


def test_the_body_opens_with_the_words_and_ends_with_the_envelope() -> None:
    body = relay_body(decision(kinds.EXECUTE, rows=("- [ ] design",)))
    assert body.startswith("the-loop execute\n\n- [ ] design\n\n🗣️ _the-loop — control command")
    assert body.rstrip().endswith("-->") and body.count("<!-- the-loop:event") == 1


@pytest.mark.parametrize(
    ("login", "who"),
    [("octocat", "`octocat` (`slack:U1`)"), ("", "`slack:U1` (`slack:U1`)")],
)
def test_the_attribution_line_names_the_person_as_the_loop_does(login: str, who: str) -> None:
    # the-loop's own relay body: the label (the GitHub login, else channel:id), then the
    # id on the channel typed in, then which channel.
    body = relay_body(decision(login=login, words="fine"))
    assert body.split("\n\n")[:3] == [
        "approved",
        "fine",
        f"🗣️ _the-loop — answer to the open gate from {who} on the **slack** channel, "
        "recorded here so the loop reads it from the work item._",
    ]


def test_an_envelope_value_cannot_close_the_html_comment() -> None:
    body = relay_body(decision(login="evil-->x"))
    stamp = body[body.index("<!-- the-loop:event") :]
    assert stamp.count("-->") == 1 and "\\u003e" in stamp


def test_hidden_comments_in_the_words_are_removed_even_unclosed() -> None:
    assert forms.clean_words("a <!-- hidden --> b") == "a  b"
    assert forms.clean_words("keep <!-- the-loop:event {") == "keep"


def test_where_each_decision_goes() -> None:
    both = Destinations(github=True, loop=True, repos={"acme/api": "/srv/api"})
    none = Destinations()
    assert kinds.target(decision(), both)["sink"] == forms.GITHUB
    assert kinds.target(decision(), both) | {"sink": ""} == {
        "sink": "",
        "repo": "acme/api",
        "number": 7,
        "body": relay_body(decision()),
    }
    assert kinds.target(decision(), none)["sink"] == forms.LEDGER
    jira = decision(work_item="jira:acme.atlassian.net/PROJ-7")
    assert kinds.target(jira, both)["sink"] == forms.LEDGER
    answer = decision(kinds.ANSWER, words="Option 1")
    assert kinds.target(answer, both)["sink"] == forms.LOOP
    assert kinds.target(answer, both)["path"] == forms.REPLY_PATH
    assert kinds.target(answer, none)["sink"] == forms.LEDGER


def test_a_skip_after_the_gate_needs_the_loops_checkout() -> None:
    refusal = forms.skip_refusal("github:acme/api#7", Destinations(loop=True))
    assert "relay: {repos:" in refusal and "acme/api" in refusal
    ready = Destinations(loop=True, repos={"acme/api": "/x"})
    assert forms.skip_refusal("github:acme/api#7", ready) == ""
    assert forms.skip_refusal("github:acme/api#7", Destinations()) == ""  # the ledger records it


def test_an_approval_that_reads_as_a_change_request_is_explained() -> None:
    assert forms.approval_refusal("looks good") == ""
    assert "please change" in forms.approval_refusal("Please change the title")


@pytest.mark.parametrize("phrase", loop_words.CHANGE_PHRASES)
def test_an_approval_carrying_any_of_the_loops_change_phrases_is_refused(phrase: str) -> None:
    # Anywhere in the words, in any case: relayed, the-loop would read the opposite.
    for words in (phrase, f"fine, {phrase.upper()} was yesterday", f"ok{phrase}ok"):
        assert f"“{phrase}”" in forms.approval_refusal(words)


@pytest.mark.parametrize(
    "words", ["looks good", "change requested", "requested changes", "reject it later", ""]
)
def test_an_approval_with_words_the_loop_reads_as_approval_is_not_refused(words: str) -> None:
    assert forms.approval_refusal(words) == ""


def test_the_ledger_line_carries_the_decision_and_its_form() -> None:
    octocat = decision(login="octocat")
    item = json.loads(forms.payload(octocat, kinds.target(octocat, Destinations())))
    line = json.loads(forms.ledger_line(item))
    assert line["key"] == decision().key and line["kind"] == kinds.APPROVE
    assert line["actor"] == {"slack": "U1", "github": "octocat"}
    assert line["body"].startswith("approved\n\n")


def test_an_answer_is_sent_without_hidden_comments() -> None:
    request = loop_request(replace(decision(kinds.ANSWER), words="1 <!-- x -->"), {})
    assert request["json"] == {
        "ref": "github:acme/api#7",
        "text": "1",
        "actor": "slack:U1",
        "comment": True,
    }


ATTRIBUTION = (
    "🗣️ _the-loop — control command from `slack:U1` (`slack:U1`) on the **slack** channel, "
    "recorded here so the loop reads it from the work item._"
)
CONTROL_ENVELOPE = (
    '<!-- the-loop:event {"actor":{"slack":"U1"},"source":"slack",'
    '"ts":"2026-11-30T10:00:00Z","type":"control.command"} -->'
)


def test_a_control_commands_form_is_its_keyword_then_the_words_as_a_control_command() -> None:
    # Built once, when the table of kinds is: so asked here directly, not only through it.
    made = decision("start", words="now please", subjects=("<@U2>",))
    target = forms.control("start").target(made, Destinations())
    assert target == {
        "sink": "ledger",
        "body": f"the-loop start now please\n\n{ATTRIBUTION}\n\n{CONTROL_ENVELOPE}\n",
    }


def test_a_collaborator_or_channel_commands_form_is_its_keyword_then_the_subjects() -> None:
    made = decision("add-collaborator", words="ignored", subjects=("<@U2>", "#room"))
    target = forms.about("add-collaborator").target(made, Destinations())
    assert target == {
        "sink": "ledger",
        "body": f"the-loop add-collaborator <@U2> #room\n\n{ATTRIBUTION}\n\n{CONTROL_ENVELOPE}\n",
    }


# -- the refusals' words and the ledger's line, written out ---------------------------------


def test_another_trackers_work_item_is_refused_saying_where_to_say_it() -> None:
    assert forms.tracker_refusal("github:acme/api#7") == ""
    refusal = (
        "linear:ENG-1 is not a GitHub issue, and the-loop reads this decision from the work "
        "item's own comments, which only a GitHub issue can be given from here — so nothing "
        "was recorded. Say it on the work item itself."
    )
    assert forms.tracker_refusal("linear:ENG-1") == refusal
    assert forms.tracker_refusal("linear:ENG-1", Destinations()) == refusal


def test_a_jira_work_item_is_refused_only_outside_the_configured_sites_projects() -> None:
    site = JiraSite("acme.atlassian.net", "cloud", ("ACME",))
    jira = Destinations(jira=site)
    assert forms.tracker_refusal("jira:acme.atlassian.net/ACME-12", jira) == ""
    assert forms.tracker_refusal("jira:acme.atlassian.net/OTHER-3", jira) == (
        "jira:acme.atlassian.net/OTHER-3 is not a ticket of the configured Jira site "
        "(acme.atlassian.net) in one of its projects (ACME), so nothing was recorded — the "
        "credential goes to that site only."
    )
    # Without a Jira site, a Jira ref is another tracker's.
    alone = forms.tracker_refusal("jira:acme.atlassian.net/ACME-12")
    assert alone.startswith("jira:acme.atlassian.net/ACME-12 is not a GitHub issue")


def test_an_approval_with_a_change_phrase_is_refused_in_these_words() -> None:
    assert forms.approval_refusal("ok but rejected the naming") == (
        "Your approval's words include “rejected”, which the-loop reads as a change request, "
        "so nothing was recorded. Say `changes <why>` to ask for changes, or `approve` with "
        "other words."
    )


def test_a_skip_without_the_checkout_says_what_to_add_naming_the_repository() -> None:
    assert forms.skip_refusal("github:acme/api#7", Destinations(loop=True)) == (
        "A skip after phase selection goes to the-loop's control plane, which needs "
        "the-loop's checkout of `acme/api`; none is configured, so nothing was recorded. "
        'Add it under `relay: {repos: {"acme/api": /path/to/checkout}}` in theloop.yaml.'
    )
    assert forms.skip_refusal("linear:ENG-1", Destinations(loop=True)) == (
        "A skip after phase selection goes to the-loop's control plane, which needs "
        "the-loop's checkout of `linear:ENG-1`; none is configured, so nothing was recorded. "
        'Add it under `relay: {repos: {"owner/repo": /path/to/checkout}}` in theloop.yaml.'
    )


def test_the_ledger_line_names_the_member_alone_when_there_is_no_login() -> None:
    plain = decision()
    line = json.loads(forms.ledger_line(json.loads(forms.payload(plain, relay_body_target(plain)))))
    assert line["actor"] == {"slack": "U1"}
    assert line["at"] == AT and line["workItem"] == "github:acme/api#7"


def relay_body_target(made: Decision) -> dict[str, Any]:
    return kinds.target(made, Destinations())


def test_the_attribution_names_the_slack_id_only_beside_a_label_of_another_name() -> None:
    assert forms.who("U1", "octocat") == "`octocat` (`slack:U1`)"
    assert forms.who("", "octocat") == "`octocat`"  # no member id to show
    assert forms.who("octocat", "octocat") == "`octocat`"


def test_an_envelope_value_is_escaped_exactly() -> None:
    stamp = forms.envelope("gate.feedback", "U1", "evil-->x", AT)
    assert '"github":"evil--\\u003ex"' in stamp


def test_only_a_github_issue_or_pull_request_is_a_github_target() -> None:
    assert forms.github_target("github:acme/api#7") == {"repo": "acme/api", "number": 7}
    assert forms.github_target("github:acme/api") is None  # a repository, no issue
    assert forms.github_target("gitlab:acme/api#7") is None  # another forge's number


def test_a_comment_on_a_jira_ticket_is_marked_as_a_relayed_decision() -> None:
    site = JiraSite("acme.atlassian.net", "cloud", ("ACME",))
    made = decision("start", work_item="jira:acme.atlassian.net/ACME-12")
    target = forms.control("start").target(made, Destinations(jira=site))
    assert (target["sink"], target["key"], target["as"]) == ("jira", "ACME-12", "relay")


def test_a_skip_says_who_declared_it_by_login_else_by_member_id() -> None:
    skip = decision(kinds.SKIP, nodes=("evidence",))
    assert forms.skip_request(skip, {"acme/api": "/x"})["reason"] == (
        "declared in Slack by slack:U1"
    )
    named = replace(skip, login="octocat")
    assert forms.skip_request(named, {"acme/api": "/x"})["reason"] == (
        "declared in Slack by octocat"
    )


def test_the_ledger_line_carries_the_target_but_not_its_sink() -> None:
    plain = decision()
    line = json.loads(forms.ledger_line(json.loads(forms.payload(plain, relay_body_target(plain)))))
    assert "sink" not in line and line["body"].startswith("approved")


def test_a_ref_that_is_no_work_item_is_no_github_target() -> None:
    assert forms.github_target("not a work item") is None


def test_a_decision_stored_before_logins_were_kept_is_in_the_ledger_by_member_id() -> None:
    plain = decision()
    item = json.loads(forms.payload(plain, relay_body_target(plain)))
    del item["decision"]["login"]
    assert json.loads(forms.ledger_line(item))["actor"] == {"slack": "U1"}


# -- what each form carries of the member's words --------------------------------------------


def test_a_change_request_carries_the_members_reason_under_the_loops_heading() -> None:
    # "changes requested" is what the-loop's gate classifier reads as a change request.
    body = relay_body(decision(kinds.CHANGES, words="rename the endpoint <!-- x -->"))
    assert body.split("\n\n")[:2] == [loop_words.CHANGE_PHRASES[0], "rename the endpoint"]


def test_an_operators_own_command_is_relayed_as_its_keyword_alone() -> None:
    # The keyword was resolved when the command was recorded; a hidden comment never rides.
    made = decision(kinds.OWN, words="the-loop ship <!-- forged -->")
    assert relay_body(made).split("\n\n")[:2] == ["the-loop ship", ATTRIBUTION]


def test_a_skip_where_no_checkout_is_configured_names_none() -> None:
    # the-loop's graph/skip takes the checkout as a string; unknown, it is the empty one.
    skip = decision(kinds.SKIP, nodes=("evidence",))
    assert forms.skip_request(skip, {})["repo"] == ""
    assert forms.skip_request(skip, {"acme/api": "/srv/api"})["repo"] == "/srv/api"
