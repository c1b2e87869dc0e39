"""The one bound every path asks: a work item the room was shown, of a repository the
settings name, or a ticket of the configured Jira site and projects — however it is spelt."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from looproom import workitem
from looproom.decide.bounds import Bound
from looproom.settings import jira_config

SITE = jira_config.parse(
    {"site": "acme.atlassian.net", "deployment": "cloud", "projects": {"OPS": {}, "SEC": {}}},
    "jira",
)
#: The settings name acme/api exactly and every repository of the `tools` owner.
BOUND = Bound(
    {"github:stranger/shown#4", "linear:ENG-9"}.__contains__, ["acme/api", "tools/*"], SITE
)

_letter = st.sampled_from("abcdefghijklmnopqrstuvwxyz0123456789-")
_name = st.text(_letter, min_size=1, max_size=12).filter(lambda n: n[0] != "-")
_number = st.integers(min_value=1, max_value=999_999_999)


def _cased(word: str, flips: list[bool]) -> str:
    """``word`` with the letters where ``flips`` says so upper-cased."""
    return "".join(
        c.upper() if f else c
        for c, f in zip(word, (flips + [False] * len(word))[: len(word)], strict=True)
    )


@st.composite
def spelling(draw: st.DrawFn, owner: str, repo: str) -> str:
    """One way a member may type issue N of ``owner/repo``: any case, as a ref, short, or
    its GitHub address as pasted (bare, in Slack's brackets, a tab, a label)."""
    flips = draw(st.lists(st.booleans(), max_size=30))
    full = _cased(f"{owner}/{repo}", flips)
    n = draw(_number)
    forms = [
        f"github:{full}#{n}",
        f"{full}#{n}",
        f"https://github.com/{full}/issues/{n}",
        f"https://GitHub.com/{full}/pull/{n}/files",
        f"<https://github.com/{full}/issues/{n}#issuecomment-1|{full}#{n}>",
    ]
    return draw(st.sampled_from(forms))


def named(spelt: str) -> str:
    ref = workitem.resolve_typed(spelt)
    assert ref is not None, spelt
    return str(ref)


@given(st.data())
def test_every_spelling_of_a_configured_repositorys_work_item_is_admitted(
    data: st.DataObject,
) -> None:
    owner, repo = data.draw(st.sampled_from([("acme", "api"), ("tools", "ci"), ("tools", "x-y")]))
    assert BOUND.refusal(named(data.draw(spelling(owner, repo)))) == ""


@given(st.data(), _name, _name)
def test_any_other_repository_is_refused_however_spelt_naming_it(
    data: st.DataObject, owner: str, repo: str
) -> None:
    if owner == "tools" or (owner, repo) == ("acme", "api"):
        return  # named by the settings: the test above
    ref = named(data.draw(spelling(owner, repo)))
    refusal = BOUND.refusal(ref)
    assert f"`{ref}` is not a work item of this room" in refusal
    assert "nothing was recorded or sent" in refusal


def test_a_near_miss_of_a_configured_repository_is_another_repository() -> None:
    for ref in (
        "github:acme/api-evil#1",
        "github:acme/apii#1",
        "github:acme-evil/api#1",
        "github:acme/ap#1",
        "github:evil/acme#1",
        "github:toolsx/ci#1",
        "github:acme/api.git#1",
    ):
        assert "is not a work item of this room" in BOUND.refusal(ref), ref


def test_a_work_item_the_room_was_shown_is_admitted_whatever_its_repository() -> None:
    assert BOUND.refusal("github:stranger/shown#4") == ""
    assert "`stranger/shown`" in BOUND.refusal("github:stranger/shown#5")
    assert BOUND.refusal("linear:ENG-9") == ""
    assert "`linear:` ticket" in BOUND.refusal("linear:ENG-10")


@given(_number, st.lists(st.booleans(), max_size=20), st.sampled_from(["OPS", "SEC"]))
def test_a_ticket_of_the_configured_jira_site_and_projects_is_admitted(
    n: int, flips: list[bool], project: str
) -> None:
    assert BOUND.refusal(f"jira:{_cased('acme.atlassian.net', flips)}/{project}-{n}") == ""


def test_a_ticket_of_another_site_or_project_is_refused_naming_the_site() -> None:
    for ref in (
        "jira:evil.example/OPS-1",
        "jira:acme.atlassian.net.evil.example/OPS-1",
        "jira:evil.acme.atlassian.net/OPS-1",
        "jira:acme.atlassian.net/HR-1",
        "jira:acme.atlassian.net/ops-1",
        "jira:OPS-1",
    ):
        refusal = BOUND.refusal(ref)
        assert f"`{ref}` is not a work item of this room" in refusal, ref
        assert "acme.atlassian.net" in refusal and "OPS, SEC" in refusal


def test_without_a_jira_ledger_no_ticket_is_the_operators() -> None:
    refusal = Bound(lambda _ref: False, ["acme/*"]).refusal("jira:acme.atlassian.net/OPS-1")
    assert "no Jira site is configured" in refusal


def test_without_settings_only_what_the_room_was_shown_is_admitted() -> None:
    bound = Bound({"github:acme/api#7"}.__contains__)
    assert bound.refusal("github:acme/api#7") == ""
    assert "is not a work item of this room" in bound.refusal("github:acme/api#8")


def test_what_is_no_ref_at_all_is_refused() -> None:
    assert "is not a work item ref" in BOUND.refusal("not a ref")
    assert "is not a work item ref" in BOUND.refusal("")
