"""the-loop 13.10.0's cut, kept for ``longMessages: truncate`` — never over the limit.

The first characters and ``… (N more characters — see the link)``, the note
counted in the limit (the-loop's own cut ran 40 characters over: 3040 > 3000),
and the cut moved back rather than split a link token ``<…>`` or an escape
``&…;`` of the drawn text.
"""

from __future__ import annotations

__all__ = ["truncate"]


def truncate(text: str, limit: int) -> str:
    """``text`` within ``limit``: whole when it fits, else its head and a note."""
    text = text.strip()
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    keep = limit
    for _ in range(4):  # the note's length depends on the count it names
        note = _note(len(text) - keep)
        if keep + len(note) <= limit:
            break
        keep = limit - len(note)
    if keep <= 0:
        return text[: limit - 1].rstrip() + "…" if limit > 1 else "…"
    cut = _safe_cut(text, keep)
    return text[:cut].rstrip() + _note(len(text) - cut)


def _note(rest: int) -> str:
    return f"\n… ({rest} more characters — see the link)"


def _safe_cut(text: str, pos: int) -> int:
    """``pos``, or the start of the ``<…>`` or ``&…;`` it would split."""
    opening = text.rfind("<", 0, pos)
    if opening >= 0 and text.rfind(">", opening, pos) < 0 and text.find(">", pos) >= 0:
        pos = opening
    amp = text.rfind("&", max(0, pos - 5), pos)
    if amp >= 0 and ";" not in text[amp:pos]:
        pos = amp
    return pos
