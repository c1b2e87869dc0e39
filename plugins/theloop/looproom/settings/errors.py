"""What a wrong setting is: one error naming every bad key, and how a value is shown in it."""

from __future__ import annotations

from typing import Any


class ConfigError(ValueError):
    """The configuration is wrong; ``errors`` names each key and what is wrong with it."""

    def __init__(self, errors: list[str], source: str = "") -> None:
        where = f" (in {source})" if source else ""
        super().__init__("; ".join(errors) + where)
        self.errors = errors
        self.source = source


def kind(value: Any) -> str:
    """What a value is, in words: where a key wants another kind of value."""
    if value is None:
        return "nothing"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string"}.get(
        type(value), "a list" if isinstance(value, list) else "a mapping"
    )


def shown(value: Any) -> str:
    """A value for an error message: its repr, short (never given a secret)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"
