"""``python -m soak [--minutes 10] [--seed N]``: run the soak, print its figures, exit 1 on
anything lost, doubled, parked or refused for Slack's limits (docs/soak.md)."""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "plugins" / "theloop")]

from soak import ledger as books  # noqa: E402 - after the path set-up above
from soak.driver import Driver  # noqa: E402
from soak.faults import KINDS, schedule  # noqa: E402
from soak.rig import Rig  # noqa: E402

#: How often the driver looks at its work items and the fault schedule.
TICK = 0.05


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m soak", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to drive (10)")
    parser.add_argument("--seed", type=int, default=None, help="the faults' seed (the clock's)")
    parser.add_argument("--items", type=int, default=4, help="work items in flight at once (4)")
    parser.add_argument("--rooms", type=int, default=4, help="rooms, one repository each (4)")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per Slack call")
    parser.add_argument("--drain", type=float, default=300.0, help="most seconds to drain (300)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the bot's data dir here")
    return parser.parse_args()


def main() -> int:
    args = arguments()
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    rng = random.Random(seed)
    seconds = args.minutes * 60
    faults = schedule(seed, seconds)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"soak: {args.minutes:g} min, seed {seed}, {args.items} work items at once in "
        f"{args.rooms} rooms; load average {load}"
    )
    print(f"fault schedule ({len(faults)}; re-run with --seed {seed}):")
    for fault in faults:
        print(f"  {fault.describe()}")
    sys.stdout.flush()
    with tempfile.TemporaryDirectory(prefix="theloop-soak-") as scratch:
        data = args.keep or Path(scratch) / "bot"
        rig = Rig(data, args.rooms, args.latency)
        try:
            return run(rig, Driver(rig, rng, args.items), deque(faults), seconds, args.drain)
        finally:
            rig.close()


def run(rig: Rig, driver: Driver, faults: deque, seconds: float, drain: float) -> int:
    rig.start()
    started = time.monotonic()
    while (now := time.monotonic() - started) < seconds:
        while faults and faults[0].at <= now:
            rig.play(faults.popleft())
        rig.poll()
        driver.tick()
        time.sleep(TICK)
        if rig.broken:
            print(f"soak: FAILED: {rig.broken}")
            return 1
    rig.calm()
    drained = _drain(rig, driver, drain)
    return report(rig, driver, time.monotonic() - started, drained)


def _drain(rig: Rig, driver: Driver, most: float) -> float:
    """Wait (at most ``most`` s) until the bot is up, its queues hold nothing pending or in
    flight, and the ledger finds nothing missing; the seconds it took."""
    began = time.monotonic()
    while time.monotonic() - began < most:
        if rig.up and rig.open_items() == 0 and not _missing(rig, driver):
            break
        time.sleep(1.0)
    return time.monotonic() - began


def _missing(rig: Rig, driver: Driver) -> bool:
    found = books.Ledger()
    books.check_events(driver.items, rig.slack, found)
    books.check_decisions(driver.items, rig.github, rig.loop, found)
    return bool(found.lost)


def report(rig: Rig, driver: Driver, elapsed: float, drained: float) -> int:
    found = books.Ledger()
    books.check_events(driver.items, rig.slack, found)
    books.check_decisions(driver.items, rig.github, rig.loop, found)
    parked = rig.parked()
    refused = books.limit_refusals(rig.slack)
    struck = books.struck(rig.slack, rig.github, rig.loop)
    p50, p99 = (books.percentile(found.latencies, share) for share in (0.5, 0.99))
    print(f"\nsoak done in {elapsed:.0f} s (drained in {drained:.0f} s)")
    print(f"  work items        {len(driver.items)}")
    print(f"  events accepted   {found.events}: " + _counts(found.outcomes))
    print(f"  decisions         {sum(found.decisions.values())}: " + _counts(found.decisions))
    print(f"  kills             {rig.fired['kill']}")
    print("  faults            " + ", ".join(f"{k} {rig.fired[k]}" for k in KINDS[1:]))
    print("  calls struck      " + (_counts(struck) or "none"))
    print(f"  lost              {len(found.lost)}")
    print(f"  doubled           {len(found.doubled)}")
    print(f"  parked            {parked}")
    print(
        f"  limit refusals    {sum(refused.values())} "
        + (f"({_counts(refused)})" if refused else "")
    )
    print(f"  webhook→Slack     p50 {p50:.2f} s, p99 {p99:.2f} s ({len(found.latencies)} events)")
    for problem in found.lost:
        print(f"  LOST    {problem}")
    for problem in found.doubled:
        print(f"  DOUBLED {problem}")
    if parked:
        print(f"  PARKED  queues: {rig.queue_states()}")
    failed = not found.ok or parked or refused
    print("soak: FAILED" if failed else "soak: passed")
    return 1 if failed else 0


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items()))


if __name__ == "__main__":
    sys.exit(main())
