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
from soak.faults import KINDS, SHARED_KINDS, Fault, schedule  # noqa: E402
from soak.rig import LEASE, Rig  # noqa: E402

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
    parser.add_argument(
        "--replicas",
        type=int,
        default=1,
        choices=(1, 2),
        help="1: one bot on SQLite; 2: two bots on a PostgreSQL of the soak's own (1)",
    )
    parser.add_argument(
        "--faults",
        default="all",
        help="the kinds of fault played, comma-separated, or none (all): the seed's schedule "
        "with the others left out",
    )
    return parser.parse_args()


def chosen(faults: list[Fault], kinds: str) -> list[Fault]:
    """The schedule's faults of the ``kinds`` named (``all``, ``none`` or a comma list)."""
    if kinds == "all":
        return faults
    wanted = set() if kinds == "none" else {kind.strip() for kind in kinds.split(",")}
    unknown = wanted - set(KINDS + SHARED_KINDS)
    if unknown:
        raise SystemExit(f"--faults: no such kind {', '.join(sorted(unknown))}")
    return [fault for fault in faults if fault.kind in wanted]


def main() -> int:
    args = arguments()
    seed = args.seed if args.seed is not None else int(time.time()) % 100_000
    rng = random.Random(seed)
    seconds = args.minutes * 60
    faults = chosen(schedule(seed, seconds, args.replicas, LEASE), args.faults)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    mode = "one bot on SQLite" if args.replicas == 1 else f"{args.replicas} replicas on PostgreSQL"
    print(
        f"soak: {args.minutes:g} min, seed {seed}, {mode}, {args.items} work items at once in "
        f"{args.rooms} rooms; load average {load}"
    )
    print(f"fault schedule ({len(faults)}; re-run with --seed {seed}):")
    for fault in faults:
        print(f"  {fault.describe()}")
    sys.stdout.flush()
    with tempfile.TemporaryDirectory(prefix="theloop-soak-") as scratch:
        data = args.keep or Path(scratch) / "bot"
        rig = Rig(data, args.rooms, args.latency, args.replicas)
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
    books.check_attention(rig.slack, *rig.asks(), found)
    parked = rig.parked()
    refused = books.limit_refusals(rig.slack)
    struck = books.struck(rig.slack, rig.github, rig.loop)
    p50, p99 = (books.percentile(found.latencies, share) for share in (0.5, 0.99))
    print(f"\nsoak done in {elapsed:.0f} s (drained in {drained:.0f} s)")
    print(f"  work items        {len(driver.items)}")
    print(f"  events accepted   {found.events}: " + _counts(found.outcomes))
    if len(rig.bots) > 1:
        spread = ", ".join(f"replica-{n} {driver.accepted_by[n]}" for n in range(len(rig.bots)))
        print(f"  accepted by       {spread}")
    print(f"  decisions         {sum(found.decisions.values())}: " + _counts(found.decisions))
    print(f"  kills             {rig.fired['kill']}" + _by_replica(rig))
    kinds = KINDS[1:] + (SHARED_KINDS if rig.db is not None else ())
    print("  faults            " + ", ".join(f"{k} {rig.fired[k]}" for k in kinds))
    print("  calls struck      " + (_counts(struck) or "none"))
    print(f"  lost              {len(found.lost)}")
    print(f"  doubled           {len(found.doubled)}")
    print(f"  parked            {parked}")
    print(
        f"  limit refusals    {sum(refused.values())} "
        + (f"({_counts(refused)})" if refused else "")
    )
    told = found.attention
    print(
        f"  asks told         direct {told['dm']}, reminded {told['remind']}, escalated "
        f"{told['escalate']}, named {told['mention']}; after the answer {len(found.late)}"
    )
    print(f"  webhook→Slack     p50 {p50:.2f} s, p99 {p99:.2f} s ({len(found.latencies)} events)")
    if rig.db is not None:
        _outages(rig, driver)
    for problem in found.lost:
        print(f"  LOST    {problem}")
    for problem in found.doubled:
        print(f"  DOUBLED {problem}")
    for problem in found.late:
        print(f"  LATE    {problem}")
    if parked:
        print(f"  PARKED  queues: {rig.queue_states()}")
    failed = not found.ok or parked or refused
    print("soak: FAILED" if failed else "soak: passed")
    return 1 if failed else 0


def _by_replica(rig: Rig) -> str:
    if len(rig.bots) == 1:
        return ""
    return " (" + ", ".join(f"replica-{n} {rig.kills[n]}" for n in range(len(rig.bots))) + ")"


def _outages(rig: Rig, driver: Driver) -> None:
    """What the database's outages cost: the longest, and the longest an event was held
    by one — refused (503) at the sender, then on its way to Slack — first send to landed."""
    assert rig.db is not None
    held = books.held_by_outages(driver.items, rig.slack, rig.db.during_outage)
    print(
        f"  database outages  {len(rig.db.outages)}, the longest {rig.db.longest_outage():.1f} s; "
        f"an event held by one at most {held:.1f} s (first send → in Slack)"
    )


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in sorted(counter.items()))


if __name__ == "__main__":
    sys.exit(main())
