"""The soak's fault schedule: seeded, fixed before the run starts, printed, then played.

Each :class:`Fault` is armed at its second of the run. A Slack fault is scripted on the
fake for its next matching calls (a burst of 429s with ``Retry-After``, 5xx answers,
dropped connections, a post that lands and then answers 500), so it strikes whatever the
bot calls next; a the-loop restart stops its API for a few seconds — at once, or right after
it dropped the connection of the next reply handed to a session (delivered or not: the bot
cannot tell); a GitHub fault answers the next comment posts 502; a kill is ``SIGKILL`` of
the bot, which is started again at once.

With ``replicas`` (the shared mode, two bots on one PostgreSQL) a kill strikes either
replica, in turn by pairs, and starts it again at once or a lease later; the database is
restarted every few minutes (down 2–60 s); and two more kinds join the round: ``db-cut``
(the bots' connections terminated) and ``replica-pause`` (a replica stopped with SIGSTOP
for longer than a lease, then continued). The single bot's schedule for a seed is what it
was before these existed: the shared mode's choices come from a generator of their own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

#: The kinds, in the order the summary prints them.
KINDS = (
    "kill",
    "slack-429",
    "slack-5xx",
    "slack-drop",
    "slack-lost-answer",
    "socket-drop",
    "loop-restart",
    "loop-lost-answer",
    "github-502",
)
#: The shared mode's own kinds (``--replicas 2``), in the order the summary prints them.
SHARED_KINDS = ("db-restart", "db-cut", "replica-pause")
#: A database restart every few minutes: the first after this many seconds, then every
#: interval or so; each keeps the server down for 2–60 s.
FIRST_DB_RESTART, DB_RESTART_EVERY, DB_RESTART_JITTER = 80.0, 200.0, 30.0
DB_DOWN = (2.0, 60.0)
#: A kill about once a minute: the first after this many seconds, then every minute or so.
FIRST_KILL, KILL_EVERY, KILL_JITTER = 40.0, 60.0, 10.0
#: Every other fault: one about every this many seconds, the kinds in a shuffled round so
#: that each strikes in a short run too.
OTHER_EVERY = 12.0
#: The Slack methods a scripted fault may strike (what the bot calls to deliver and decide).
SLACK_METHODS = (
    "chat.postMessage",
    "chat.postMessage",
    "chat.update",
    "chat.update",
    "conversations.replies",
    "reactions.add",
    "*",
    "*",
)


@dataclass(frozen=True)
class Fault:
    """One fault: armed ``at`` seconds into the run; ``options`` say how it strikes."""

    at: float
    kind: str
    options: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        said = ", ".join(f"{key}={value}" for key, value in sorted(self.options.items()))
        return f"{self.at:7.1f}s  {self.kind:<17} {said}"


def schedule(seed: int, seconds: float, replicas: int = 1, lease: float = 10.0) -> list[Fault]:
    """The faults of a run of ``seconds``, in time order; the same seed, the same faults.
    ``replicas`` above one adds the shared mode's (``lease``: the replicas' lease, s)."""
    rng = random.Random(seed)
    shared = random.Random(seed + 1) if replicas > 1 else None
    faults = [Fault(round(at, 1), "kill") for at in _kill_times(rng, seconds)]
    if shared is not None:
        faults = _aim_kills(shared, faults, replicas, lease)
        faults += _db_restarts(shared, seconds)
    at, kinds = rng.uniform(3.0, OTHER_EVERY), []
    while at < seconds:
        if not kinds:
            kinds = list(KINDS[1:]) + (list(SHARED_KINDS[1:]) if shared else [])
            (shared or rng).shuffle(kinds)
        kind = kinds.pop()
        options = _shared_options(shared, kind, replicas, lease) if shared else {}
        faults.append(Fault(round(at, 1), kind, options or _options(rng, kind)))
        at += rng.uniform(0.5 * OTHER_EVERY, 1.5 * OTHER_EVERY)
    return sorted(faults, key=lambda fault: fault.at)


def _aim_kills(rng: random.Random, kills: list[Fault], replicas: int, lease: float) -> list[Fault]:
    """Each kill at a replica — every replica in turn, shuffled by rounds, so they are
    spread over all — started again at once, or a lease later (its claims lapse first)."""
    aimed, turn = [], []
    for kill in kills:
        if not turn:
            turn = list(range(replicas))
            rng.shuffle(turn)
        after = rng.choice((0.0, 0.0, round(lease + rng.uniform(1.0, 5.0), 1)))
        aimed.append(Fault(kill.at, "kill", {"replica": turn.pop(), "after": after}))
    return aimed


def _db_restarts(rng: random.Random, seconds: float) -> list[Fault]:
    faults, at = [], FIRST_DB_RESTART
    while at < seconds:
        when = at + rng.uniform(-DB_RESTART_JITTER, DB_RESTART_JITTER)
        down = round(rng.uniform(*DB_DOWN), 1)
        if when < seconds:
            faults.append(Fault(round(when, 1), "db-restart", {"down": down}))
        at += DB_RESTART_EVERY
    return faults


def _shared_options(rng: random.Random, kind: str, replicas: int, lease: float) -> dict[str, Any]:
    if kind == "replica-pause":
        pause = round(lease + rng.uniform(2.0, 8.0), 1)
        return {"replica": rng.randrange(replicas), "for": pause}
    return {}


def _kill_times(rng: random.Random, seconds: float) -> list[float]:
    times, at = [], FIRST_KILL
    while at < seconds:
        times.append(at + rng.uniform(-KILL_JITTER, KILL_JITTER))
        at += KILL_EVERY
    return times


def _options(rng: random.Random, kind: str) -> dict[str, Any]:
    if kind == "slack-429":
        method = rng.choice(SLACK_METHODS)
        return {"method": method, "times": rng.randint(3, 8), "retry_after": rng.randint(1, 3)}
    if kind == "slack-5xx":
        method = rng.choice(SLACK_METHODS)
        return {"method": method, "times": rng.randint(1, 3), "status": rng.choice([500, 503])}
    if kind == "slack-drop":
        return {"method": rng.choice(SLACK_METHODS), "times": rng.randint(1, 2)}
    if kind == "slack-lost-answer":
        return {"method": rng.choice(("chat.postMessage", "chat.update")), "times": 1}
    if kind == "loop-restart":
        return {"down": round(rng.uniform(2.0, 6.0), 1)}
    if kind == "loop-lost-answer":
        how = rng.choice(("land_then_drop", "drop"))
        return {"how": how, "down": round(rng.uniform(2.0, 6.0), 1)}
    if kind == "github-502":
        return {"times": rng.randint(1, 3)}
    return {}
