"""The shipped Slack app manifest asks for exactly what the code calls and listens for."""

from __future__ import annotations

import ast
import json
import re
import urllib.parse
from pathlib import Path

import pytest
import slackv3
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from looproom import manifest

ROOT = Path(__file__).resolve().parents[2]
CODE = ROOT / "plugins"
_METHOD = re.compile(r"^[a-z]+(?:\.[A-Za-z]+)+$")


def _called_methods() -> set[str]:
    """Every Slack Web API method our code calls: ``_call("chat.update", …)``,
    ``api_call("…")`` or a slack_sdk ``WebClient`` method such as ``client.chat_delete(…)``."""
    found: set[str] = set()
    for path in CODE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            name, args = node.func.attr, node.args
            if name in ("_call", "api_call") and args and isinstance(args[0], ast.Constant):
                if isinstance(args[0].value, str) and _METHOD.match(args[0].value):
                    found.add(args[0].value)
            elif _is_web_api_method(name):
                found.add(name.replace("_", "."))
    return found


def _is_web_api_method(name: str) -> bool:
    public = not name.startswith("_") and "_" in name and name != "api_call"
    return public and callable(getattr(WebClient, name, None))


def _needed_scopes(shipped: dict) -> set[str]:
    methods = _called_methods() | set(manifest.BACKEND_METHODS)
    needed = set(manifest.scopes_for(methods))
    needed |= manifest.event_scopes(manifest.bot_events(shipped))
    if shipped["features"].get("slash_commands"):
        needed.add("commands")
    needed |= set(manifest.CONTENT_SCOPES)
    return needed


def test_the_code_calls_what_the_scope_table_knows() -> None:
    unmapped = sorted(_called_methods() - set(manifest.METHOD_SCOPES))
    assert not unmapped, f"add each to looproom.manifest.METHOD_SCOPES: {unmapped}"


def test_the_backend_methods_are_ones_slackv3_really_calls() -> None:
    source = "".join(p.read_text() for p in Path(slackv3.__file__).parent.glob("*.py"))
    for method in manifest.BACKEND_METHODS:
        assert f"{method.replace('.', '_')}(" in source, method


def test_the_manifest_asks_for_exactly_the_scopes_the_code_needs() -> None:
    shipped = manifest.load()
    granted = set(manifest.bot_scopes(shipped))
    needed = _needed_scopes(shipped)
    assert needed - granted == set(), "the code calls methods whose scopes are not asked for"
    assert granted - needed == set(), "the manifest asks for scopes no code needs"


def test_the_bot_hears_messages_wherever_it_reads_and_answers() -> None:
    # It reads thread history in public and private rooms and group DMs (so it serves each)
    # and Errbot answers commands in a direct message: a message event for each of those.
    reads = {s for m in _called_methods() for s in manifest.METHOD_SCOPES[m] if "history" in s}
    event_of = {scope: event for event, scope in manifest.EVENT_SCOPES.items()}
    expected = {event_of[scope] for scope in reads} | {"message.im"}
    assert "message.mpim" in expected
    # Beside the messages: a 👀 on an ask claims it, and the Home tab opened is drawn
    # (docs/attention.md).
    assert manifest.bot_events(manifest.load()) == expected | {"reaction_added", "app_home_opened"}


def test_the_home_tab_is_on_and_its_opening_is_heard_with_no_scope_of_its_own() -> None:
    shipped = manifest.load()
    assert manifest.home_tab(shipped) is True
    assert "app_home_opened" in manifest.bot_events(shipped)
    assert manifest.event_scopes(["app_home_opened"]) == frozenset()
    assert manifest.scopes_for(["views.publish"]) == frozenset()
    # The answers the Home carries are presses: interactivity stays on.
    assert shipped["settings"]["interactivity"]["is_enabled"] is True


def test_interactivity_is_on_and_its_url_is_the_servers_route() -> None:
    from looproom.server import app

    shipped = manifest.load()
    assert shipped["settings"]["interactivity"]["is_enabled"] is True
    assert manifest.INTERACTIVE_PATH == app.INTERACTIVE
    assert shipped["settings"]["socket_mode_enabled"] is True


def test_the_events_request_url_is_the_path_the_server_mounts_slacks_view_on() -> None:
    from looproom.inbound import slack_events

    assert manifest.EVENTS_PATH == slack_events.PATH


def test_shortcuts_and_slash_command_are_the_ones_the_code_names() -> None:
    shipped = manifest.load()
    shortcuts = {s["callback_id"]: s["name"] for s in shipped["features"]["shortcuts"]}
    assert shortcuts == manifest.SHORTCUTS
    assert all(s["type"] == "message" for s in shipped["features"]["shortcuts"])
    commands = [c["command"] for c in shipped["features"]["slash_commands"]]
    assert commands == [manifest.SLASH_COMMAND]


def test_socket_mode_render_is_the_file_as_shipped() -> None:
    assert manifest.render() == manifest.MANIFEST_FILE.read_text(encoding="utf-8")


