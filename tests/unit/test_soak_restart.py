"""The soak starts a killed replica again as a supervisor would, through a database outage.

Seed 7003 of the two-replica soak killed a replica just as PostgreSQL went away for 48 s:
a bot cannot start without its database (it exits naming it), and the soak gave up after
three quick starts, as if the bot were broken. systemd or Kubernetes start it again until
it runs; so does the soak now, and only failures with the database up count against it.
"""

from __future__ import annotations

from soak.rig import start_as_a_supervisor


class Outage:
    """A database away for the first ``down`` starts, and a bot that needs it to start."""

    def __init__(self, down: int, broken: bool = False) -> None:
        self.down, self.broken, self.starts = down, broken, 0

    def database_down(self) -> bool:
        return self.starts < self.down

    def start(self) -> None:
        self.starts += 1
        if self.starts <= self.down:
            raise RuntimeError("errbot exited (1): theloop cannot start, THELOOP_DATABASE_URL")
        if self.broken:
            raise RuntimeError("errbot exited (1): the bot itself is broken")


def test_a_replica_killed_during_a_long_outage_runs_again_once_the_database_is_back() -> None:
    outage = Outage(down=5)  # longer than three starts
    assert start_as_a_supervisor(outage.start, outage.database_down, pause=0) == ""
    assert outage.starts == 6


def test_a_bot_that_fails_to_start_with_its_database_up_fails_the_run_after_three() -> None:
    outage = Outage(down=2, broken=True)
    said = start_as_a_supervisor(outage.start, outage.database_down, pause=0)
    assert said.startswith("3 failed starts with the database up")
    assert "the bot itself is broken" in said
    assert outage.starts == 2 + 3


def test_the_supervisor_gives_up_at_its_bound_even_while_the_database_stays_away() -> None:
    outage = Outage(down=10**9)
    said = start_as_a_supervisor(outage.start, outage.database_down, pause=0.01, most=0.2)
    assert said.startswith("0 failed starts with the database up")
    assert 1 < outage.starts < 10**9
