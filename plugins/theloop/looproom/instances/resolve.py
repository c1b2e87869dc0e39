"""The instances' secrets and tokens read from where the file names them.

Run at start, with the environment the rest is read from: a variable that is unset, a file
that cannot be read, a secret too short or shared by two instances is a
:class:`~looproom.settings.ConfigError` naming the key — never the secret, only where it
was looked for and how long it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from looproom.settings.environment import short_secret
from looproom.settings.instances import Instance, SecretRef, Spec

#: The single-instance form's variables: with ``instances:`` each instance has its own.
SINGLE_FORM = ("THELOOP_WEBHOOK_SECRET", "THELOOP_LOOP_API", "THELOOP_LOOP_STREAM")


def resolve(
    specs: Sequence[Spec], env: Mapping[str, str], errors: list[str]
) -> tuple[Instance, ...]:
    """Each spec with its secrets read from ``env`` or their files; problems appended to
    ``errors``, naming the key."""
    if not specs:
        return ()
    errors.extend(
        f"{name}: set, but the settings file has instances: — each instance names its own "
        "secret, api and stream there; unset it"
        for name in SINGLE_FORM
        if env.get(name, "").strip()
    )
    found = []
    for spec in specs:
        key = f"instances.{spec.name}"
        secrets = []
        for index, ref in enumerate(spec.secrets):
            where = f"{key}.secret" + (f"[{index}]" if len(spec.secrets) > 1 else "")
            secret = read(ref, where, env, errors)
            if problem := short_secret(where, secret):
                errors.append(problem)
            secrets.append(secret)
        token = read(spec.token, f"{key}.token", env, errors) if spec.token else ""
        found.append(
            Instance(
                spec.name,
                spec.key_id,
                tuple(secrets),
                spec.api,
                token,
                spec.stream,
                spec.claims,
                spec.actors,
            )
        )
    _distinct(found, errors)
    return tuple(found)


def read(ref: SecretRef, key: str, env: Mapping[str, str], errors: list[str]) -> str:
    """The secret ``ref`` names; ``""`` with an error when it is not there."""
    if ref.env:
        value = env.get(ref.env, "").strip()
        if not value:
            errors.append(f"{key}: the environment variable {ref.env} is not set")
        return value
    try:
        value = Path(ref.file).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        errors.append(f"{key}: the file {ref.file} cannot be read ({why})")
        return ""
    if not value:
        errors.append(f"{key}: the file {ref.file} is empty")
    return value


def _distinct(instances: Sequence[Instance], errors: list[str]) -> None:
    """A secret two instances share would let either speak for the other."""
    owner: dict[str, str] = {}
    for instance in instances:
        for secret in instance.secrets:
            if not secret:
                continue
            if secret in owner and owner[secret] != instance.name:
                errors.append(
                    f"instances.{instance.name}.secret: the same secret as "
                    f"instances.{owner[secret]}'s; each instance needs its own"
                )
            owner.setdefault(secret, instance.name)