def test_http_render_fills_every_request_url_and_turns_socket_mode_off() -> None:
    drawn = yaml.safe_load(manifest.render("Acme Loop", "https://bot.example.com/base/"))
    settings = drawn["settings"]
    assert settings["socket_mode_enabled"] is False
    assert settings["event_subscriptions"]["request_url"] == (
        "https://bot.example.com/base" + manifest.EVENTS_PATH
    )
    assert settings["interactivity"]["request_url"].endswith(manifest.INTERACTIVE_PATH)
    assert drawn["features"]["slash_commands"][0]["url"].endswith(manifest.COMMANDS_PATH)
    assert drawn["display_information"]["name"] == "Acme Loop"
    assert drawn["features"]["bot_user"]["display_name"] == "acme-loop"
    # Everything else as shipped: the scopes and events do not change with the mode.
    assert manifest.bot_scopes(drawn) == manifest.bot_scopes(manifest.load())


@pytest.mark.parametrize(
    "url", ["http://bot.example.com", "bot.example.com", "https://u:p@bot.example.com", "https://"]
)
def test_http_mode_refuses_what_slack_would_not_post_to(url: str) -> None:
    with pytest.raises(manifest.ManifestError, match="--http"):
        manifest.render(http_url=url)


@pytest.mark.parametrize("name", ["", "   ", "x" * 36, "!!!", "a\nb"])
def test_a_name_slack_would_refuse_is_refused_with_the_reason(name: str) -> None:
    with pytest.raises(manifest.ManifestError, match="name"):
        manifest.render(name)


@settings(deadline=None)  # a loaded machine must not fail a correct reading
@given(st.text(min_size=1, max_size=35))
def test_any_accepted_name_yields_a_valid_handle(name: str) -> None:
    try:
        drawn = yaml.safe_load(manifest.render(name))
    except manifest.ManifestError:
        return
    assert re.fullmatch(r"[a-z0-9._-]+", drawn["features"]["bot_user"]["display_name"])
    assert drawn["display_information"]["name"] == name.strip()


def test_in_chat_the_manifest_takes_the_bots_name_unless_told_another() -> None:
    named = yaml.safe_load(manifest.command("", "@acme-loop").split("```\n", 1)[1][:-3])
    assert named["display_information"]["name"] == "acme-loop"
    told = manifest.command("--name Other", "acme-loop")
    assert "name: Other" in told
    assert manifest.command("", "").endswith(manifest.render() + "```")


def test_arguments_parse_and_a_stray_word_is_refused() -> None:
    parsed = manifest.parse_args(["--http", "https://h", "--name", "x"])
    assert (parsed.http, parsed.name) == ("https://h", "x")
    with pytest.raises(manifest.ManifestError, match="usage"):
        manifest.parse_args(["nonsense"])
    with pytest.raises(manifest.ManifestError, match="usage"):
        manifest.parse_args(["--http"])


def test_the_one_click_link_carries_the_manifest_as_rendered() -> None:
    """Slack's create-app link holds the very manifest printed (as JSON), named as asked."""
    text = manifest.render("Acme Loop", "https://loop.acme.test")
    link = manifest.create_link(text)
    assert link.startswith("https://api.slack.com/apps?new_app=1&manifest_json=")
    carried = json.loads(urllib.parse.unquote(link.split("manifest_json=", 1)[1]))
    assert carried == yaml.safe_load(text) and carried["display_information"]["name"] == "Acme Loop"
    assert "Create the app from this manifest" in manifest.command("", "theloop")


def test_regenerated_the_manifest_says_which_scopes_and_events_it_adds_or_removes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = yaml.safe_load(manifest.render())
    old["oauth_config"]["scopes"]["bot"] = [*old["oauth_config"]["scopes"]["bot"][1:], "admin"]
    old["settings"]["event_subscriptions"]["bot_events"] = ["message.im"]
    new = yaml.safe_load(manifest.render())
    first = new["oauth_config"]["scopes"]["bot"][0]
    said = manifest.changes(old, new)
    assert f"scopes added: {first}" in said and "scopes removed: admin" in said
    assert any(line.startswith("events added: ") for line in said)
    assert not any(line.startswith("events removed") for line in said)
    assert manifest.changes(new, new) == []
    kept = tmp_path / "made-from.json"
    kept.write_text(json.dumps(old), encoding="utf-8")
    assert manifest.main(["--against", str(kept)]) == 0
    err = capsys.readouterr().err
    assert "create the app in one click: https://api.slack.com/apps?new_app=1" in err
    assert f"against {kept}: scopes added: {first}" in err
    assert manifest.main(["--against", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot be read" in capsys.readouterr().err


# Slack's limit on an app's name: 35 characters (docs/slack-app.md).
def test_an_app_name_of_35_characters_is_taken_and_one_of_36_refused() -> None:
    name = "Acme the-loop room for the api team"
    assert len(name) == 35
    assert yaml.safe_load(manifest.render(name))["display_information"]["name"] == name
    with pytest.raises(manifest.ManifestError, match="36 characters; Slack allows 35"):
        manifest.render(name + "s")
