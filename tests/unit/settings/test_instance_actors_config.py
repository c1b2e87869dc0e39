"""``instances.<name>.actors``: the people an instance works for, as the-loop's gateway takes
them — Slack member ids and GitHub logins, at most 256 of each — and each person one
instance's only; every mistake names its key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from looproom import configured
from looproom.settings import ConfigError, Settings
from looproom.settings.instances import Actors

SECRET_A, SECRET_B = "a" * 40, "b" * 40
MOST = 256  # the-loop's gateway refuses a registration with more, per provider


def team(letter: str, **over: Any) -> dict[str, Any]:
    return {"secret": {"env": f"TEAM_{letter}_SECRET"}, "api": f"http://loop-{letter}:8080", **over}


def errors_of(instances: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        Settings.from_mapping({"instances": instances})
    return caught.value.errors


def members(count: int) -> list[str]:
    return [f"U{n:08d}" for n in range(count)]


def logins(count: int) -> list[str]:
    return [f"dev-{n}" for n in range(count)]


def test_actors_are_read_logins_without_case_and_none_by_default() -> None:
    actors = {"slack": ["U0BOB0001", "W0ENT0001", "U0BOB0001"], "github": ["Bob-GH", "ci[bot]"]}
    settings = Settings.from_mapping(
        {"instances": {"team-a": team("A"), "team-b": team("B", actors=actors)}}
    )
    a, b = settings.instances
    assert a.actors == Actors()
    assert b.actors == Actors(("U0BOB0001", "W0ENT0001"), ("bob-gh", "ci[bot]"))


@pytest.mark.parametrize("provider", ["slack", "github"])
def test_each_provider_takes_256_and_refuses_257(provider: str) -> None:
    names = members if provider == "slack" else logins
    settings = Settings.from_mapping(
        {"instances": {"team-b": team("B", actors={provider: names(MOST)})}}
    )
    assert len(getattr(settings.instances[0].actors, provider)) == MOST
    errors = errors_of({"team-b": team("B", actors={provider: names(MOST + 1)})})
    assert errors == [f"instances.team-b.actors.{provider}: 257 given, at most 256"]


@pytest.mark.parametrize(
    ("actors", "named"),
    [
        ("U0BOB0001", "instances.team-b.actors: expected a mapping"),
        ({"jira": ["557058:abc"]}, "instances.team-b.actors.jira: unknown provider"),
        ({"slack": "U0BOB0001"}, "instances.team-b.actors.slack: expected a list of texts"),
        ({"slack": [42]}, "instances.team-b.actors.slack: expected a list of texts"),
        ({"slack": ["bob"]}, "instances.team-b.actors.slack: 'bob' is not a Slack member id"),
        ({"slack": ["u0bob0001"]}, "instances.team-b.actors.slack: 'u0bob0001' is not a Slack"),
        ({"slack": [""]}, "instances.team-b.actors.slack: '' is not a Slack member id"),
        ({"github": ["-bob"]}, "instances.team-b.actors.github: '-bob' is not a GitHub login"),
        ({"github": ["b" * 40]}, "instances.team-b.actors.github: 'bbbb"),
        ({"github": ["bob gh"]}, "instances.team-b.actors.github: 'bob gh' is not a GitHub"),
    ],
)
def test_each_mistake_names_its_key(actors: Any, named: str) -> None:
    errors = errors_of({"team-b": team("B", actors=actors)})
    assert len(errors) == 1 and errors[0].startswith(named), errors


def test_a_login_of_39_characters_is_one() -> None:
    settings = Settings.from_mapping({"instances": {"b": team("B", actors={"github": ["b" * 39]})}})
    assert settings.instances[0].actors.github == ("b" * 39,)


def test_a_person_two_instances_register_is_refused_naming_both() -> None:
    errors = errors_of(
        {
            "team-a": team("A", actors={"slack": ["U0BOB0001"], "github": ["Bob-GH"]}),
            "team-b": team("B", actors={"slack": ["U0BOB0001"], "github": ["bob-gh"]}),
        }
    )
    assert errors == [
        "instances.team-b.actors.slack: U0BOB0001 is registered by instances.team-a too; "
        "a person's work items go to one instance",
        "instances.team-b.actors.github: bob-gh is registered by instances.team-a too; "
        "a person's work items go to one instance",
    ]


def test_the_resolved_instances_carry_their_actors(tmp_path: Path) -> None:
    path = tmp_path / "theloop.yaml"
    path.write_text(
        "instances:\n"
        "  team-a: {secret: {env: TEAM_A_SECRET}, api: 'http://127.0.0.1:1'}\n"
        "  team-b:\n"
        "    secret: {env: TEAM_B_SECRET}\n"
        "    api: http://127.0.0.1:2\n"
        "    actors: {slack: [U0BOB0001], github: [bob-gh]}\n",
        encoding="utf-8",
    )
    env = {"THELOOP_CONFIG": str(path), "THELOOP_DATA_DIR": str(tmp_path / "data")}
    environment, _ = configured.read(env | {"TEAM_A_SECRET": SECRET_A, "TEAM_B_SECRET": SECRET_B})
    a, b = environment.instances
    assert a.actors == Actors() and b.actors == Actors(("U0BOB0001",), ("bob-gh",))
