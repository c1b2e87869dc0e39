"""Stack traces, told apart from code and prose by their lines.

A phone reader wants to know that a trace is there, not to read it, so the
digest draws one as a pointer: a fence that holds a trace and nothing else, or
a run of two or more trace lines inside a paragraph (then between the
paragraph's prose). A trace opens with a line only a trace has — or with an
error message (``TypeError: …``) straight before a frame — and goes on while its
lines look like a trace's, for the runtimes agents meet:

* Python: ``Traceback (most recent call last):``, ``File "x.py", line 3, in f``;
* Node / JavaScript: ``at fn (/app/x.js:1:2)``, ``at /app/x.js:1:2``;
* Java / Kotlin: ``Exception in thread "main" …``, ``at com.x.Y.z(Y.java:12)``,
  ``Caused by: …``, ``... 5 more``;
* Go: ``panic: …``, ``goroutine 1 [running]:``, ``main.main()``, ``created by …``;
* Rust: ``thread 'main' panicked at src/main.rs:2:5:`` and the message after it,
  ``note: …``, ``stack backtrace:``;
* .NET: ``Unhandled exception. …``, ``at Ns.Type.Method() in C:\\x.cs:line 12``,
  ``--- End of stack trace …``.

Every pattern is anchored at a line's start and has no nested repetition, so
each line costs its length.
"""

from __future__ import annotations

import re

__all__ = ["is_trace", "trace_span"]

_HEAD = re.compile(
    r"""\s*(?:
        Traceback[ ]\(most[ ]recent[ ]call[ ]last\)
      | File[ ]"[^"]*",[ ]line[ ]\d+
      | at[ ]\S[^()]*\([^()]*\)(?:[ ]in[ ]\S.*:line[ ]\d+)?\s*$
      | at[ ]\S+:\d+:\d+\)?\s*$
      | Exception[ ]in[ ]thread[ ]"
      | Caused[ ]by:\s
      | goroutine[ ]\d+[ ]\[[^\]]*\]:
      | panic:\s
      | thread[ ]'[^']*'[ ]panicked[ ]at\s
      | Unhandled[ ]exception\.
    )""",
    re.VERBOSE,
)
#: An error message: a trace's first line when a frame follows it.
_MESSAGE = re.compile(r"\s*(?:Uncaught\s+)?[\w.$]*(?:Error|Exception)\b")
_FRAME = re.compile(r'\s*(?:at\s+\S|File ")')
_GOES_ON = re.compile(
    r"""(?:
        \s*at\s+\S
      | \s*[\w.$]*(?:Error|Exception)\b
      | \s*\^+\s*$
      | \s*\.\.\.[ ]\d+[ ](?:more|common[ ]frames[ ]omitted)
      | \s*---[ ]End[ ]of[ ]
      | \s*Suppressed:\s
      | \s*created[ ]by[ ]
      | \s*exit[ ]status[ ]\d+
      | \[signal[ ]
      | [\w./*()\[\]-]+\([^()]*\)\s*$
      | note:[ ]
      | stack[ ]backtrace:
      | \s*\d+:[ ]
      | [ ]{2} | \t
      | \s*$
    )""",
    re.VERBOSE,
)
_PANICKED = re.compile(r"\s*thread '[^']*' panicked at\s")


def trace_span(lines: list[str]) -> tuple[int, int] | None:
    """The first run of two or more trace lines that opens like a trace."""
    index = 0
    while index < len(lines):
        if not _opens(lines, index):
            index += 1
            continue
        end = index + 1
        while end < len(lines) and _goes_on(lines, end):
            end += 1
        while end - 1 > index and not lines[end - 1].strip():
            end -= 1  # blank lines after it are not the trace's
        if end - index >= 2:
            return index, end
        index = end
    return None


def is_trace(lines: list[str]) -> bool:
    """Whether ``lines`` are one stack trace and nothing else."""
    return bool(lines) and trace_span(lines) == (0, len(lines))


def _opens(lines: list[str], index: int) -> bool:
    line = lines[index]
    if _HEAD.match(line):
        return True
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return bool(_MESSAGE.match(line) and _FRAME.match(following))


def _goes_on(lines: list[str], index: int) -> bool:
    """Whether line ``index`` continues the trace the line before it is part of:
    a Rust panic's message, on the line after it, is any text."""
    return bool(_GOES_ON.match(lines[index]) or _HEAD.match(lines[index])) or bool(
        _PANICKED.match(lines[index - 1])
    )
