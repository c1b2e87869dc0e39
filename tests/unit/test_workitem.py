"""One reading of a work item ref, for routing, titles, relay targets, typed commands, bind."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from looproom import workitem
from looproom.decide import judging
from looproom.decide.authorization import AccessPolicy
from looproom.decide.bounds import Bound
from looproom.decide.judging import Received, Where
from looproom.decide.verdict import REFUSED
from looproom.relay import forms
from looproom.room import render, routing
from looproom.room.memory import ItemState
from looproom.workitem import WorkItemRef

#: The thread's work item, which the room was shown: the bound admits it.
SHOWN = Bound(lambda _ref: True).refusal


def test_an_issue_on_github_com() -> None:
    ref = workitem.parse("github:acme/api#7")
    assert ref == WorkItemRef("github", "acme/api", "github.com", "acme", "api", 7)
    assert (ref.repository, ref.label, str(ref)) == ("acme/api", "acme/api#7", "github:acme/api#7")
    assert ref.issue_url == "https://github.com/acme/api/issues/7"


def test_a_repository_alone() -> None:
    ref = workitem.parse("github:acme/api")
    assert ref is not None and ref.number is None
    assert (ref.repository, ref.label, ref.issue_url) == ("acme/api", "acme/api", "")


def test_an_enterprise_issue_keeps_its_host() -> None:
    ref = workitem.parse("github:ghe.acme.com/acme/api#7")
    assert ref is not None
    assert (ref.host, ref.repository, ref.number) == ("ghe.acme.com", "acme/api", 7)
    assert ref.issue_url == "https://ghe.acme.com/acme/api/issues/7"
    assert str(ref) == "github:ghe.acme.com/acme/api#7"
    assert workitem.parse("github:ghe:8443/acme/api#7") is not None  # a host with a port


def test_github_com_named_as_the_host_is_the_same_work_item() -> None:
    assert str(workitem.parse("github:github.com/acme/api#7")) == "github:acme/api#7"


def test_another_trackers_ref_is_kept_as_written() -> None:
    ref = workitem.parse("jira:KEY-1")
    assert ref == WorkItemRef("jira", "KEY-1")
    assert (ref.is_github, ref.repository, ref.label, str(ref)) == (
        False,
        "",
        "jira:KEY-1",
        "jira:KEY-1",
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "acme/api#7",  # no tracker: typed shorthand, not a ref
        "github:#7",
        "github:acme#7",
        "github:ghe/acme/api#7",  # "ghe" is not recognisable as a host (the-loop refuses it)
        "github:acme/api/sub#7",
        "github:acme/..#7",
        "github:acme/api#x",
        "github:acme/api#1234567890",
        "github:-acme/api#7",
        "jira:KEY 1",
        "jira:<!here>",
        "JIRA:KEY-1",
    ],
)
def test_garbage_is_no_ref(text: str) -> None:
    assert workitem.parse(text) is None
    assert workitem.repository_of(text) == ""


@pytest.mark.parametrize(
    ("typed", "repository", "ref"),
    [
        ("#7", "acme/api", "github:acme/api#7"),
        ("#7", "", None),
        ("acme/api#7", "", "github:acme/api#7"),
        ("github:ghe.acme.com/acme/api#7", "", "github:ghe.acme.com/acme/api#7"),
        ("github:ghe/acme/api#7", "", None),
        ("acme/api", "", None),  # a typed ref names an issue
        ("design#2", "acme/api", None),
    ],
)
def test_a_typed_ref_names_a_github_issue(typed: str, repository: str, ref: str | None) -> None:
    named = workitem.resolve_typed(typed, repository)
    assert (str(named) if named is not None else None) == ref


def test_every_part_of_the_bot_agrees_on_one_ref() -> None:
    """Routed to the repository's room, titled and linked, relayed to its issue."""
    rooms = (("acme/api", "#api-loop"),)
    for ref in ("github:acme/api#7", "github:ghe.acme.com/acme/api#7"):
        assert routing.route(ref, "#the-loop", rooms) == "#api-loop"
        assert render.work_item_label(ref) == "acme/api#7"
        assert forms.github_target(ref) == {"repo": "acme/api", "number": 7}
    assert routing.route("github:acme/api", "#the-loop", rooms) == "#api-loop"
    checkouts = forms.Destinations(loop=True, repos={"acme/api": "/srv/api"})
    assert forms.skip_refusal("github:acme/api", checkouts) == ""
    assert forms.skip_refusal("github:acme/api#7", checkouts) == ""
    # Not a ref anywhere: the default room, its own words as the title, the ledger.
    odd = "github:ghe/acme/api#7"
    assert routing.route(odd, "#the-loop", rooms) == "#the-loop"
    assert render.work_item_label(odd) == odd
    assert forms.github_target(odd) is None


def test_a_typed_ref_that_is_no_ref_is_refused_not_taken_for_the_thread() -> None:
    said = Received("U1", "approve github:ghe/acme/api#7", "C1", "9.0", "5.0", addressed=True)
    policy = AccessPolicy("UBOT", frozenset({"U1"}))
    verdict = judging.judge_typed(
        said,
        Where(work_item="github:acme/api#7"),
        lambda _: ItemState(),
        policy,
        "now",
        bound=SHOWN,
    )
    assert (verdict.status, verdict.reason) == (REFUSED, "unmapped")
    assert "is not a work item ref" in verdict.text


def test_a_rooms_key_is_one_repository_only_when_it_names_one() -> None:
    assert workitem.is_repository("acme/api")
    assert not workitem.is_repository("acme/*")
    assert not workitem.is_repository("acme")
    assert not workitem.is_repository("github:acme/api")


_NAME = st.text(alphabet=string.ascii_letters + string.digits, min_size=1, max_size=12)


def _recased(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.swapcase() if flip else c for c, flip in zip(text, flips, strict=True))


@given(st.data(), _NAME, _NAME, st.integers(min_value=1, max_value=10**9 - 1))
def test_every_spelling_of_a_github_work_item_is_one_canonical_ref(
    data: st.DataObject, owner: str, repo: str, number: int
) -> None:
    ref = f"github:{owner}/{repo}#{number}"
    recased = f"{_recased(data.draw, owner)}/{_recased(data.draw, repo)}"
    kind = data.draw(st.sampled_from(["issues", "pull"]))
    for alias in (
        f"github:{recased}#{number}",
        f"github:GitHub.com/{recased}#{number}",
        f"https://github.com/{recased}/{kind}/{number}",
        f"<https://github.com/{recased}/{kind}/{number}|{recased}#{number}>",
    ):
        assert workitem.canonical(alias) == workitem.canonical(ref) == ref.lower()
    assert workitem.canonical(f"github:{recased}#{number + 1}") != workitem.canonical(ref)


def test_a_jira_ticket_is_one_ref_whatever_the_sites_case_or_its_page() -> None:
    ref = "jira:acme.atlassian.net/OPS-12"
    for alias in (
        "jira:ACME.Atlassian.NET/OPS-12",
        "jira:acme.atlassian.net/ops-12",
        "https://acme.atlassian.net/browse/OPS-12",
    ):
        assert workitem.canonical(alias) == ref
    assert workitem.canonical("jira:acme.atlassian.net/OPS-13") != ref
    assert workitem.canonical("jira:other.atlassian.net/OPS-12") != ref


def test_another_trackers_ref_and_words_are_compared_as_written() -> None:
    assert workitem.canonical("standing:Nightly") == "standing:Nightly"
    assert workitem.canonical("linear:ABC-1") != workitem.canonical("linear:abc-1")
    assert workitem.canonical("  github:acme/api#7 ") == "github:acme/api#7"
