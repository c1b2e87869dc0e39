"""Where the tests find real the-loop material.

The twenty real messages are kept in the repository (``tests/data/messages``) so a fresh
clone tests everything; the 545 agent-written documents stay in the shared corpus beside the
checkout (``../shared/corpus/the-loop-docs``), and tests that read them skip without it.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = ROOT / "tests" / "data" / "messages"
SHARED_CORPUS = ROOT / ".." / "shared" / "corpus"
