"""The settings file nests at most 10 levels (docs/configuration.md): a file of exactly 10 is
read, one of 11 is refused naming the file — a mapping or a list each a level."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from looproom.settings import ConfigError, yaml_file


def _nested(levels: int, *, lists: bool) -> dict[str, Any]:
    """``levels`` collections, one inside the next, the innermost holding one scalar; with
    ``lists`` every second one a list."""
    value: Any = "leaf"
    for level in reversed(range(levels)):
        value = [value] if lists and level % 2 else {f"k{level}": value}
    return value


@pytest.mark.parametrize("lists", [False, True], ids=["mappings", "lists-between"])
def test_ten_levels_are_read_and_eleven_refused(tmp_path: Path, lists: bool) -> None:
    file = tmp_path / "theloop.yaml"
    file.write_text(yaml.safe_dump(_nested(10, lists=lists)), encoding="utf-8")
    assert yaml_file.read(file) == _nested(10, lists=lists)
    file.write_text(yaml.safe_dump(_nested(11, lists=lists)), encoding="utf-8")
    with pytest.raises(ConfigError, match="nested deeper than 10 levels") as caught:
        yaml_file.read(file)
    assert "theloop.yaml" in str(caught.value)
