"""Where the-loop's Jira ledger is, and the credential to write to it.

the-loop keeps a Jira work item's record on its own ticket (``integrations.jira`` in its
CLI config: the site, the deployment, the variables holding the credential, the projects
it may write in). The relay writes there too, so it reads the same block: from the-loop's
own config when ``THELOOP_LOOP_CONFIG`` names it, else ``jira:`` in theloop.yaml, in the
same shape. A work item ``jira:<site>/<KEY>-<n>`` is written to only on the configured site
and in a configured project: a ref naming another site never carries this credential
there.

The credential is read when a request is made — a rotated token is used at once — from the
variables the block names (``api.emailEnv``, ``api.tokenEnv``; the bot's own
``THELOOP_JIRA_EMAIL``/``THELOOP_JIRA_TOKEN`` after them), or from the file
``THELOOP_JIRA_TOKEN_FILE`` names (a mounted secret). It is never part of a ``repr``, a
message or a log line.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from looproom import workitem

CLOUD, SCOPED, DATA_CENTER = "cloud", "cloud-scoped", "data-center"
DEPLOYMENTS = (CLOUD, SCOPED, DATA_CENTER)
GATEWAY = "https://api.atlassian.com/ex/jira"
EMAIL_ENV, TOKEN_ENV, TOKEN_FILE_ENV = (
    "THELOOP_JIRA_EMAIL",
    "THELOOP_JIRA_TOKEN",
    "THELOOP_JIRA_TOKEN_FILE",
)
#: The Jira API's base URL in place of the site's (a proxy, a test fake).
API_ENV = "THELOOP_JIRA_API"
_KEY = re.compile(r"[A-Z][A-Z0-9_]{1,9}-[1-9][0-9]{0,9}")
_PROJECT = re.compile(r"[A-Z][A-Z0-9_]{1,9}")
_SITE = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+(?::[0-9]+)?")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class JiraConfigError(ValueError):
    """The Jira block cannot be used; ``errors`` names each key."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class JiraSite:
    """One Jira deployment the relay writes to, and where its credential is read from."""

    site: str
    deployment: str
    projects: tuple[str, ...]
    email_env: tuple[str, ...] = ()
    token_env: tuple[str, ...] = ()
    cloud_id: str = ""
    #: Where requests go instead of the site (``THELOOP_JIRA_API``); "" is the site.
    api: str = ""
    source: str = ""

    @property
    def rest(self) -> str:
        """``3`` on Cloud (a comment's body is ADF), ``2`` on Data Center (wiki markup)."""
        return "2" if self.deployment == DATA_CENTER else "3"

    @property
    def base(self) -> str:
        if self.api:
            return self.api.rstrip("/")
        if self.deployment == SCOPED:
            return f"{GATEWAY}/{self.cloud_id}"
        return f"https://{self.site}"

    def browse(self, key: str) -> str:
        """The ticket's page a person opens (always on the site)."""
        return f"https://{self.site}/browse/{key}"

    def key_of(self, work_item: str) -> str:
        """``OPS-12`` of ``jira:<site>/OPS-12`` on this site and in a configured project;
        ``""`` for any other ref."""
        ref = workitem.parse(work_item)
        if ref is None or ref.tracker != "jira":
            return ""
        host, _, key = ref.path.rpartition("/")
        if host.lower() != self.site or not _KEY.fullmatch(key):
            return ""
        return key if key.rsplit("-", 1)[0] in self.projects else ""

    def refusal(self, work_item: str) -> str:
        """Why ``work_item`` is not written to here (it is a Jira ref); ``""`` when it is."""
        if self.key_of(work_item):
            return ""
        return (
            f"{work_item} is not a ticket of the configured Jira site ({self.site}) in one "
            f"of its projects ({', '.join(self.projects) or 'none'}), so nothing was "
            "recorded — the credential goes to that site only."
        )

    def authorization(self, env: Mapping[str, str] | None = None) -> str:
        """The ``Authorization`` header, read now; :class:`JiraConfigError` naming the
        variables (never a value) when the credential is not there."""
        env = os.environ if env is None else env
        token = _first(self.token_env, env) or _file_token(env)
        if self.deployment == DATA_CENTER:
            if not token:
                raise JiraConfigError([f"no Jira token: set {_either(self.token_env)}"])
            return f"Bearer {token}"
        email = _first(self.email_env, env)
        if not (token and email):
            needed = [
                _either(names)
                for names, value in ((self.email_env, email), (self.token_env, token))
                if not value
            ]
            raise JiraConfigError([f"no Jira credential: set {' and '.join(needed)}"])
        return "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode()


