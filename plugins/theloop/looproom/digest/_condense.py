"""The digest: the ask first, then the author's blocks until the budget is spent
(docs/digest.md, "The digest").

The ask leads, bold; its sentence leaves its paragraph. Then every unit in the
author's order while it fits; the first that does not fit is cut — line by line,
the last line at a sentence, a clause or a space — and nothing after it is
drawn. When anything was cut, left out or stood for by a pointer or a shortened
path, the footer closes the digest and is always kept within the limit.

What is drawn comes from a ``Reader`` (``_reader``), which reads the document
only as far as the budget and the search for the ask need.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ._markdown import normalise
from ._reader import SEP, Ask, Reader
from ._run import Run
from ._slack import footer as footer_line
from ._text import cut
from ._units import Line, Unit

__all__ = ["condense"]

#: A line cut shorter than this says too little to be worth its room.
MIN_CUT = 12
TICKET = "_… the full text is on the ticket_"


def condense(text: str, limit: int, url: str = "", *, eager: bool = False) -> str:
    """The digest of ``text`` within ``limit`` characters. ``eager`` parses the
    whole document first — the reference the lazy reading must equal."""
    src = normalise(text).strip()
    if not src or limit <= 0:
        return ""
    return _draw(Reader(src, limit, eager), _footer_within(url, limit))


def _footer_within(url: str, limit: int) -> str:
    """The footer that fits: with the link, else without, else a bare ``…`` (the
    limit is at least 1 here)."""
    return next((line for line in (footer_line(url), TICKET) if len(line) <= limit), "…")


def _draw(reader: Reader, footer: str) -> str:
    """The digest: whole when everything fits and nothing was stood for, else
    what fits beside the footer. Everything read fitted beside the footer but
    the text goes on (what was measured shrank as the ask left its paragraph,
    the spaces around it with it): read twice as far.

    What was measured fits the limit only when the reading stopped (the end,
    the work bound, a line cut short), so then there is nothing more to read."""
    threshold = reader.limit
    while True:
        reader.read(threshold)
        reader.find_ask()
        if not reader.surely_over():
            whole = _assemble(reader, reader.limit)
            if whole.complete and reader.exhausted() and not whole.replaced:
                return SEP.join(whole.pieces)
        drawn = _assemble(reader, reader.limit - len(footer) - len(SEP))
        if drawn.complete and reader.can_read_more():
            threshold *= 2
            continue
        return SEP.join([*drawn.pieces, footer])


@dataclass(slots=True)
class _Drawn:
    """A digest being laid out: its pieces (blocks' lines) and the room they use."""

    pieces: list[str] = field(default_factory=list)
    used: int = 0
    complete: bool = True  # every unit read so far was drawn whole
    replaced: bool = False


def _assemble(reader: Reader, budget: int) -> _Drawn:
    """The ask, then every unit in the author's order while it fits ``budget``."""
    drawn = _Drawn()
    ask = reader.ask
    if ask is not None and not _add_ask(reader, drawn, ask, budget):
        drawn.complete = False
        return drawn
    for index in range(reader.blocks):
        for number, unit in enumerate(reader.units(index)):
            if ask is not None and (ask.block, ask.unit) == (index, number):
                unit = _without_ask(unit, ask)
            if not _add(drawn, unit, budget):
                drawn.complete = False
                return drawn
    return drawn


def _add_ask(reader: Reader, drawn: _Drawn, ask: Ask, budget: int) -> bool:
    """The ask's sentence, first and bold as a whole: its own bold marks go,
    Slack cannot nest them; code spans keep every character."""
    line = reader.units(ask.block)[ask.unit].line(0)
    assert line is not None
    run = line.run.slice(*ask.span, drop_marks="*").strip()
    run.cut = False  # a sentence ends it, wherever its line was cut
    return _add(drawn, Unit([Line(run, wrap="*")]), budget)


def _without_ask(unit: Unit, ask: Ask) -> Unit:
    """The ask's unit without its sentence; the sentences around it meet
    with a space — or on a new line where the author broke the line there:
    before it (the sentence before ends at its mark or that line end, never in
    a space), at its end (a reply instruction may end at the line's end), or
    after it, spaces first. The unit is not searched for the ask again: it is
    no candidate."""
    line = unit.line(0)
    assert line is not None
    start, end = ask.span
    before, after = line.run.slice(0, start), line.run.slice(end, len(line.run))
    broken = (
        before.text.endswith("\n")
        or line.run.text[end - 1 : end] == "\n"
        or after.text.lstrip(" ").startswith("\n")
    )
    rest = Run.join([before.strip(), after.strip()], "\n" if broken else " ")
    return Unit([Line(rest, line.prefix, line.wrap)])


def _add(drawn: _Drawn, unit: Unit, budget: int) -> bool:
    """Append the lines of ``unit`` that fit, the first that does not cut at a
    boundary; ``False`` when not all of it fitted."""
    kept: list[str] = []
    used = drawn.used + (len(SEP) if drawn.pieces else 0)
    whole = True
    for line in unit:
        text = line.draw()
        if not text and not line.run.cut:
            continue
        gap = 1 if kept else 0
        if line.run.cut or used + gap + len(text) > budget:
            # A short fragment is worth its room only as the digest's first words;
            # a line cut short for the inline budget is never drawn whole (a line
            # that does not fit has less room than its length already).
            least = MIN_CUT if drawn.pieces or kept else 1
            room = budget - used - gap
            text = _cut_line(line, min(room, len(text) - 1), least)
            whole = False
        if text:
            kept.append(text)
            used += gap + len(text)
            drawn.replaced |= line.run.replaced
        if not whole:
            break
    if kept:
        drawn.pieces.append("\n".join(kept))
        drawn.used = used
    return whole


def _cut_line(line: Line, room: int, least: int) -> str:
    """What fits of ``line`` in ``room``, or nothing when fewer than ``least``
    characters of it would."""
    frame = len(line.prefix) + 2 * len(line.wrap)
    part = cut(line.run, room - frame)
    if part is None or len(part.text) < min(least, len(line.run.text)):
        return ""
    return Line(part, line.prefix, line.wrap).draw()
