"""The doctor's findings for each the-loop instance: its control plane answers, its stream
opens, two secrets mean a rotation under way; and, from the running bot, its last event and
queue and whether its requests were signed right."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from looproom.clients.the_loop import EventStream, LoopApi
from looproom.doctor.findings import EVIDENCE, NOTE, OK, PROBLEM, Finding
from looproom.durable.contract import WorkQueue
from looproom.http.client import HttpResult
from looproom.http.origins import redact_url
from looproom.instances import owners, report
from looproom.instances.fleet import Fleet
from looproom.settings.instances import Instance

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


def fleet_findings(fleet: Fleet, inbox: WorkQueue, relay: WorkQueue, now: float) -> list[Finding]:
    """The doctor's findings only the running bot has, per instance: its last event and
    queue, and whether what reached the webhook for it was signed right; then any request
    no instance's secret verified."""
    queued = report.waiting(fleet, inbox, relay)
    found = []
    for instance in fleet.instances:
        posted, relayed = queued[instance.name]
        found.append(
            Finding(
                OK,
                f"instance {instance.name}'s events",
                f"last event {report.ago(fleet.last_event(instance.name), now)}; "
                f"queue {posted} to post, {relayed} to relay",
            )
        )
        found.append(_deliveries(instance, fleet.answered[instance.name].counts()))
    found.append(_claims(fleet))
    strangers = fleet.answered[""].counts().get(401, 0)
    if strangers:
        found.append(
            Finding(
                PROBLEM,
                "requests signed by no instance",
                f"{strangers} of the webhook's last requests had no key id or one no instance "
                "has, and no instance's secret verified them (401)",
                "give each sender its instance's keyId (THELOOP_KEY_ID) and the secret its "
                "instances.<name>.secret names",
            )
        )
    return found


def _claims(fleet: Fleet) -> Finding:
    """Is there room for new learned claims, and were any refused for want of it?"""
    kept, cap = fleet.owners.learned_total(), owners.MOST_CLAIMS
    refused = {name: n for name, n in sorted(fleet.owners.refused.items()) if n}
    subject = "learned claims"
    if refused:
        who = ", ".join(f"{name}: {n}" for name, n in refused.items())
        return Finding(
            PROBLEM,
            subject,
            f"{kept} kept of the cap of {cap}, every one in use: new work items were refused "
            f"since the start ({who}) — their events wait with their senders (503)",
            "name those instances' repositories or prefixes under instances.<name>.workItems "
            f"(configured bounds take no claim), or wait for claims idle "
            f"{owners.IN_USE_SECONDS / 86_400:.0f} days to lapse",
        )
    if kept >= cap * 0.9:
        return Finding(
            EVIDENCE,
            subject,
            f"{kept} kept of the cap of {cap}: at the cap, new work items are refused",
            "name the instances' repositories or prefixes under instances.<name>.workItems",
        )
    return Finding(OK, subject, f"{kept} kept of the cap of {cap}")


def _deliveries(instance: Instance, recent: Mapping[int, int]) -> Finding:
    """Were the instance's recent requests signed right, and about its own work items?"""
    subject, key = f"instance {instance.name}'s deliveries", f"instances.{instance.name}"
    accepted = recent.get(202, 0) + recent.get(200, 0)
    unsigned, foreign = recent.get(401, 0), recent.get(403, 0)
    total = sum(recent.values())
    if not total:
        return Finding(
            NOTE,
            subject,
            "no event of it has reached the webhook since the bot started",
            f"send one from its side (its THELOOP_KEY_ID is {instance.key_id})",
        )
    if unsigned and not accepted:
        return Finding(
            PROBLEM,
            subject,
            f"all {unsigned} of its last {total} request(s) under key id {instance.key_id} "
            "were refused as badly signed (401): its sender signs with another secret, or "
            "its clock is off by more than 5 minutes",
            f"give its sender the secret {key}.secret names, and check both clocks",
        )
    if unsigned or foreign:
        return Finding(
            EVIDENCE,
            subject,
            f"{accepted} accepted, {unsigned} badly signed (401), {foreign} about another "
            f"instance's work item (403), of its last {total}",
            f"a second sender with an old secret, or a work item {key}.workItems does not claim?",
        )
    return Finding(OK, subject, f"{accepted} of its last {total} accepted, signed right")


def _control_plane(instance: Instance, subject: str) -> Finding:
    read = LoopApi(instance.api, instance.token, timeout=TIMEOUT).health()
    shown = redact_url(instance.api)
    if read.status == 200:
        return Finding(OK, f"{subject}'s control plane", f"{shown} answers")
    return Finding(
        PROBLEM,
        f"{subject}'s control plane",
        f"{shown} {said(read.answer)}",
        f"check instances.{instance.name}.api (and its token) and that the-loop runs",
    )


def _stream(instance: Instance, subject: str) -> Finding:
    answer = EventStream(instance.stream, instance.token).opens(TIMEOUT)
    shown = redact_url(instance.stream)
    if answer.status != 200:
        return Finding(
            PROBLEM,
            f"{subject}'s stream",
            f"{shown} {said(answer)}",
            f"check instances.{instance.name}.stream and that the-loop runs",
        )
    kind = answer.header("content-type")
    if "text/event-stream" not in kind:
        return Finding(PROBLEM, f"{subject}'s stream", f"not an event stream ({kind})")
    return Finding(OK, f"{subject}'s stream", f"{shown} opens")


def said(answer: HttpResult) -> str:
    """What a peer answered, for a finding: its status (and where a redirect not followed
    pointed), or that it did not answer and why."""
    if answer.status == 0:
        return f"does not answer ({answer.error or 'no answer'})"
    return f"answers {answer.status}" + (f", {answer.error}" if answer.moved_to else "")
