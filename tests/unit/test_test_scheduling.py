"""Which worker runs which test under ``make test`` (tests/support/scheduling.py).

A module whose tests share one costly setup runs whole on one worker, so the setup is built
once; every other test goes to whichever worker is free. Every module with such a setup is
named for it, so none is built twice unnoticed.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from xdist.remote import Producer

from tests.support.scheduling import TOGETHER, OneSetupOneWorker

ROOT = Path(__file__).resolve().parents[2]
SHARED_SETUP = re.compile(r"""scope\s*=\s*["'](module|package|class)["']""")

GROUPED = [f"tests/e2e/test_sender_bot.py::test_{n}" for n in "abcd"]
SINGLE = [f"tests/unit/test_{m}.py::test_{n}" for m in "xy" for n in "abcd"]


class _Worker:
    """What the scheduler sees of an xdist worker: it is sent tests by their index."""

    def __init__(self, name: str) -> None:
        self.gateway = SimpleNamespace(id=name)
        self.shutting_down = False
        self.sent: list[int] = []

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


class _TwoWorkers:
    """The configuration of ``pytest -n 2`` (``--tx popen`` twice), as the scheduler reads it."""

    option = SimpleNamespace(loadscopereorder=True)

    def getvalue(self, name: str) -> object:
        return {"tx": ["popen", "popen"]}[name]


def _ran(collection: list[str]) -> dict[str, list[str]]:
    """Two workers run what they are sent, a test each in turn, until the run is over."""
    quiet = Producer("scheduler", enabled=False)  # as xdist's own log is without --debug
    scheduler = OneSetupOneWorker(_TwoWorkers(), quiet)  # type: ignore[arg-type]
    workers = [_Worker("gw0"), _Worker("gw1")]
    for worker in workers:
        scheduler.add_node(worker)  # type: ignore[arg-type]
    for worker in workers:
        scheduler.add_node_collection(worker, collection)  # type: ignore[arg-type]
    scheduler.schedule()
    done = dict.fromkeys(workers, 0)
    for _ in range(10 * len(collection)):
        if scheduler.tests_finished:
            break
        for worker in workers:
            if done[worker] < len(worker.sent):
                scheduler.mark_test_complete(worker, worker.sent[done[worker]])  # type: ignore[arg-type]
                done[worker] += 1
    assert scheduler.tests_finished
    return {w.gateway.id: [collection[i] for i in w.sent] for w in workers}


def test_a_module_sharing_a_setup_runs_whole_on_one_worker_the_rest_on_both() -> None:
    ran = _ran(SINGLE[:4] + GROUPED + SINGLE[4:])
    assert sorted(ran["gw0"] + ran["gw1"]) == sorted(SINGLE + GROUPED)  # each test once
    assert [w for w, tests in ran.items() if set(GROUPED) & set(tests)] in (["gw0"], ["gw1"])
    assert all(set(SINGLE) & set(tests) for tests in ran.values())


def test_every_module_with_a_module_wide_setup_is_named_and_every_one_named_exists() -> None:
    modules = sorted(ROOT.glob("tests/**/test_*.py"))
    shared = {
        path.relative_to(ROOT).as_posix()
        for path in modules
        if SHARED_SETUP.search(path.read_text(encoding="utf-8"))
    }
    shared.discard(Path(__file__).relative_to(ROOT).as_posix())  # names the pattern only
    assert shared == set(TOGETHER)
    conftests = sorted(ROOT.glob("tests/**/conftest.py"))
    assert [c for c in conftests if SHARED_SETUP.search(c.read_text(encoding="utf-8"))] == []
