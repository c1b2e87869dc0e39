"""Settings: the YAML file and the environment, each bad value named (docs/configuration.md)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from looproom.settings import ConfigError, Environment, Settings, grants

EXAMPLE = """
slack:
  channel: "#the-loop"
  subscribe: [session.awaiting_input, phase-approval-pending, pr-review-pending]
  verbosity: verbose
  maxChars: 900
  longMessages: truncate
  authorizedUsers: [U0123ABC, W0456DEF]
  room: {style: classic}
rooms: {"acme/api": "#api-loop", "acme/*": "#acme-loop"}
people: {U0123ABC: octocat}
relay: {repos: {"acme/api": /srv/checkouts/api}}
"""


def _load(tmp_path: Path, text: str) -> Settings:
    path = tmp_path / "theloop.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return Settings.load(path)


def _errors(raw: object) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        Settings.from_mapping(raw)
    return caught.value.errors


def test_an_absent_file_means_the_loops_defaults(tmp_path: Path) -> None:
    settings = Settings.load(tmp_path / "nowhere.yaml")
    assert settings == Settings()
    assert (
        settings.channel,
        settings.subscribe,
        settings.verbosity,
        settings.max_chars,
        settings.long_messages,
        settings.authorized_users,
        settings.room_style,
        settings.rooms,
        dict(settings.people),
        dict(settings.relay_repos),
        settings.warnings,
    ) == (
        "",
        ("session.awaiting_input",),
        "normal",
        1500,
        "digest",
        frozenset(),
        "agentic",
        (),
        {},
        {},
        (),
    )


def test_the_documented_example_loads_as_written(tmp_path: Path) -> None:
    settings = _load(tmp_path, EXAMPLE)
    assert settings.channel == "#the-loop"
    assert settings.subscribe == (
        "session.awaiting_input",
        "phase-approval-pending",
        "pr-review-pending",
    )
    assert (settings.verbosity, settings.max_chars, settings.long_messages) == (
        "verbose",
        900,
        "truncate",
    )
    assert settings.authorized_users == {"U0123ABC", "W0456DEF"}
    assert settings.room_style == "classic"
    assert settings.rooms == (("acme/api", "#api-loop"), ("acme/*", "#acme-loop"))  # file order
    assert dict(settings.people) == {"U0123ABC": "octocat"}
    assert dict(settings.relay_repos) == {"acme/api": "/srv/checkouts/api"}
    assert settings.warnings == ()
    assert settings.source.endswith("theloop.yaml")


def test_an_empty_file_is_the_defaults(tmp_path: Path) -> None:
    assert _load(tmp_path, "") == Settings(source=str(tmp_path / "theloop.yaml"))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"slack": {"maxChars": "x"}},
            "slack.maxChars: must be an integer from 200 to 3000, got 'x'",
        ),
        ({"slack": {"maxChars": 199}}, "slack.maxChars: must be an integer from 200 to 3000"),
        ({"slack": {"maxChars": 3001}}, "slack.maxChars: must be an integer from 200 to 3000"),
        ({"slack": {"maxChars": True}}, "slack.maxChars: must be an integer"),
        ({"slack": {"channel": "the loop"}}, "slack.channel: expected a channel name"),
        ({"slack": {"subscribe": "session.awaiting_input"}}, "slack.subscribe: expected a list"),
        ({"slack": {"authorizedUsers": "U0123ABC"}}, "slack.authorizedUsers: expected a list"),
        ({"slack": {"authorizedUsers": ["U1 U2"]}}, "slack.authorizedUsers[0]: expected"),
        ({"slack": {"room": {"style": "fancy"}}}, "slack.room.style: must be one of agentic"),
        ({"slack": {"room": {"colour": "red"}}}, "slack.room.colour: unknown key"),
        ({"slack": {"chanel": "#x"}}, "slack.chanel: unknown key"),
        ({"slack": "#the-loop"}, "slack: expected a mapping, got a string"),
        ({"romos": {}}, "romos: unknown key"),
        ({"rooms": {"acme api": "#x"}}, "rooms['acme api']: expected a repository pattern"),
        ({"rooms": {"acme/api": ""}}, "rooms['acme/api']: expected a room name or id"),
        ({"people": {"U0123ABC": "not a login"}}, "people['U0123ABC']: expected a GitHub login"),
        ({"people": {"alice": "octocat"}}, "people['alice']: expected a Slack member id"),
        (
            {"relay": {"repos": {"acme/api": "checkouts/api"}}},
            "relay.repos['acme/api']: expected the absolute path",
        ),
        ({"relay": {"repo": {}}}, "relay.repo: unknown key"),
    ],
)
def test_a_bad_value_is_an_error_naming_its_key(raw: dict, message: str) -> None:
    errors = _errors(raw)
    assert any(error.startswith(message) for error in errors), errors


def test_every_bad_key_is_named_in_one_error() -> None:
    errors = _errors({"slack": {"maxChars": 10, "room": {"style": "x"}}, "extra": 1})
    assert [e.split(":")[0] for e in errors] == ["extra", "slack.maxChars", "slack.room.style"]


def test_a_file_that_is_not_a_mapping_or_not_yaml_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be a mapping"):
        _load(tmp_path, "- just\n- a list\n")
    with pytest.raises(ConfigError, match="not valid YAML at line 2") as caught:
        _load(tmp_path, "slack:\n  channel: a: b\n")
    assert "theloop.yaml" in str(caught.value)


@pytest.mark.parametrize(
    ("slack", "field", "resolved"),
    [
        ({"verbosity": "chatty"}, "verbosity", "normal"),
        ({"verbosity": 3}, "verbosity", "normal"),
        ({"longMessages": "summarize"}, "long_messages", "digest"),
    ],
)
def test_an_unknown_verbosity_or_long_messages_is_the_default_with_a_warning(
    slack: dict, field: str, resolved: str
) -> None:
    settings = Settings.from_mapping({"slack": slack})
    assert getattr(settings, field) == resolved
    [warning] = settings.warnings
    assert warning.startswith(f"slack.{next(iter(slack))}:")


def test_an_unknown_subscribed_type_is_kept_with_a_warning() -> None:
    settings = Settings.from_mapping({"slack": {"subscribe": ["decision-pending", "my.custom"]}})
    assert settings.subscribe == ("decision-pending", "my.custom")
    [warning] = settings.warnings
    assert "my.custom" in warning
    assert "decision-pending" not in warning


def test_subscribing_to_nothing_is_allowed_but_warned() -> None:
    settings = Settings.from_mapping({"slack": {"subscribe": []}})
    assert settings.subscribe == ()
    assert "no event will be posted" in settings.warnings[0]


def test_a_section_copied_from_the_loops_config_loads_with_what_is_ignored_named() -> None:
    settings = Settings.from_mapping(
        {
            "slack": {
                "enabled": True,
                "botTokenEnv": "X",
                "read": {"mode": "socket"},
                "channel": "C1",
            }
        }
    )
    assert settings.channel == "C1"
    assert settings.bot_token_env == "X"  # honoured: the token is read from X first
    assert settings.read.mode == "socket"  # honoured: how Slack's messages reach the bot
    assert [w.split(":")[0] for w in settings.warnings] == ["slack.enabled"]


def test_an_authorized_user_that_is_neither_id_nor_handle_is_kept_with_a_warning() -> None:
    settings = Settings.from_mapping({"slack": {"authorizedUsers": ["dana@example"]}})
    assert settings.authorized_users == {"dana@example"}
    assert settings.warnings[0].startswith("slack.authorizedUsers[0]:")


def test_members_may_be_named_by_handle_on_both_lists() -> None:
    raw = {"slack": {"authorizedUsers": ["@dana", "U0123ABC"], "collaborators": ["@eve"]}}
    settings = Settings.from_mapping(raw)
    assert settings.authorized_users == {"@dana", "U0123ABC"}
    assert settings.collaborators == {"@eve"}
    assert settings.warnings == ()


def test_without_publish_every_act_is_granted_as_before() -> None:
    publish = Settings.from_mapping({}).publish
    assert publish == set(grants.GRANTABLE) - grants.OPT_IN
    # What acts on the-loop itself is never granted by default (the-loop's own rule).
    assert grants.INSTANCE not in publish and grants.STANDING not in publish


def test_publish_may_grant_the_instance_and_standing_commands() -> None:
    raw = {"slack": {"publish": ["instance.command", "standing.command"]}}
    assert Settings.from_mapping(raw).publish == {"instance.command", "standing.command"}


def test_publish_narrows_the_grants_and_a_typo_only_narrows_them() -> None:
    raw = {"slack": {"publish": ["work-item.reply", "gate.feedback", "control.comand"]}}
    settings = Settings.from_mapping(raw)
    assert settings.publish == {grants.GATE_FEEDBACK}
    assert [w.split(":")[0] for w in settings.warnings] == ["slack.publish[2]"]


def test_publish_that_is_not_a_list_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"slack\.publish: expected a list"):
        Settings.from_mapping({"slack": {"publish": "gate.feedback"}})


def test_collaborators_that_are_not_a_list_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"slack\.collaborators: expected a list"):
        Settings.from_mapping({"slack": {"collaborators": "@eve"}})


def test_settings_cannot_be_changed_after_loading() -> None:
    settings = Settings.from_mapping({"people": {"U0123ABC": "octocat"}})
    with pytest.raises(TypeError):
        settings.people["U0123ABC"] = "mallory"  # type: ignore[index]


# --- the environment -------------------------------------------------------------------


def test_the_environments_defaults() -> None:
    env = Environment.from_env({})
    assert (env.backend, env.http_host, env.http_port, env.data_dir, env.config_path) == (
        "Text",
        "127.0.0.1",
        3141,
        "./data",
        "theloop.yaml",
    )
    assert (env.webhook_secret, env.github_api, env.loop_api, env.loop_stream) == (
        "",
        "https://api.github.com",
        "",
        "",
    )


def test_the_loops_variable_names_are_the_fallback() -> None:
    env = Environment.from_env(
        {
            "THE_LOOP_SLACK_BOT_TOKEN": "xoxb-theirs",
            "THE_LOOP_SLACK_APP_TOKEN": "xapp-theirs",
            "GITHUB_TOKEN": "ghp-second",
            "GH_TOKEN": "ghp-first",
        }
    )
    assert (env.slack_bot_token, env.slack_app_token, env.github_token) == (
        "xoxb-theirs",
        "xapp-theirs",
        "ghp-first",
    )
    assert env.backend == "SlackV3"  # a bot token means Slack unless said otherwise
    ours = Environment.from_env(
        {"THELOOP_SLACK_BOT_TOKEN": "xoxb-ours", "THE_LOOP_SLACK_BOT_TOKEN": "x"}
    )
    assert ours.slack_bot_token == "xoxb-ours"


def test_the_environment_is_read_as_set() -> None:
    env = Environment.from_env(
        {
            "THELOOP_HTTP_HOST": "0.0.0.0",
            "THELOOP_HTTP_PORT": "8080",
            "THELOOP_LOOP_API": "http://127.0.0.1:7000/",
            "THELOOP_ADMINS": "U1, U2,",
            "THELOOP_BACKEND": "Null",
        }
    )
    assert (env.http_host, env.http_port, env.loop_api, env.admins, env.backend) == (
        "0.0.0.0",
        8080,
        "http://127.0.0.1:7000",
        ("U1", "U2"),
        "Null",
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"THELOOP_HTTP_PORT": "http"}, "THELOOP_HTTP_PORT: must be an integer from 0 to 65535"),
        ({"THELOOP_HTTP_PORT": "70000"}, "THELOOP_HTTP_PORT: must be an integer from 0 to 65535"),
        ({"THELOOP_BACKEND": "IRC"}, "THELOOP_BACKEND: must be one of Text, SlackV3, Null, Test"),
        ({"THELOOP_LOOP_API": "localhost:7000"}, "THELOOP_LOOP_API: must be an http(s) URL"),
        ({"THELOOP_GITHUB_API": "ftp://x"}, "THELOOP_GITHUB_API: must be an http(s) URL"),
        ({"THELOOP_SLACK_API_URL": "slack"}, "THELOOP_SLACK_API_URL: must be an http(s) URL"),
        ({"THELOOP_PUBLIC_URL": "bot.internal:3141"}, "THELOOP_PUBLIC_URL: must be an http(s) URL"),
        ({"THELOOP_BACKEND": "SlackV3"}, "THELOOP_BACKEND: SlackV3 needs THELOOP_SLACK_BOT_TOKEN"),
        ({"THELOOP_LOG_LEVEL": "verbose"}, "THELOOP_LOG_LEVEL: must be one of DEBUG, INFO,"),
        ({"THELOOP_DELIVERY_SLOTS": "0"}, "THELOOP_DELIVERY_SLOTS: must be an integer from 1 to"),
        ({"THELOOP_DELIVERY_SLOTS": "many"}, "THELOOP_DELIVERY_SLOTS: must be an integer from 1"),
    ],
)
def test_a_bad_variable_is_an_error_naming_it(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Environment.from_env(env)
    assert caught.value.errors[0].startswith(message)


def test_deliveries_run_in_sixteen_slots_unless_told_otherwise() -> None:
    assert Environment.from_env({}).delivery_slots == 16
    assert Environment.from_env({"THELOOP_DELIVERY_SLOTS": "4"}).delivery_slots == 4


def test_every_bad_variable_is_named_in_one_error() -> None:
    with pytest.raises(ConfigError) as caught:
        Environment.from_env({"THELOOP_HTTP_PORT": "x", "THELOOP_LOG_LEVEL": "loud"})
    assert [error.split(":")[0] for error in caught.value.errors] == [
        "THELOOP_LOG_LEVEL",
        "THELOOP_HTTP_PORT",
    ]


def test_the_log_level_is_read_in_any_case_and_the_slack_url_kept() -> None:
    env = Environment.from_env(
        {"THELOOP_LOG_LEVEL": "debug", "THELOOP_SLACK_API_URL": "http://127.0.0.1:9/api/"}
    )
    assert (env.log_level, env.slack_api_url) == ("DEBUG", "http://127.0.0.1:9/api")
    assert Environment.from_env({}).log_level == "INFO"


def test_a_url_with_credentials_is_refused_without_echoing_them() -> None:
    with pytest.raises(ConfigError) as caught:
        Environment.from_env({"THELOOP_LOOP_API": "user:hunter2@host"})
    assert "hunter2" not in str(caught.value)


SECRETS = {
    "THELOOP_WEBHOOK_SECRET": "whsec-value-1-0123456789abcdef0123",
    "THELOOP_SLACK_BOT_TOKEN": "xoxb-value-2",
    "THELOOP_SLACK_SIGNING_SECRET": "signing-value-3",
    "THELOOP_GITHUB_TOKEN": "ghp-value-4",
}


def test_describe_shows_secrets_only_as_set_or_unset() -> None:
    env = Environment.from_env(SECRETS)
    shown = env.describe()
    for name in SECRETS:
        assert shown[name] == "set"
    assert shown["THELOOP_SLACK_APP_TOKEN"] == "unset"
    assert shown["THELOOP_HTTP_PORT"] == "3141"
    text = f"{shown} {env!r} {env}"
    assert not any(value in text for value in SECRETS.values())


def test_describe_shows_urls_without_their_credentials() -> None:
    env = Environment.from_env(
        {
            "THELOOP_LOOP_API": "http://bot:hunter2@loop.example:8080/base?token=tok-5#frag",
            "THELOOP_LOOP_STREAM": "https://[::1]:9000/api/v1/stream?access_token=tok-6",
            "THELOOP_GITHUB_API": "https://x-access-token:ghs-7@ghe.example/api/v3",
            "THELOOP_SLACK_API_URL": "https://proxy:pw-8@slack-proxy.example/api/?k=tok-9",
        }
    )
    shown = env.describe()
    assert shown["THELOOP_LOOP_API"] == "http://loop.example:8080/base"
    assert shown["THELOOP_LOOP_STREAM"] == "https://[::1]:9000/api/v1/stream"
    assert shown["THELOOP_GITHUB_API"] == "https://ghe.example/api/v3"
    assert shown["THELOOP_SLACK_API_URL"].rstrip("/") == "https://slack-proxy.example/api"
    secrets = ("hunter2", "tok-5", "tok-6", "ghs-7", "pw-8", "tok-9")
    assert not any(s in str(shown) for s in secrets)


def test_describe_shows_the_log_level_and_the_slack_api_url_the_bot_started_with() -> None:
    shown = Environment.from_env({"THELOOP_LOG_LEVEL": "debug"}).describe()
    assert (shown["THELOOP_LOG_LEVEL"], shown["THELOOP_SLACK_API_URL"]) == ("DEBUG", "")
    fake = Environment.from_env({"THELOOP_SLACK_API_URL": "http://127.0.0.1:9000/api/"})
    assert fake.describe()["THELOOP_SLACK_API_URL"].startswith("http://127.0.0.1:9000/api")


# -- a file or an environment that could silently widen access is refused ----------------


def _load_text(tmp_path: Path, text: str | bytes) -> Settings:
    path = tmp_path / "theloop.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return Settings.load(path)


def test_a_key_given_twice_is_an_error_naming_it_and_both_lines(tmp_path: Path) -> None:
    text = "slack:\n  authorizedUsers: [U0ADMIN1]\n  channel: '#x'\n  authorizedUsers: [U0EVIL2]\n"
    with pytest.raises(ConfigError) as caught:
        _load_text(tmp_path, text)
    assert "authorizedUsers: defined twice, at line 2 and at line 4" in str(caught.value)
    assert str(tmp_path / "theloop.yaml") in str(caught.value)


def test_a_key_given_twice_in_a_flow_mapping_is_an_error_too(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="acme/api: defined twice, at line 1 and at line 1"):
        _load_text(tmp_path, "rooms: {acme/api: '#a', acme/api: '#b'}\n")


def test_a_named_file_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="THELOOP_CONFIG names a file that does not exist"):
        Settings.load(tmp_path / "typo.yaml", required=True)
    assert Settings.load(tmp_path / "typo.yaml") == Settings()  # the default name: optional


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (b"slack:\n  channel: '#caf\xe9'\n", "not UTF-8 text (byte 23)"),
        ("a:\n" + "".join("  " * n + "- \n" for n in range(1, 40)), "nested deeper than 10"),
        ("[" * 5000 + "]" * 5000, "nested deeper than 10"),
        ("- a\n- b\n", "the file must be a mapping of keys, got a list"),
    ],
)
def test_a_file_not_utf8_too_deep_or_not_a_mapping_is_an_error_naming_it(
    tmp_path: Path, text: str | bytes, error: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load_text(tmp_path, text)
    assert error in str(caught.value) and "theloop.yaml" in str(caught.value)


@pytest.mark.parametrize("pattern", ["acme", "*", "acme/api/x", "acme/"])
def test_a_rooms_pattern_of_another_shape_than_owner_repo_is_an_error(pattern: str) -> None:
    with pytest.raises(ConfigError, match="expected a repository pattern like acme/api"):
        Settings.from_mapping({"rooms": {pattern: "#x"}})


def test_admins_without_any_id_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"THELOOP_ADMINS: no admin in ',,,'"):
        Environment.from_env({"THELOOP_ADMINS": ",,,"})


def test_a_data_dir_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "data"
    file.write_text("", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"THELOOP_DATA_DIR: .* is a file, not a directory"):
        Environment.from_env({"THELOOP_DATA_DIR": str(file)})


def test_a_short_webhook_secret_is_refused_on_slack_and_warned_about_elsewhere() -> None:
    short = "s" * 31
    with pytest.raises(ConfigError) as caught:
        Environment.from_env({"THELOOP_SLACK_BOT_TOKEN": "xoxb-1", "THELOOP_WEBHOOK_SECRET": short})
    assert "THELOOP_WEBHOOK_SECRET: 31 characters, fewer than 32" in str(caught.value)
    assert short not in str(caught.value)
    env = Environment.from_env({"THELOOP_BACKEND": "Text", "THELOOP_WEBHOOK_SECRET": short})
    assert env.warnings == (str(caught.value).split(" (in the environment)")[0],)
    assert Environment.from_env({"THELOOP_WEBHOOK_SECRET": "s" * 32}).warnings == ()


def test_kickoff_for_the_default_room_and_a_rooms_entry() -> None:
    raw = {
        "slack": {"channel": "#the-loop", "kickoff": {"repo": "acme/api", "labels": ["x"]}},
        "rooms": {"acme/*": {"room": "#acme-loop", "kickoff": {"repo": ["acme/a", "acme/b"]}}},
    }
    settings = Settings.from_mapping(raw)
    assert settings.rooms == (("acme/*", "#acme-loop"),)
    assert [(room, k.repos, k.labels) for room, k in settings.kickoffs] == [
        ("#the-loop", ("acme/api",), ("x",)),
        ("#acme-loop", ("acme/a", "acme/b"), ()),
    ]


@pytest.mark.parametrize(
    ("slack", "error"),
    [
        ({"kickoff": {"repo": "acme/api"}}, "slack.kickoff: needs slack.channel"),
        ({"channel": "#x", "kickoff": {"repo": "not a repo"}}, "slack.kickoff.repo"),
        ({"channel": "#x", "kickoff": {"repo": "a/b", "labels": "x"}}, "slack.kickoff.labels"),
        ({"channel": "#x", "kickoff": {"repo": "a/b", "lables": []}}, "slack.kickoff.lables"),
    ],
)
def test_a_bad_kickoff_is_a_config_error_naming_the_key(slack: dict, error: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(error)):
        Settings.from_mapping({"slack": slack})


@pytest.mark.parametrize(("lease", "seconds"), [("1", 1.0), ("3600", 3600.0), ("", 30.0)])
def test_a_lease_from_one_second_to_an_hour_is_taken(lease: str, seconds: float) -> None:
    # docs/configuration.md: THELOOP_LEASE_SECONDS from 1 to 3600, 30 unset.
    env = Environment.from_env(
        {"THELOOP_DATABASE_URL": "postgresql://db/theloop", "THELOOP_LEASE_SECONDS": lease}
    )
    assert env.lease_seconds == seconds


@pytest.mark.parametrize("lease", ["0.999", "3600.001", "3601", "0", "-1", "nan", "thirty"])
def test_a_lease_past_either_end_is_an_error_naming_the_variable(lease: str) -> None:
    with pytest.raises(ConfigError, match="THELOOP_LEASE_SECONDS"):
        Environment.from_env(
            {"THELOOP_DATABASE_URL": "postgresql://db/theloop", "THELOOP_LEASE_SECONDS": lease}
        )


# -- the variables' ranges at each end and one past it (docs/configuration.md) --------------


@pytest.mark.parametrize(
    ("name", "field", "taken", "refused"),
    [
        ("THELOOP_DELIVERY_SLOTS", "delivery_slots", ["1", "64"], ["0", "65"]),
        ("THELOOP_HTTP_PORT", "http_port", ["0", "65535"], ["-1", "65536"]),
        (
            "THELOOP_RELAY_GIVE_UP_SECONDS",
            "relay_give_up_seconds",
            ["600", "2592000"],
            ["0", "2592001"],
        ),
    ],
)
def test_a_variable_is_taken_at_each_end_of_its_range_and_refused_one_past(
    name: str, field: str, taken: list[str], refused: list[str]
) -> None:
    for value in taken:
        assert float(getattr(Environment.from_env({name: value}), field)) == float(value)
    for value in refused:
        with pytest.raises(ConfigError, match=name):
            Environment.from_env({name: value})


def test_the_relay_notice_may_be_as_late_as_the_give_up_and_not_later() -> None:
    notice, give_up = "THELOOP_RELAY_NOTICE_SECONDS", "THELOOP_RELAY_GIVE_UP_SECONDS"
    assert Environment.from_env({notice: "1", give_up: "1"}).relay_notice_seconds == 1.0
    both = Environment.from_env({notice: "3600", give_up: "3600"})
    assert (both.relay_notice_seconds, both.relay_give_up_seconds) == (3600.0, 3600.0)
    for wrong in ({notice: "0"}, {notice: "3601", give_up: "3600"}):
        with pytest.raises(ConfigError, match=notice):
            Environment.from_env(wrong)


@pytest.mark.parametrize("chars", [200, 3000])
def test_max_chars_is_taken_at_either_end_of_200_to_3000(chars: int) -> None:
    assert Settings.from_mapping({"slack": {"maxChars": chars}}).max_chars == chars
