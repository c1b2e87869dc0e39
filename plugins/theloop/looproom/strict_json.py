"""JSON as both signed endpoints accept it: UTF-8 text (RFC 8259), nothing Python alone allows.

Python's ``json`` reads more than JSON: ``NaN`` and ``Infinity``, lone surrogates
(``"\\ud800"``, or raw bytes decoded with ``surrogatepass``), integers it then cannot
hold (past its digit limit it raises a ``ValueError`` of its own) and nesting as deep as its
recursion allows. Each would fail later — when the event is stored or posted — and a sender
would retry the failure for ever. :func:`loads` refuses each here, naming where it is
(``actor.name``, ``detail["x"]``), so the answer is a final 4xx and nothing is stored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

#: Objects and arrays inside one another at most: the-loop's events nest two deep and
#: Slack's payloads about ten.
MAX_DEPTH = 32
#: Values (strings, numbers, objects, …) in one document at most.
MAX_VALUES = 20_000
#: Digits of one integer at most (Python's own limit is 4 300): no field needs more.
MAX_DIGITS = 100

_SURROGATE = re.compile("[\ud800-\udfff]")


class StrictJSONError(ValueError):
    """The body is not JSON we accept; ``errors`` says where and why."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class _Refused:
    """A number :func:`loads` will not keep, held until its place is known."""

    def __init__(self, why: str) -> None:
        self.why = why


def _int(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        return _Refused(f"an integer of {digits} digits (at most {MAX_DIGITS})")
    return int(text)


def _float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{text[:20]} is out of range")


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not JSON")


def loads(body: bytes | str, *, what: str = "body") -> Any:
    """Decode ``body`` strictly; raise :class:`StrictJSONError` naming what is wrong."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StrictJSONError([f"{what}: not UTF-8 (byte {exc.start})"]) from None
    try:
        value = json.loads(body, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except RecursionError:
        raise StrictJSONError([f"{what}: nested deeper than {MAX_DEPTH} levels"]) from None
    except ValueError as exc:
        at = f" at line {exc.lineno} column {exc.colno}" if hasattr(exc, "lineno") else ""
        raise StrictJSONError([f"{what}: not JSON{at}"]) from None
    errors: list[str] = []
    _check(value, what, 0, errors, [0])
    if errors:
        raise StrictJSONError(errors[:10])
    return value


def _check(value: Any, path: str, depth: int, errors: list[str], count: list[int]) -> None:
    """Every refused value under ``value``, by path; stops early past the limits."""
    count[0] += 1
    if count[0] > MAX_VALUES:
        if count[0] == MAX_VALUES + 1:
            errors.append(f"{path}: more than {MAX_VALUES} values in the document")
        return
    if isinstance(value, _Refused):
        errors.append(f"{path}: {value.why}")
    elif isinstance(value, str):
        _text(value, path, errors)
    elif isinstance(value, dict | list):
        if depth >= MAX_DEPTH:
            errors.append(f"{path}: nested deeper than {MAX_DEPTH} levels")
            return
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str):
                _text(key, f"{path} (a key)", errors)
            _check(item, _child(path, key), depth + 1, errors, count)


def _text(value: str, path: str, errors: list[str]) -> None:
    found = _SURROGATE.search(value)
    if found:
        errors.append(f"{path}: a lone surrogate \\u{ord(found.group()):04x} is not Unicode text")


def _child(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", key):
        return key if path == "body" else f"{path}.{key}"
    return f"{path}[{json.dumps(key[:40])}]"


def obj(value: Any) -> Mapping[str, Any]:
    """``value`` when it is an object, else empty: a payload's field that is the wrong
    type reads as missing, never as an exception deep in a handler."""
    return value if isinstance(value, Mapping) else {}
