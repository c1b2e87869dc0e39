"""The soak's rig: the loopback fakes, the real bot, and the faults played on them.

The bot is what ``make run`` runs — ``errbot -c config.py`` on SlackV3 (Socket Mode against
the fake of Slack, the real slack_sdk) — relaying to the fakes of GitHub and the-loop's
control plane, with a theloop.yaml that routes each repository to a room of its own. A
kill is ``SIGKILL``; the bot is started again at once on the same data dir and port, in
a thread, so the driver keeps going (the webhook refuses connections meanwhile, and the
driver sends again, as the-loop's sender does).

With ``replicas`` above one (the shared mode) there are that many bots, each with a data
dir and port of its own, on one PostgreSQL database of the soak's making
(:mod:`soak.database`), with a short lease so that a takeover is seen often; a kill or a
pause strikes one of them, and the queues are read from the database.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from soak.database import SoakDatabase
from soak.faults import Fault
from tests.e2e.botproc import BotProcess
from tests.e2e.slackbot import START_TIMEOUT, slack_env
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.loop_api import REPLY, FakeLoop
from tests.fakes.loopback import Fault as LoopFault
from tests.fakes.slack_api import FakeSlack, Limit

ALICE = "U0ALICE01"
SIGNING_SECRET = "soak-slack-signing-secret"
SUBSCRIBED = (
    "phase.started",
    "phase.progress",
    "phase.completed",
    "phase-approval-pending",
    "session.awaiting_input",
    "work-item-complete",
    "work-item.closed",
    "comment.agent",
)
#: Slack's published limits, as the fake enforces them: about one post a second per
#: channel with short bursts, tier 3 (50+ a minute) and tier 4 (100+) for the rest.
LIMITS = {
    "chat.postMessage": Limit(per_minute=60, burst=3, per_channel=True),
    "chat.update": Limit(per_minute=50, burst=100),
    "reactions.add": Limit(per_minute=50, burst=100),
    "conversations.history": Limit(per_minute=50, burst=100),
    "conversations.replies": Limit(per_minute=50, burst=100),
    "conversations.info": Limit(per_minute=50, burst=100),
    "chat.postEphemeral": Limit(per_minute=100, burst=200),
    "views.publish": Limit(per_minute=100, burst=200),  # each member's App Home
}
#: The replicas' lease in the soak (s): short, so a takeover happens within a run.
LEASE = 10.0


def start_as_a_supervisor(
    start: Callable[[], None],
    database_down: Callable[[], bool],
    *,
    tries: int = 3,
    pause: float = 1.0,
    most: float = 300.0,
) -> str:
    """Start a killed bot again as systemd's ``Restart=on-failure`` or Kubernetes would:
    a bot started while the database is away exits naming it (it cannot start without
    it), and is started again until the database is back; then ``tries`` failed starts
    (a busy machine) give up. Bounded by ``most`` seconds. ``""`` once it runs, else why
    it did not."""
    deadline, failed, said = time.monotonic() + most, 0, "it was never started"
    while failed < tries and time.monotonic() < deadline:
        down = database_down()
        try:
            start()
            return ""
        except (RuntimeError, AssertionError) as exc:
            said = str(exc)[-2000:]
        if not (down or database_down()):
            failed += 1  # a failure with the database away is the outage's, not the bot's
        time.sleep(pause)
    return f"{failed} failed starts with the database up (of {tries}):\n{said}"


def repo(room: int) -> str:
    return f"acme/soak{room}"


def channel(room: int) -> tuple[str, str]:
    """The room's id and name."""
    return f"C0SOAK{room:04d}", f"soak-{room}"


def settings(rooms: int) -> str:
    """theloop.yaml: every event type the driver sends, each repository its own room."""
    routes = "".join(f'  "{repo(n)}": "#{channel(n)[1]}"\n' for n in range(rooms))
    return (
        "slack:\n"
        f'  channel: "#{channel(0)[1]}"\n'
        f"  subscribe: [{', '.join(SUBSCRIBED)}]\n"
        f"  authorizedUsers: [{ALICE}]\n"
        "  read: {catchUpSeconds: 60}\n"
        f"people: {{{ALICE}: alice-gh}}\n"
        f"rooms:\n{routes}"
        # Alice is told of each ask directly, reminded and escalated to within seconds, so
        # a soak's minutes see each step under the faults (docs/attention.md).
        "attention:\n  direct: true\n  remindAfter: 4\n  escalateAfter: 9\n"
        '  escalateTo: [S0SOAKLEAD]\n  workingHours: "00:00-24:00"\n'
    )


