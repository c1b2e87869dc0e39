"""The ``instances:`` section of the YAML file, validated (docs/configuration.md).

Each bad key is one error naming it (``instances.team-a.secret: …``), collected with the
rest of the file's. A secret or token written inline is refused: the file is read by
people and kept in repositories, so it only *names* where a secret is
(``{env: VARIABLE}`` or ``{file: PATH}``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from looproom.settings import instance_actors
from looproom.settings.instances import Claims, SecretRef, Spec

_KEYS = ("keyId", "secret", "api", "token", "stream", "workItems", "actors")
_WORK_ITEM_KEYS = ("repos", "prefix", "learn")
#: An instance's name, as the-loop names its instances.
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
#: What the sender puts in ``X-TheLoop-Key-Id``: a header value, so no space or colon.
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_REPO_PATTERN = re.compile(r"[A-Za-z0-9_.*?\[\]-]+/[A-Za-z0-9_.*?\[\]-]+")
#: The current secret and the one being retired: a rotation without downtime.
MOST_SECRETS = 2
INLINE = (
    "an inline secret is refused (the file is not a place for it); "
    "write {env: VARIABLE} or {file: PATH}"
)


def parse(value: Any, errors: list[str]) -> tuple[Spec, ...]:
    """The instances ``value`` describes (``None``: none); each problem appended to
    ``errors``, naming its key."""
    if value is None:
        return ()
    if not isinstance(value, Mapping) or not value:
        errors.append("instances: expected a mapping of instance names to their settings")
        return ()
    specs = []
    for name, raw in value.items():
        key = f"instances.{name}"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            errors.append(f"{key}: an instance's name is lowercase letters, digits and dashes")
            continue
        before = len(errors)
        spec = _spec(name, raw, key, errors)
        if spec is not None and len(errors) == before:
            specs.append(spec)
    _unique_key_ids(specs, errors)
    instance_actors.unique(specs, errors)
    return tuple(specs)


def _spec(name: str, raw: Any, key: str, errors: list[str]) -> Spec | None:
    if not isinstance(raw, Mapping):
        errors.append(f"{key}: expected a mapping (secret, api, …)")
        return None
    errors.extend(
        f"{key}.{k}: unknown key (known: {', '.join(sorted(_KEYS))})" for k in raw if k not in _KEYS
    )
    key_id = raw.get("keyId", name)
    if not isinstance(key_id, str) or not _KEY_ID.fullmatch(key_id):
        errors.append(
            f"{key}.keyId: expected letters, digits, '.', '_' or '-', got {_shown(key_id)}"
        )
    secrets = _secrets(raw.get("secret"), f"{key}.secret", errors)
    api = _url(raw.get("api"), f"{key}.api", errors, required=True)
    token = None
    if raw.get("token") is not None:
        token = _ref(raw.get("token"), f"{key}.token", errors)
    stream = _url(raw.get("stream"), f"{key}.stream", errors, required=False)
    claims = _claims(raw.get("workItems"), f"{key}.workItems", errors)
    actors = instance_actors.parse(raw.get("actors"), f"{key}.actors", errors)
    return Spec(name, str(key_id), secrets, api, token, stream, claims, actors)


def _secrets(value: Any, key: str, errors: list[str]) -> tuple[SecretRef, ...]:
    """One ``{env|file}``, or a list of at most :data:`MOST_SECRETS` while rotating."""
    if value is None:
        errors.append(
            f"{key}: required — where this instance's webhook secret is ({{env: VARIABLE}})"
        )
        return ()
    listed = value if isinstance(value, list) else [value]
    if not listed or len(listed) > MOST_SECRETS:
        errors.append(f"{key}: one secret, or a list of {MOST_SECRETS} while rotating")
        return ()
    refs = [
        _ref(item, key if len(listed) == 1 else f"{key}[{i}]", errors)
        for i, item in enumerate(listed)
    ]
    found = tuple(ref for ref in refs if ref is not None)
    if len(set(found)) < len(found):
        errors.append(f"{key}: the same place named twice")
    return found


def _ref(value: Any, key: str, errors: list[str]) -> SecretRef | None:
    if isinstance(value, str | bytes | int | float):
        errors.append(f"{key}: {INLINE}")
        return None
    if not isinstance(value, Mapping) or len(value) != 1 or not set(value) <= {"env", "file"}:
        errors.append(f"{key}: expected {{env: VARIABLE}} or {{file: PATH}}")
        return None
    if "env" in value:
        name = value["env"]
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
            errors.append(f"{key}.env: expected a variable's name, got {_shown(name)}")
            return None
        return SecretRef(env=name)
    path = value["file"]
    if not isinstance(path, str) or not os.path.isabs(os.path.expanduser(path)):
        errors.append(f"{key}.file: expected an absolute path, got {_shown(path)}")
        return None
    return SecretRef(file=os.path.expanduser(path))


def _url(value: Any, key: str, errors: list[str], *, required: bool) -> str:
    if value is None or value == "":
        if required:
            errors.append(f"{key}: required — the instance's control plane (http://host:port)")
        return ""
    parts = urlsplit(value) if isinstance(value, str) else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        errors.append(f"{key}: expected an http(s) URL")
        return ""
    if parts.username or parts.password or parts.query:
        # A credential in a URL would be shown wherever the URL is: the token is for that.
        errors.append(f"{key}: no user, password or query in the URL (give a token instead)")
        return ""
    return value.rstrip("/")


def _claims(value: Any, key: str, errors: list[str]) -> Claims:
    if value is None:
        return Claims()
    if not isinstance(value, Mapping):
        errors.append(f"{key}: expected a mapping (repos, prefix, learn)")
        return Claims()
    errors.extend(
        f"{key}.{k}: unknown key (known: {', '.join(_WORK_ITEM_KEYS)})"
        for k in value
        if k not in _WORK_ITEM_KEYS
    )
    repos = _strings(value.get("repos"), f"{key}.repos", errors)
    for repo in repos:
        if not _REPO_PATTERN.fullmatch(repo):
            errors.append(
                f"{key}.repos: {_shown(repo)} is not a repository like acme/api (or acme/*)"
            )
    prefixes = _strings(value.get("prefix"), f"{key}.prefix", errors)
    learn = value.get("learn", True)
    if not isinstance(learn, bool):
        errors.append(f"{key}.learn: expected true or false, got {_shown(learn)}")
        learn = True
    if not repos and not prefixes and not learn:
        errors.append(f"{key}: claims no work item (give repos, a prefix, or learn: true)")
    return Claims(repos, prefixes, learn)


def _strings(value: Any, key: str, errors: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(v, str) and v.strip() for v in listed):
        errors.append(f"{key}: expected a text or a list of texts")
        return ()
    return tuple(dict.fromkeys(v.strip() for v in listed))


def _unique_key_ids(specs: list[Spec], errors: list[str]) -> None:
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.key_id in seen:
            errors.append(
                f"instances.{spec.name}.keyId: {spec.key_id!r} is "
                f"instances.{seen[spec.key_id]}'s too"
            )
        seen.setdefault(spec.key_id, spec.name)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"
