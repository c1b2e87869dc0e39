"""Absolute paths lose their head in the digest: a phone shows the part that
names the file.

``/home/user/the-loop/cli/the_loop/channels/slack.py`` → ``…/channels/slack.py``:
three or more segments, starting at a ``/`` that follows no word character,
``/``, ``:``, ``.``, ``~`` or ``-`` — so a URL's path, a relative path (``./a/b/c``,
``~/a/b/c``, ``a/b/c``) and a path inside a code span or a link (never given to
this function) are left as written.
"""

from __future__ import annotations

import re

__all__ = ["shorten_paths"]

_PATH = re.compile(r"(?<![\w/:.~\\-])/(?:[\w.@+~-]+/){2,}[\w.@+~-]+")


def shorten_paths(text: str) -> str:
    """Each absolute path of three or more segments as ``…/`` + its last two."""
    return _PATH.sub(_tail, text)


def _tail(match: re.Match[str]) -> str:
    return "…/" + "/".join(match.group(0).rsplit("/", 2)[-2:])