class Rig:
    """The fakes and the bots of one soak; :meth:`close` stops them all."""

    def __init__(self, data_dir: Path, rooms: int, latency: float, replicas: int = 1) -> None:
        self.rooms = rooms
        self.slack = FakeSlack(
            channels=[channel(n) for n in range(rooms)], latency=latency, limits=LIMITS
        )
        self.github = FakeGitHub({repo(n): set() for n in range(rooms)})
        self.loop = FakeLoop({})
        self.fired: Counter[str] = Counter()
        #: Kills by replica (its index).
        self.kills: Counter[int] = Counter()
        self._broken = ""
        self._restarting: dict[int, threading.Thread] = {}
        self._paused: dict[int, threading.Timer] = {}
        self._loop_back: list[threading.Timer] = []
        #: A reply's dropped answer that, once struck, restarts the-loop: (fault, down).
        self._restart_after: tuple[LoopFault, float] | None = None
        self.db = SoakDatabase() if replicas > 1 else None
        self.slack.start()
        self.github.start()
        self.loop.start()
        env = {
            **slack_env(self.slack),
            "THELOOP_GITHUB_TOKEN": TOKEN,
            "THELOOP_GITHUB_API": self.github.url,
            "THELOOP_LOOP_API": self.loop.url,
            "THELOOP_SLACK_SIGNING_SECRET": SIGNING_SECRET,
        }
        self.bots: list[BotProcess] = []
        for n in range(replicas):
            where = data_dir if replicas == 1 else data_dir / f"replica-{n}"
            where.mkdir(parents=True, exist_ok=True)
            (where / "theloop.yaml").write_text(settings(rooms), encoding="utf-8")
            own = dict(env)
            if self.db is not None:
                own.update(
                    THELOOP_DATABASE_URL=self.db.url,
                    THELOOP_REPLICA=f"replica-{n}",
                    THELOOP_LEASE_SECONDS=f"{LEASE:g}",
                )
            self.bots.append(BotProcess(where, backend="SlackV3", env=own))

    @property
    def bot(self) -> BotProcess:
        return self.bots[0]

    @property
    def broken(self) -> str:
        """Why the run cannot go on (a bot or the database would not start again)."""
        return self._broken or (self.db.broken if self.db is not None else "")

    def start(self) -> None:
        for bot in self.bots:
            bot.start(timeout=START_TIMEOUT)

    def add_item(self, ref: str) -> None:
        """A new work item ``github:acme/soakN#M``: its issue on GitHub, its session in
        the-loop."""
        name, number = ref.removeprefix("github:").split("#")
        with self.github._lock:
            self.github.issues[name].add(int(number))
        with self.loop._changed:
            self.loop.sessions[ref] = False

    def running(self, n: int) -> bool:
        """Whether replica ``n`` runs: started, not being started again, not paused."""
        restarting = n in self._restarting and self._restarting[n].is_alive()
        process = self.bots[n].process
        alive = process is not None and process.poll() is None
        return alive and not restarting and n not in self._paused

    @property
    def up(self) -> bool:
        """Whether every bot runs (none is being started again or paused) and the
        database, if any, is up."""
        running = all(self.running(n) for n in range(len(self.bots)))
        return running and (self.db is None or self.db.up)

    def pick(self, rng: random.Random) -> BotProcess | None:
        """The bot a load balancer hands the next request to: one that runs, drawn (a
        health check takes a killed or stalled one out); None when none runs."""
        running = [bot for n, bot in enumerate(self.bots) if self.running(n)]
        return rng.choice(running) if running else None

    # -- faults ------------------------------------------------------------------------

    def play(self, fault: Fault) -> None:
        """Arm ``fault`` now."""
        self.fired[fault.kind] += 1
        options = fault.options
        if fault.kind == "kill":
            self.kill(options.get("replica", 0), options.get("after", 0.0))
        elif fault.kind == "slack-429":
            self.slack.fail(
                options["method"], "429", times=options["times"], retry_after=options["retry_after"]
            )
        elif fault.kind == "slack-5xx":
            self.slack.fail(
                options["method"], "5xx", times=options["times"], status=options["status"]
            )
        elif fault.kind == "slack-drop":
            self.slack.fail(options["method"], "disconnect", times=options["times"])
        elif fault.kind == "slack-lost-answer":
            self.slack.fail(options["method"], "land_then_5xx", times=options["times"])
        elif fault.kind == "socket-drop":
            self.slack.drop_sockets()
        elif fault.kind == "loop-restart":
            self.restart_loop(options["down"])
        elif fault.kind == "loop-lost-answer":
            self.loop.fail(REPLY, kind=options["how"])
            with self.loop._changed:
                self._restart_after = (self.loop.faults[-1], options["down"])
        elif fault.kind == "github-502":
            self.github.fail("/comments", 502, times=options["times"])
        else:
            self._play_shared(fault)

    def _play_shared(self, fault: Fault) -> None:
        assert self.db is not None, f"{fault.kind} is a fault of the shared mode"
        if fault.kind == "db-restart":
            if not self.db.restart(fault.options["down"]):
                self.fired[fault.kind] -= 1  # already down: not a restart of its own
        elif fault.kind == "db-cut":
            self.db.cut()
        elif fault.kind == "replica-pause":
            self.pause(fault.options["replica"], fault.options["for"])

    def kill(self, n: int, after: float = 0.0) -> None:
        """``SIGKILL`` replica ``n`` (another that runs when it does not) and start it
        again in a thread, ``after`` s later."""
        if not self.running(n):
            n = next((m for m in range(len(self.bots)) if self.running(m)), -1)
        if n < 0:
            self.fired["kill"] -= 1  # none is running: nothing to kill this time
            return
        self.kills[n] += 1
        self.bots[n].kill()
        self._restarting[n] = threading.Thread(
            target=self._start_again, args=(n, after), daemon=True
        )
        self._restarting[n].start()

    def _start_again(self, n: int, after: float) -> None:
        time.sleep(after)
        bot = self.bots[n]

        def start() -> None:
            try:
                bot.start(timeout=START_TIMEOUT)
            except BaseException:
                bot.kill()
                raise

        database_down = (lambda: not self.db.up) if self.db is not None else (lambda: False)
        said = start_as_a_supervisor(start, database_down)
        if said:
            self._broken = f"replica {n} did not start again after a kill:\n{said}"

    def pause(self, n: int, seconds: float) -> None:
        """``SIGSTOP`` replica ``n`` (its clock and network frozen as a whole) for
        ``seconds`` — longer than a lease — then ``SIGCONT``."""
        process = self.bots[n].process
        if not self.running(n) or process is None:
            self.fired["replica-pause"] -= 1
            return
        os.killpg(process.pid, signal.SIGSTOP)
        timer = threading.Timer(seconds, self._resume, args=(n, process.pid))
        timer.daemon = True
        self._paused[n] = timer
        timer.start()

    def _resume(self, n: int, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGCONT)
        self._paused.pop(n, None)

    def restart_loop(self, down: float) -> None:
        """the-loop's API goes away (connections refused) and comes back ``down`` s later."""
        self.loop.stop()
        timer = threading.Timer(down, self._loop_up)
        timer.daemon = True
        self._loop_back.append(timer)
        timer.start()

    def poll(self) -> None:
        """the-loop goes down right after it dropped a reply's answer (a restart mid-reply)."""
        if self._restart_after is not None and self._restart_after[0].times == 0:
            down = self._restart_after[1]
            self._restart_after = None
            self.restart_loop(down)

    def _loop_up(self) -> None:
        for _ in range(50):  # the port may linger a moment after the stop
            try:
                self.loop.start()
                return
            except OSError:
                time.sleep(0.1)

    def calm(self) -> None:
        """No fault from now on: scripted ones not struck yet are withdrawn, the-loop is up."""
        with self.slack._changed:
            self.slack.faults.clear()
        for fake in (self.github, self.loop):
            with fake._changed:
                fake.faults.clear()
        self._restart_after = None
        for timer in self._loop_back:
            timer.join()
        for timer in list(self._paused.values()):
            timer.join()
        for thread in list(self._restarting.values()):
            thread.join()
        if self.db is not None:
            self.db.calm()

    # -- the bots' queues ---------------------------------------------------------------

    def queue_states(self) -> dict[tuple[str, str], int]:
        """``(queue, state)`` → how many items: the bot's SQLite file (read only), or the
        shared database (empty while it cannot say)."""
        if self.db is not None:
            return self.db.queue_states() or {}
        path = self.bot.queue_file
        if not path.exists():
            return {}
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT queue, state, COUNT(*) FROM items GROUP BY queue, state")
            return {(str(q), str(s)): int(n) for q, s, n in rows.fetchall()}

    def asks(self) -> tuple[list[tuple], list[tuple]]:
        """The asks on record ``(id, outcome, closed)`` and each step taken ``(ask, member,
        step, at)``: the bot's SQLite file (read only), or the shared database."""
        asks_sql = "SELECT id, outcome, closed FROM theloop_asks"
        steps_sql = "SELECT ask, member, step, at FROM theloop_ask_steps"
        if self.db is not None:
            return self.db.look(asks_sql) or [], self.db.look(steps_sql) or []
        path = self.bot.queue_file
        if not path.exists():
            return [], []
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return db.execute(asks_sql).fetchall(), db.execute(steps_sql).fetchall()

    def inbox_state(self, key: str) -> str:
        """The inbox's state for the event ``key`` (``""``: not stored)."""
        if self.db is not None:
            return self.db.inbox_state(key)
        path = self.bot.queue_file
        if not path.exists():
            return ""
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute(
                "SELECT state FROM items WHERE queue='inbox' AND key=?", (key,)
            ).fetchone()
        return str(row[0]) if row else ""

    def open_items(self) -> int:
        """Items pending or in flight in either queue (parked ones are counted apart); a
        large number while the database cannot say."""
        if self.db is not None and self.db.queue_states() is None:
            return 1_000_000
        states = self.queue_states()
        return sum(n for (_q, state), n in states.items() if state in ("pending", "inflight"))

    def parked(self) -> int:
        return sum(n for (_q, state), n in self.queue_states().items() if state == "parked")

    def close(self) -> None:
        self.slack.release()
        for n, bot in enumerate(self.bots):
            if n in self._paused and bot.process is not None:
                self._paused[n].cancel()
                self._resume(n, bot.process.pid)
            bot.kill()
        for fake in (self.slack, self.github, self.loop):
            fake.stop()
        if self.db is not None:
            self.db.close()
