"""What the relay says in the room, and in ``!theloop queue``, about a decision's way out.

Landed: a threaded "recorded — moving on" under the gate or ask it answered. Refused for
good, or unconfirmed: ⚠️ with the reason and the key an admin retries or drops it by.
Still trying after a few attempts: said once. A peer's words in any of these (an error
``detail``, rejected node names) are made inert first.
"""

from __future__ import annotations

from collections.abc import Callable

from looproom.durable.queue import Item
from looproom.relay import forms
from looproom.relay.decision import Decision
from looproom.slack.text import defang, escape, neutralise


def _peer(text: str) -> str:
    """A peer's words (an error ``detail``, rejected node names) as inert mrkdwn: a
    FastAPI 422 echoes our input back, so it may carry ``<!channel>`` or a link."""
    return escape(neutralise(text))


def landed_text(decision: Decision, detail: str) -> str:
    """The threaded reply once a decision landed: its receipt when it carries one (a
    context record's 📎 names how many messages went), else "recorded — moving on"."""
    who = f"<@{decision.member}>"
    if decision.receipt:
        return decision.receipt.format(who=who, count=decision.count)
    note = f" ({_peer(detail)})" if detail.startswith("rejected") else ""
    then = f" — {decision.after}" if decision.after else ""
    return f"✅ recorded — moving on: the {_called(decision)} of {who}{note}{then}."


def _called(decision: Decision) -> str:
    """What the room's replies call it; its kind, for one stored before it carried that."""
    return decision.label or decision.kind


def failed_text(decision: Decision, reason: str, key: str) -> str:
    return (
        f"⚠️ The {_called(decision)} of <@{decision.member}> could not be relayed: "
        f"{_peer(reason)}. It is kept as `{key}` — an admin can `!theloop queue retry {key}`."
    )


def undeliverable_text(decision: Decision, reason: str, record: str) -> str:
    """A record mirrored on the ticket whose session could not take it."""
    where = f" ({_peer(record)})" if record.startswith("http") else ""
    return (
        f"⚠️ The {_called(decision)} of <@{decision.member}> is recorded on the work "
        f"item{where}, but the agent's session did not get it: {_peer(reason)}. A session "
        "started later reads it from the work item."
    )


def unsure_text(decision: Decision, key: str) -> str:
    return (
        f"⚠️ The {_called(decision)} of <@{decision.member}> may have reached the-loop, "
        f"which did not confirm it and whose event log could not be read to tell; it is not "
        f"sent again on its own, so it cannot arrive twice. "
        f"It is kept as `{key}` — an admin checks, then `!theloop queue retry {key}` or "
        f"`drop {key}`."
    )


def waiting_text(decision: Decision, reason: str) -> str:
    return (
        f"⏳ The {_called(decision)} of <@{decision.member}> is still waiting: it may "
        f"have reached the-loop already, and the-loop cannot be asked now ({_peer(reason)}). "
        "It is looked up again until the-loop answers, then sent only if it did not arrive — "
        "never twice; see `!theloop queue`."
    )


def still_trying_text(decision: Decision, reason: str) -> str:
    return (
        f"⚠️ The {_called(decision)} of <@{decision.member}> has not reached the-loop "
        f"yet ({_peer(reason)}); it is kept and retried — see `!theloop queue`."
    )


def queue_lines(items: list[Item], now: float) -> list[str]:
    """``!theloop queue``'s lines for decisions not relayed yet."""
    lines = []
    for item in items:
        decision = forms.decision_of(item.payload)
        what = f"{decision.kind} · {decision.work_item} by {decision.member}" if decision else "?"
        lines.append(queue_line(item, what, now))
    return lines


def queue_line(item: Item, what: str, now: float, inert: Callable[[str], str] = defang) -> str:
    """One ``!theloop queue`` line of something on its way out: its key, ``what`` it is,
    its state and attempts, and its last error made ``inert``."""
    state = "PARKED" if item.state == "parked" else item.state
    if item.state == "pending" and item.due > now:
        state += f", next try in {int(item.due - now)} s"
    error = f" — {inert(item.last_error)}" if item.last_error else ""
    return f"- `{item.key}` {what}: {state}, {item.attempts} attempt(s){error}"
