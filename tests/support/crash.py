"""The crash tests' shared step: SIGKILL a writer process in the middle of its writes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys


def sigkill_writer(script: str, *args: str, after: int) -> tuple[list[int], int]:
    """Run ``script`` (``python -c``, with ``args``) — a loop that prints one number per
    write that returned — and SIGKILL it once it has printed ``after`` numbers.

    Returns the numbers it printed (what it acknowledged) and its return code
    (``-SIGKILL`` when the kill struck; the writer is killed and reaped either way).
    """
    writer = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    printed: list[int] = []
    try:
        for line in writer.stdout:
            printed.append(int(line))
            if len(printed) >= after:
                os.kill(writer.pid, signal.SIGKILL)
                break
    finally:
        writer.kill()
        writer.wait()
        writer.stdout.close()
    return printed, writer.returncode
