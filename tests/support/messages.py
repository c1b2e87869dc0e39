"""the-loop's real messages (``tests/data/messages``), picked by their number.

Each file is named ``NN-what-it-is.json``; a test names it by ``NN``. :func:`message` is the
file as the-loop logged it; :func:`event` is what a sender posts to the webhook for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.corpus import MESSAGES


def path(stem: str) -> Path:
    """The one message file whose name starts with ``stem-``."""
    (found,) = MESSAGES.glob(f"{stem}-*.json")
    return found


def message(stem: str) -> dict[str, Any]:
    """The message as the-loop logged it, ``origin`` included."""
    return json.loads(path(stem).read_text(encoding="utf-8"))


def event(stem: str, **fields: Any) -> dict[str, Any]:
    """The message as an event for the webhook, with ``fields`` set: without ``origin``,
    which the-loop adds only to its own log and the webhook refuses as an unknown field."""
    wire = message(stem)
    wire.pop("origin", None)
    return {**wire, **fields}
