"""What the bot's server answers a link to an attached file (``GET /theloop/files``).

The link is checked first (:mod:`looproom.attach.links`): signed, not expired. The file is
then read from the folder the relay fetched it into; a replica that never fetched it (the
relay ran on another) asks Slack for the file again and fetches it the same way — the same
hosts allowed, the same cap — so any replica answers any link.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from looproom.attach import fetch as web
from looproom.attach.links import Refused
from looproom.attach.slack_files import FileStore, kept, safe_name


@dataclass(frozen=True)
class Served:
    """A file as the server answers a link to it."""

    name: str
    mimetype: str
    body: bytes


def served(store: FileStore, query: str) -> Served | Refused:
    """The file a link's ``query`` names, or why it is not served."""
    if store.links is None:
        return Refused(404, "this bot hands out no file links")
    linked = store.links.check(query)
    if isinstance(linked, Refused):
        return linked
    prefix = f"{safe_name(linked.file_id)}-"
    here = [path for path in _files(store.folder) if path.name.startswith(prefix)]
    if here:
        return _read(here[0], prefix)
    found = store.info(linked.file_id)
    if not isinstance(found, Mapping):
        return Refused(404, "Slack no longer has that file")
    (attached,) = kept([found])
    fetched = store.fetch_one(attached, 0, store.token())
    if not fetched.path:
        return Refused(502, f"the file could not be fetched: {web.REASONS[fetched.error]}")
    return _read(Path(fetched.path), prefix)


def _files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.is_file() and not p.name.endswith(".part")]


def _read(path: Path, prefix: str) -> Served | Refused:
    name = path.name.removeprefix(prefix)
    try:
        body = path.read_bytes()
    except OSError:
        return Refused(404, "the file is gone")
    return Served(name, mimetypes.guess_type(name)[0] or "application/octet-stream", body)