def parse(raw: Any, where: str, env: Mapping[str, str] | None = None) -> JiraSite | None:
    """``integrations.jira``'s shape (``where`` names it in errors); None when absent."""
    if raw is None:
        return None
    env = os.environ if env is None else env
    if not isinstance(raw, Mapping):
        raise JiraConfigError([f"{where}: expected a mapping"])
    errors: list[str] = []
    site = str(raw.get("site") or "").strip().lower()
    if not _SITE.fullmatch(site):
        errors.append(f"{where}.site: expected a host like acme.atlassian.net, got {site!r}")
    deployment = str(raw.get("deployment") or "").strip()
    if deployment not in DEPLOYMENTS:
        errors.append(f"{where}.deployment: must be one of {' | '.join(DEPLOYMENTS)}")
    cloud_id = str(raw.get("cloudId") or "").strip()
    if deployment == SCOPED and not cloud_id:
        errors.append(f"{where}.cloudId: needed for deployment cloud-scoped")
    projects = raw.get("projects") or {}
    if not isinstance(projects, Mapping) or not all(_PROJECT.fullmatch(str(k)) for k in projects):
        errors.append(f"{where}.projects: expected a mapping of project keys (OPS: {{}})")
        projects = {}
    api = raw.get("api") or {}
    if not isinstance(api, Mapping):
        errors.append(f"{where}.api: expected a mapping with emailEnv and tokenEnv")
        api = {}
    email_env = (*_names(api.get("emailEnv"), f"{where}.api.emailEnv", errors), EMAIL_ENV)
    token_env = (*_names(api.get("tokenEnv"), f"{where}.api.tokenEnv", errors), TOKEN_ENV)
    if errors:
        raise JiraConfigError(errors)
    return JiraSite(
        site,
        deployment,
        tuple(sorted(str(k) for k in projects)),
        email_env,
        token_env,
        cloud_id,
        api=str(env.get(API_ENV, "")).strip(),
        source=where,
    )


def resolve(loop_config: str, ours: Any, env: Mapping[str, str] | None = None) -> JiraSite | None:
    """the-loop's own ``integrations.jira`` when its config is named, else ``jira:`` in
    theloop.yaml; None when neither has one (Jira refs are then refused)."""
    if loop_config:
        try:
            document = yaml.safe_load(Path(loop_config).read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise JiraConfigError(
                [f"THELOOP_LOOP_CONFIG cannot be read ({type(exc).__name__})"]
            ) from None
        integrations = document.get("integrations") if isinstance(document, Mapping) else None
        theirs = integrations.get("jira") if isinstance(integrations, Mapping) else None
        if theirs is not None:
            return parse(theirs, f"integrations.jira in {Path(loop_config).name}", env)
    return parse(ours, "jira in theloop.yaml", env)


def _names(raw: Any, where: str, errors: list[str]) -> tuple[str, ...]:
    names = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    if raw is not None and not names:
        errors.append(f"{where}: expected a variable's name or a list of them")
    bad = [n for n in names if not isinstance(n, str) or not _VARIABLE.fullmatch(n)]
    if bad:
        errors.append(f"{where}: {bad[0]!r} is not a variable's name")
    return tuple(n for n in names if n not in bad)


def _first(names: tuple[str, ...], env: Mapping[str, str]) -> str:
    return next((env[n].strip() for n in names if env.get(n, "").strip()), "")


def _file_token(env: Mapping[str, str]) -> str:
    path = env.get(TOKEN_FILE_ENV, "").strip()
    if not path:
        return ""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""  # said as a missing credential, naming the variables, never the path's text


def _either(names: tuple[str, ...]) -> str:
    return " or ".join(names) + (f" (or {TOKEN_FILE_ENV})" if TOKEN_ENV in names else "")
