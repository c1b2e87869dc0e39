"""The ``text/event-stream`` format as the HTML standard defines it, read as browsers do.

``id:`` / ``event:`` / multi-line ``data:`` / ``retry:`` / comments; CR, LF or CRLF line
ends, a CRLF split across chunks read as one. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_MAX_LINE = 1024 * 1024  # the-loop's own bound on one record (stream.MAX_PARTIAL_BYTES)
_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched server-sent event."""

    type: str
    data: str
    id: str


class SSEParser:
    """An incremental ``text/event-stream`` parser, reading the format as browsers do.

    ``feed`` takes decoded text in chunks of any size and returns the events completed by
    it. ``last_event_id`` persists across events, as the standard's buffer does, and
    ``retry`` holds the last valid ``retry:`` in milliseconds (``None`` until one).
    """

    def __init__(self) -> None:
        self.last_event_id = ""
        self.retry: int | None = None
        self._data: list[str] = []
        self._type = ""
        self._line = ""
        self._after_cr = False
        self._started = False

    def feed(self, text: str) -> list[SSEEvent]:
        """Consume ``text``; return every event a blank line completed in it."""
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        events = []
        for line in self._lines(text):
            event = self._process(line)
            if event is not None:
                events.append(event)
        return events

    def _lines(self, text: str) -> Iterator[str]:
        """Whole lines: CRLF, LF and CR each end one; a CRLF split across chunks is one."""
        start = 0
        for end in _LINE_END.finditer(text):
            if end.start() == 0 and self._after_cr and end.group() == "\n":
                start = 1  # the LF of a CRLF whose CR ended the previous chunk
                continue
            yield self._line + text[start : end.start()]
            self._line, start = "", end.end()
        self._after_cr = text.endswith("\r") if text else self._after_cr
        self._line += text[start:]
        if len(self._line) > _MAX_LINE:
            raise ValueError(f"stream line over {_MAX_LINE} characters")

    def _process(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment: the-loop's keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._type = value
        elif name == "data":
            self._data.append(value)
        elif name == "id" and "\0" not in value:
            self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        data, kind = self._data, self._type or "message"
        self._data, self._type = [], ""
        if not data:
            return None
        return SSEEvent(type=kind, data="\n".join(data), id=self.last_event_id)
