"""Loaded by the rooms bench's bot (its PYTHONPATH), which runs with PYTHONTRACEMALLOC=1:
on SIGUSR2 it writes the Python heap's current and peak size, in bytes, to the file
``THELOOP_BENCH_HEAP`` names — the bench's memory figure without the C libraries' caches.
"""

from __future__ import annotations

import os
import signal
import tracemalloc


def _write(_signum: int, _frame: object) -> None:
    current, peak = tracemalloc.get_traced_memory()
    path = os.environ["THELOOP_BENCH_HEAP"]
    with open(f"{path}.part", "w", encoding="ascii") as out:
        out.write(f"{current} {peak}\n")
    os.replace(f"{path}.part", path)


if os.environ.get("THELOOP_BENCH_HEAP"):
    signal.signal(signal.SIGUSR2, _write)
