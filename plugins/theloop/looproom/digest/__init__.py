"""Long agent markdown for a small screen — the digest (docs/digest.md).

The-loop's own API, so the two can be measured side by side:

* :func:`fit` — the one entry point: a text section ready for Slack.
* :func:`to_mrkdwn` — markdown drawn as Slack mrkdwn, every word kept.
* :func:`condense` — the digest: the ask first, lists numbered, code and tables
  as pointers, cut at a sentence, a footer linking the full text.
* :func:`truncate` — the-loop 13.10.0's cut, never over the limit.

And :func:`strip_comments`, the linear scan that takes hidden ``<!-- … -->`` out of
markdown, and :func:`escape`, ``&``, ``<`` and ``>`` as Slack requires them, for whoever
else quotes or draws text.

Built on markdown-it-py's public API (``_markdown``), a document parsed a window
at a time (``_document``), drawn by small single-job modules. Preview from a
shell::

    PYTHONPATH=plugins/theloop python -m looproom.digest --limit 900 FILE
"""

from __future__ import annotations

from ._condense import condense
from ._mrkdwn import to_mrkdwn
from ._slack import escape, strip_comments
from ._truncate import truncate

__all__ = [
    "DEFAULT_DIGEST_MODE",
    "DIGEST_MODES",
    "condense",
    "escape",
    "fit",
    "strip_comments",
    "to_mrkdwn",
    "truncate",
]

#: What happens to a text section longer than the limit.
DIGEST_MODES: tuple[str, ...] = ("digest", "truncate")
DEFAULT_DIGEST_MODE = "digest"


def fit(text: str, limit: int, mode: str = DEFAULT_DIGEST_MODE, url: str = "") -> str:
    """One text section for Slack, never longer than ``limit``.

    A text of at most ``limit`` characters is drawn whole — unless the
    drawing grows past the limit (``&`` → ``&amp;``), when it is treated as a
    long text. A long text is the-loop 13.10.0's cut under ``truncate`` and the digest
    otherwise (any other mode is the default, as the-loop does). A limit below
    Slack's 200 is honoured, not clamped: the result still never exceeds it.
    """
    text = text.strip()
    if not text or limit <= 0:
        return ""
    if len(text) <= limit:
        drawn = to_mrkdwn(text)
        if len(drawn) <= limit:
            return drawn
        if mode == "truncate":
            return truncate(drawn, limit)
    elif mode == "truncate":
        return truncate(to_mrkdwn(text), limit)
    return condense(text, limit, url)
