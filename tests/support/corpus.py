"""Where the tests find real the-loop material.

The twenty real messages are kept in the repository (``tests/data/messages``), and so is a
slice of the-loop's own documents (``tests/data/the-loop-docs``: 36 of the 545 agent-written
requirements, designs, decisions, guides and evidence files of the-loop's public repository,
MIT — its licence beside them — commit a5f432b, one file per source file with ``/`` written
``__``), so a fresh clone tests everything. When the shared corpus sits beside the checkout
(``../shared/corpus/the-loop-docs``), the digest's corpus tests and bench read all of it.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = ROOT / "tests" / "data" / "messages"
DOCS_SLICE = ROOT / "tests" / "data" / "the-loop-docs"
SHARED_CORPUS = ROOT / ".." / "shared" / "corpus"
SHARED_DOCS = SHARED_CORPUS / "the-loop-docs"


def documents() -> list[Path]:
    """The-loop's documents: all of the shared corpus when it is beside the checkout,
    else the slice kept here."""
    folder = SHARED_DOCS if SHARED_DOCS.is_dir() else DOCS_SLICE
    return sorted(folder.glob("*.md"))


def texts() -> list[tuple[str, str]]:
    """``(name, text)`` of every document, and of every message's text and excerpt."""
    found = [(path.name, path.read_text(encoding="utf-8")) for path in documents()]
    for path in sorted(MESSAGES.glob("*.json")):
        event = json.loads(path.read_text(encoding="utf-8"))
        found.append((path.name, event.get("text", "")))
        found.append((path.name + "#excerpt", event.get("detail", {}).get("excerpt", "")))
    return [(name, text) for name, text in found if text.strip()]
