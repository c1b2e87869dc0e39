"""The soak's rig: the loopback fakes, the real bot, and the faults played on them.

The bot is what ``make run`` runs — ``errbot -c config.py`` on SlackV3 (Socket Mode against
the fake of Slack, the real slack_sdk) — relaying to the fakes of GitHub and the-loop's
control plane, with a theloop.yaml that routes each repository to a room of its own. A
kill is ``SIGKILL``; the bot is started again at once on the same data dir and port, in
a thread, so the driver keeps going (the webhook refuses connections meanwhile, and the
driver sends again, as the-loop's sender does).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path

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
}
#: A delivered or dropped queue item; anything else is open (pending, in flight, parked).
_CLOSED = ("done", "dropped")


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
    )


class Rig:
    """The fakes and the bot of one soak; :meth:`close` stops them all."""

    def __init__(self, data_dir: Path, rooms: int, latency: float) -> None:
        self.rooms = rooms
        self.slack = FakeSlack(
            channels=[channel(n) for n in range(rooms)], latency=latency, limits=LIMITS
        )
        self.github = FakeGitHub({repo(n): set() for n in range(rooms)})
        self.loop = FakeLoop({})
        self.fired: Counter[str] = Counter()
        #: Why the run cannot go on (the bot would not start again), once it cannot.
        self.broken = ""
        self._restarting: threading.Thread | None = None
        self._loop_back: list[threading.Timer] = []
        #: A reply's dropped answer that, once struck, restarts the-loop: (fault, down).
        self._restart_after: tuple[LoopFault, float] | None = None
        data_dir.mkdir(parents=True, exist_ok=True)
        (data_dir / "theloop.yaml").write_text(settings(rooms), encoding="utf-8")
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
        self.bot = BotProcess(data_dir, backend="SlackV3", env=env)

    def start(self) -> None:
        self.bot.start(timeout=START_TIMEOUT)

    def add_item(self, ref: str) -> None:
        """A new work item ``github:acme/soakN#M``: its issue on GitHub, its session in
        the-loop."""
        name, number = ref.removeprefix("github:").split("#")
        with self.github._lock:
            self.github.issues[name].add(int(number))
        with self.loop._changed:
            self.loop.sessions[ref] = False

    @property
    def up(self) -> bool:
        """Whether the bot runs and is not being started again after a kill."""
        restarting = self._restarting is not None and self._restarting.is_alive()
        process = self.bot.process
        return not restarting and process is not None and process.poll() is None

    # -- faults ------------------------------------------------------------------------

    def play(self, fault: Fault) -> None:
        """Arm ``fault`` now."""
        self.fired[fault.kind] += 1
        options = fault.options
        if fault.kind == "kill":
            self.kill()
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

    def kill(self) -> None:
        """``SIGKILL`` the bot (unless it is still starting) and start it again in a thread."""
        if not self.up:
            self.fired["kill"] -= 1  # it is not running: nothing to kill this time
            return
        self.bot.kill()
        self._restarting = threading.Thread(target=self._start_again, daemon=True)
        self._restarting.start()

    def _start_again(self) -> None:
        for _ in range(3):  # a start that fails (a busy machine) is tried again
            try:
                self.bot.start(timeout=START_TIMEOUT)
                return
            except (RuntimeError, AssertionError) as exc:
                self.bot.kill()
                said = str(exc)[-2000:]
        self.broken = f"the bot did not start again after a kill, three times:\n{said}"

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
        if self._restarting is not None:
            self._restarting.join()

    # -- the bot's queues ----------------------------------------------------------------

    def queue_states(self) -> dict[tuple[str, str], int]:
        """``(queue, state)`` → how many items, read from the bot's SQLite file (read only)."""
        path = self.bot.queue_file
        if not path.exists():
            return {}
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT queue, state, COUNT(*) FROM items GROUP BY queue, state")
            return {(str(q), str(s)): int(n) for q, s, n in rows.fetchall()}

    def inbox_state(self, key: str) -> str:
        """The inbox's state for the event ``key`` (``""``: not stored)."""
        path = self.bot.queue_file
        if not path.exists():
            return ""
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute(
                "SELECT state FROM items WHERE queue='inbox' AND key=?", (key,)
            ).fetchone()
        return str(row[0]) if row else ""

    def open_items(self) -> int:
        """Items pending or in flight in either queue (parked ones are counted apart)."""
        states = self.queue_states()
        return sum(n for (_q, state), n in states.items() if state in ("pending", "inflight"))

    def parked(self) -> int:
        return sum(n for (_q, state), n in self.queue_states().items() if state == "parked")

    def close(self) -> None:
        self.slack.release()
        self.bot.kill()
        for fake in (self.slack, self.github, self.loop):
            fake.stop()
