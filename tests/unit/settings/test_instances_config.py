"""``instances:`` in the settings file: each mistake is refused with the key that holds it,
and no secret is ever read from the file itself or shown in a message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looproom import configured
from looproom.settings import ConfigError, Settings
from looproom.settings.instances import Claims

SECRET_A, SECRET_B = "a" * 40, "b" * 40


def settings_errors(instances: Any) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        Settings.from_mapping({"instances": instances})
    return caught.value.errors


def team(**over: Any) -> dict[str, Any]:
    return {"secret": {"env": "TEAM_A_SECRET"}, "api": "http://loop-a:8080", **over}


def test_a_complete_entry_is_read_with_its_defaults() -> None:
    settings = Settings.from_mapping(
        {
            "instances": {
                "team-a": team(
                    token={"env": "TEAM_A_TOKEN"},
                    stream="http://loop-a:8080/api/v1/stream",
                    workItems={"repos": ["acme/api", "acme/web-*"], "prefix": "jira:OPS-"},
                ),
                "team-b": {
                    "keyId": "b-2026",
                    "secret": [{"env": "B_NEW"}, {"file": "/run/secrets/b-old"}],
                    "api": "https://loop-b.example/",
                },
            }
        }
    )
    a, b = settings.instances
    assert (a.name, a.key_id, a.api) == ("team-a", "team-a", "http://loop-a:8080")
    assert a.claims == Claims(("acme/api", "acme/web-*"), ("jira:OPS-",), learn=True)
    assert a.token is not None and a.token.env == "TEAM_A_TOKEN"
    assert (b.key_id, b.api, len(b.secrets)) == ("b-2026", "https://loop-b.example", 2)
    assert b.secrets[1].file == "/run/secrets/b-old"


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        (team(secret="x" * 40), "instances.team-a.secret: an inline secret is refused"),
        (team(token="tok-inline-9"), "instances.team-a.token: an inline secret is refused"),
        (team(secret=[{"env": "A"}, "x" * 40]), "instances.team-a.secret[1]: an inline secret"),
        (team(secret=None), "instances.team-a.secret: required"),
        (team(secret=[{"env": "A"}, {"env": "B"}, {"env": "C"}]), "instances.team-a.secret: one"),
        (team(secret={"env": "A", "file": "/x"}), "instances.team-a.secret: expected {env"),
        (team(secret={"file": "relative/path"}), "instances.team-a.secret.file: expected an abs"),
        (team(secret={"env": "no spaces"}), "instances.team-a.secret.env: expected a variable"),
        (team(api=None), "instances.team-a.api: required"),
        (team(api="ftp://loop"), "instances.team-a.api: expected an http(s) URL"),
        (team(api="http://u:p@loop"), "instances.team-a.api: no user, password or query"),
        (team(stream="loop:1"), "instances.team-a.stream: expected an http(s) URL"),
        (team(keyId="a b"), "instances.team-a.keyId: expected letters"),
        (team(workItems={"repos": ["api"]}), "instances.team-a.workItems.repos: 'api' is not"),
        (team(workItems={"learn": "yes"}), "instances.team-a.workItems.learn: expected true"),
        (team(workItems={"learn": False}), "instances.team-a.workItems: claims no work item"),
        (team(workItems={"repo": "acme/api"}), "instances.team-a.workItems.repo: unknown key"),
        (team(url="http://x"), "instances.team-a.url: unknown key"),
    ],
)
def test_each_mistake_names_its_key(entry: dict[str, Any], named: str) -> None:
    errors = settings_errors({"team-a": entry})
    assert any(error.startswith(named) for error in errors), errors
    assert not any("x" * 40 in error or "tok-inline-9" in error for error in errors)


def test_names_and_key_ids_are_checked_across_the_section() -> None:
    assert settings_errors({"Team A": team()})[0].startswith("instances.Team A: an instance's")
    twice = settings_errors({"one": team(keyId="k"), "two": team(keyId="k")})
    assert twice == ["instances.two.keyId: 'k' is instances.one's too"]
    assert settings_errors(["team-a"])[0].startswith("instances: expected a mapping")


def write(tmp_path: Path, body: str) -> dict[str, str]:
    path = tmp_path / "theloop.yaml"
    path.write_text(body, encoding="utf-8")
    return {"THELOOP_CONFIG": str(path), "THELOOP_DATA_DIR": str(tmp_path / "data")}


FILE = """
instances:
  team-a:
    secret: {env: TEAM_A_SECRET}
    api: http://127.0.0.1:1
  team-b:
    secret: [{env: TEAM_B_SECRET}, {file: %s}]
    api: http://127.0.0.1:2
    token: {env: TEAM_B_TOKEN}
"""


def test_the_secrets_are_read_from_the_environment_and_files(tmp_path: Path) -> None:
    old = tmp_path / "b-old"
    old.write_text("c" * 40 + "\n", encoding="utf-8")
    env = write(tmp_path, FILE % old)
    env |= {"TEAM_A_SECRET": SECRET_A, "TEAM_B_SECRET": SECRET_B, "TEAM_B_TOKEN": "tok-b"}
    environment, _settings = configured.read(env)
    a, b = environment.instances
    assert a.secrets == (SECRET_A,) and b.secrets == (SECRET_B, "c" * 40) and b.token == "tok-b"
    assert SECRET_A not in repr(environment) and "tok-b" not in repr(b)


def test_a_secret_that_is_not_there_is_refused_by_where_it_was_looked_for(
    tmp_path: Path,
) -> None:
    env = write(tmp_path, FILE % (tmp_path / "absent"))
    env |= {"TEAM_A_SECRET": "short", "TEAM_B_TOKEN": "t"}
    with pytest.raises(ConfigError) as caught:
        configured.read(env)
    assert caught.value.errors == [
        "instances.team-a.secret: 5 characters, fewer than 32 (make one with "
        "`openssl rand -hex 32`)",
        "instances.team-b.secret[0]: the environment variable TEAM_B_SECRET is not set",
        f"instances.team-b.secret[1]: the file {tmp_path / 'absent'} cannot be read "
        "(No such file or directory)",
    ]


def test_two_instances_may_not_share_a_secret_nor_keep_the_single_form(tmp_path: Path) -> None:
    old = tmp_path / "b-old"
    old.write_text(SECRET_A, encoding="utf-8")
    env = write(tmp_path, FILE % old)
    env |= {"TEAM_A_SECRET": SECRET_A, "TEAM_B_SECRET": SECRET_B, "TEAM_B_TOKEN": "t"}
    env["THELOOP_LOOP_API"] = "http://127.0.0.1:3"
    with pytest.raises(ConfigError) as caught:
        configured.read(env)
    assert caught.value.errors[0].startswith("THELOOP_LOOP_API: set, but the settings file has")
    assert caught.value.errors[1] == (
        "instances.team-b.secret: the same secret as instances.team-a's; each instance needs "
        "its own"
    )
    assert not any(SECRET_A in error for error in caught.value.errors)
