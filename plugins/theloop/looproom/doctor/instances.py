"""The doctor's findings for each instance: its control plane answers, its stream opens,
and a note while two secrets are accepted (a rotation under way)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Sequence
from http.client import HTTPException

from looproom.doctor.findings import NOTE, OK, PROBLEM, Finding
from looproom.http.client import USER_AGENT, http
from looproom.instances.model import Instance

TIMEOUT = 5.0


def findings(instances: Sequence[Instance]) -> list[Finding]:
    """The doctor's findings for each instance: its control plane, its stream, its keys."""
    found = []
    for instance in instances:
        subject = f"instance {instance.name}"
        found.append(_control_plane(instance, subject))
        if instance.stream:
            found.append(_stream(instance, subject))
        if len(instance.secrets) > 1:
            found.append(
                Finding(
                    NOTE,
                    f"{subject}'s secrets",
                    "two accepted: a rotation is under way",
                    "once every sender signs with the new one, remove the old from secret:",
                )
            )
    return found


def _control_plane(instance: Instance, subject: str) -> Finding:
    answer = http("GET", instance.api + "/api/v1/health", _headers(instance), None, TIMEOUT)
    if answer.status == 200:
        return Finding(OK, f"{subject}'s control plane", f"{instance.api} answers")
    said = f"answers {answer.status}" if answer.status else f"no answer ({answer.error})"
    return Finding(
        PROBLEM,
        f"{subject}'s control plane",
        f"{instance.api} {said}",
        f"check instances.{instance.name}.api (and its token) and that the-loop runs",
    )


def _stream(instance: Instance, subject: str) -> Finding:
    headers = {**_headers(instance), "Accept": "text/event-stream"}
    request = urllib.request.Request(instance.stream, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            kind = response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as error:
        return Finding(PROBLEM, f"{subject}'s stream", f"{instance.stream} answers {error.code}")
    except (OSError, HTTPException) as error:
        return Finding(
            PROBLEM,
            f"{subject}'s stream",
            f"{instance.stream} does not answer ({type(error).__name__})",
            f"check instances.{instance.name}.stream and that the-loop runs",
        )
    if "text/event-stream" not in kind:
        return Finding(PROBLEM, f"{subject}'s stream", f"not an event stream ({kind})")
    return Finding(OK, f"{subject}'s stream", f"{instance.stream} opens")


def _headers(instance: Instance) -> dict[str, str]:
    auth = {"Authorization": f"Bearer {instance.token}"} if instance.token else {}
    return {"User-Agent": USER_AGENT, **auth}
