"""The doctor's checks beyond Slack: the webhook secret, GitHub, the-loop's API and stream."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from looproom.clients.github import GitHub
from looproom.clients.the_loop import EventStream, LoopApi
from looproom.doctor.findings import EVIDENCE, NOTE, OK, PROBLEM, Finding
from looproom.http.client import HttpResult
from looproom.http.origins import redact_url
from looproom.inbound.webhook import SECRET_ENV
from looproom.settings import Environment

TIMEOUT = 10.0
USER_AGENT = "theloop-doctor"


def webhook(
    env: Environment, *, local_secret: bool = False, recent: Mapping[int, int] | None = None
) -> list[Finding]:
    """Is the webhook's secret set (without one it answers 503 to everything); and, where
    the bot's own answers are known (``recent``: status → count), were they signed right?"""
    found = [_secret(env, local_secret)]
    if recent is not None and found[0].level != PROBLEM:
        found.append(_deliveries(recent))
    return found


def _deliveries(recent: Mapping[int, int]) -> Finding:
    accepted = recent.get(202, 0) + recent.get(200, 0)
    unsigned = recent.get(401, 0)
    total = sum(recent.values())
    subject = "recent deliveries"
    if not total:
        return Finding(
            NOTE,
            subject,
            "no event has reached the webhook since the bot started",
            'send one from the-loop\'s side (docs/connect-the-loop.md, "Check that it works")',
        )
    if unsigned and not accepted:
        return Finding(
            PROBLEM,
            subject,
            f"all {unsigned} of the last {total} request(s) were refused as badly signed (401): "
            "the sender signs with another secret, or its clock is off by more than 5 minutes",
            f"give the-loop's sender the bot's {SECRET_ENV}, and check both clocks",
        )
    if unsigned:
        return Finding(
            EVIDENCE,
            subject,
            f"{accepted} accepted, {unsigned} refused as badly signed (401), of the last {total}",
            "a second sender with an old secret? its requests are refused",
        )
    return Finding(OK, subject, f"{accepted} of the last {total} accepted, signed right")


def _secret(env: Environment, local_secret: bool) -> Finding:
    if local_secret:
        return Finding(OK, "webhook secret", "a local one, made for the Text backend's first run")
    if env.webhook_secret:
        return Finding(OK, "webhook secret", f"{SECRET_ENV} is set: signed events are accepted")
    if env.backend == "Text":
        return Finding(
            NOTE,
            "webhook secret",
            f"{SECRET_ENV} is unset: on the Text backend the bot makes a local one at start",
        )
    return Finding(
        PROBLEM,
        "webhook secret",
        f"{SECRET_ENV} is unset: POST /theloop/events answers 503 (fail closed)",
        f"set {SECRET_ENV} to the same value as the-loop's sender "
        "(`openssl rand -hex 32` makes one)",
    )


def github(env: Environment, repos: Iterable[str]) -> list[Finding]:
    """Is the token good, and can it comment on issues of each relay repository?"""
    if not env.github_token:
        return [
            Finding(
                NOTE,
                "GitHub",
                "THELOOP_GITHUB_TOKEN is unset: decisions go to the local ledger only",
                "set a token that may comment on the work items' issues to relay them",
            )
        ]
    client = GitHub(env.github_api, env.github_token, timeout=TIMEOUT, user_agent=USER_AGENT)
    user = client.user()
    if user.value is None:
        return [
            _refused("GitHub token", user.answer, "a token GitHub accepts: THELOOP_GITHUB_TOKEN")
        ]
    found = [Finding(OK, "GitHub token", f"valid, as {user.value}")]
    classic = user.answer.header("x-oauth-scopes")
    for repo in sorted(set(repos)):
        found.append(_repository(repo, client.repository(repo).answer, classic))
    return found


def _repository(repo: str, answer: HttpResult, classic_scopes: str) -> Finding:
    subject = f"GitHub {repo}"
    if answer.status != 200:
        return _refused(subject, answer, f"give the token access to {repo}")
    body = answer.json() or {}
    if not body.get("has_issues", True):
        return Finding(PROBLEM, subject, "issues are turned off: no comment can be posted")
    if not (body.get("permissions") or {}).get("pull", True):
        return Finding(PROBLEM, subject, "the token cannot read it", f"grant access to {repo}")
    scopes = {s.strip() for s in classic_scopes.split(",") if s.strip()}
    if scopes and not scopes & {"repo", "public_repo"}:
        return Finding(
            PROBLEM,
            subject,
            f"the classic token's scopes ({', '.join(sorted(scopes))}) cannot comment",
            "add the repo scope (public_repo for a public repository)",
        )
    return Finding(
        OK,
        subject,
        "readable, issues on: the token can comment (a fine-grained token also needs "
        "Issues: read and write)",
    )


def loop_api(env: Environment) -> Finding | None:
    """Does the-loop's control plane answer its health route?"""
    if not env.loop_api:
        return None
    read = LoopApi(env.loop_api, timeout=TIMEOUT, user_agent=USER_AGENT).health()
    if read.status == 200:
        return Finding(OK, "the-loop's API", f"{redact_url(env.loop_api)} answers")
    return _refused("the-loop's API", read.answer, "check THELOOP_LOOP_API and that the-loop runs")


def loop_stream(env: Environment) -> Finding | None:
    """Does the-loop's event stream open (only its headers are read)?"""
    if not env.loop_stream:
        return None
    shown = redact_url(env.loop_stream)
    answer = EventStream(env.loop_stream, user_agent=USER_AGENT).opens(TIMEOUT)
    if answer.status == 0:
        return Finding(
            PROBLEM,
            "the-loop's stream",
            f"{shown} does not answer ({answer.error})",
            "check THELOOP_LOOP_STREAM and that the-loop runs",
        )
    if answer.status != 200:
        moved = f", {answer.error}" if answer.moved_to else ""
        return Finding(PROBLEM, "the-loop's stream", f"{shown} answers {answer.status}{moved}")
    kind = answer.header("content-type")
    if "text/event-stream" not in kind:
        return Finding(PROBLEM, "the-loop's stream", f"{shown} is not an event stream ({kind})")
    return Finding(OK, "the-loop's stream", f"{shown} opens")


def _refused(subject: str, answer: HttpResult, remedy: str) -> Finding:
    said = f"answers {answer.status}" if answer.status else f"no answer ({answer.error})"
    if answer.moved_to:  # a redirect not followed: where it pointed
        said += f", {answer.error}"
    return Finding(PROBLEM, subject, said, remedy)
