"""Line patterns find exactly the lines a ``^``-anchored multiline pattern finds.

The digest looks for table delimiter rows and for the marks that let a block
rule match with patterns that open with a line end, because ``re`` finds those by
a fast scan; these pin that nothing is lost by it, the first line of the stretch
searched included.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from looproom.digest._lines import LinePattern

_BODIES = [
    r" {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$",
    r"[ \t>*+\-0-9.)]*>",
    r"(?=[ \t>*+\-0-9.)_]*$)[^-*_\n]*[-*_]",
]


def _line_starts(src: str, start: int, end: int, body: str) -> list[int]:
    anchored = re.compile(f"^(?:{body})", re.MULTILINE)
    return [m.start() for m in anchored.finditer(src, start, end)]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(alphabet=" \t|-:>*_1.)a", max_size=12), min_size=1, max_size=8),
    body=st.sampled_from(_BODIES),
    data=st.data(),
)
def test_a_line_pattern_finds_the_lines_an_anchored_pattern_finds(
    lines: list[str], body: str, data: st.DataObject
) -> None:
    src = "\n".join(lines)
    starts = [0, *(i + 1 for i, ch in enumerate(src) if ch == "\n")]
    start = data.draw(st.sampled_from(starts))  # a stretch starts at a line's start
    end = data.draw(st.integers(min_value=start, max_value=len(src)))
    pattern = LinePattern(body)
    found = [m.start() + (m.group().startswith("\n")) for m in pattern.finditer(src, start, end)]
    assert found == _line_starts(src, start, end, body)
    assert pattern.search(src) == bool(_line_starts(src, 0, len(src), body))
