"""Members named by @handle resolve to ids through Slack, and a handle naming nobody is an error."""

from __future__ import annotations

from typing import Any

import pytest

from looproom.decide.members import CACHE_KEY, Directory, UnknownHandle, resolve_grants

MEMBERS = [
    {"id": "U0DANA", "name": "dana"},
    {"id": "U0EVE", "name": "eve"},
    {"id": "U0GONE", "name": "mallory", "deleted": True},
]


def pages(members: list[dict[str, Any]], per_page: int = 1):
    """A users.list that pages like Slack's, counting its calls."""
    calls = []

    def page(cursor: str) -> tuple[bool, str, list[Any], str]:
        calls.append(cursor)
        start = int(cursor or 0)
        end = start + per_page
        return True, "", members[start:end], str(end) if end < len(members) else ""

    page.calls = calls  # type: ignore[attr-defined]
    return page


def failing(_cursor: str) -> tuple[bool, str, list[Any], str]:
    return False, "missing_scope", [], ""


def test_handles_resolve_to_ids_across_pages_and_ids_stay() -> None:
    store: dict[str, Any] = {}
    resolved = Directory(pages(MEMBERS), store).resolve(["@Dana", "U0123"], "slack.x")
    assert resolved.ids == {"U0DANA", "U0123"}
    assert store[CACHE_KEY] == {"@dana": "U0DANA"}


def test_a_handle_naming_nobody_is_a_configuration_error_naming_the_key() -> None:
    with pytest.raises(UnknownHandle, match=r"slack\.collaborators: @nobody"):
        resolve_grants([], ["@nobody"], Directory(pages(MEMBERS), {}))


def test_a_deleted_members_handle_names_nobody() -> None:
    with pytest.raises(UnknownHandle):
        Directory(pages(MEMBERS), {}).resolve(["@mallory"], "slack.authorizedUsers")


def test_slack_unreachable_uses_the_cache_and_else_grants_nobody() -> None:
    store: dict[str, Any] = {CACHE_KEY: {"@dana": "U0DANA"}}
    resolved = Directory(failing, store).resolve(["@dana", "@eve"], "slack.authorizedUsers")
    assert resolved.ids == {"U0DANA"}
    warned = " ".join(resolved.warnings)
    assert "@eve could not be resolved" in warned and "missing_scope" in warned


def test_the_workspace_is_listed_once_for_both_lists() -> None:
    page = pages(MEMBERS, per_page=10)
    grants = resolve_grants(["@dana"], ["@eve"], Directory(page, {}))
    assert (grants.deciders, grants.collaborators) == ({"U0DANA"}, {"U0EVE"})
    assert page.calls == [""]  # type: ignore[attr-defined]


def test_off_slack_a_handle_is_kept_as_written() -> None:
    assert Directory(None, {}).resolve(["@localhost"], "k").ids == {"@localhost"}


def test_handles_resolve_through_slacks_paged_users_list() -> None:
    from slack_sdk import WebClient

    from looproom.slack.transport import SlackTransport
    from tests.fakes.slack_api import BOT_TOKEN, FakeSlack

    with FakeSlack(users=[("U0ALICE01", "alice"), ("U0CAROL01", "carol")]) as slack:
        slack.page_limit = 1  # one member a page: the cursor is followed
        transport = SlackTransport(WebClient(token=BOT_TOKEN, base_url=slack.url))
        grants = resolve_grants(["@carol"], [], Directory(transport.users_page, {}))
        assert grants.deciders == {"U0CAROL01"}
        assert len(slack.calls_to("users.list")) == 3
