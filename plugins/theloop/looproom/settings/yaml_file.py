"""The settings file read as YAML: UTF-8, PyYAML's safe loader, no key given twice, no
nesting past :data:`MAX_FILE_DEPTH`. What it holds is the parser's to check."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from looproom.settings.errors import ConfigError

#: Mappings and lists inside one another at most: the documented file nests three deep.
MAX_FILE_DEPTH = 10


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key: object, first: int, second: int) -> None:
        super().__init__(f"{key}: defined twice, at line {first} and at line {second}")


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (it keeps the last,
    so a second ``authorizedUsers`` would silently replace the first)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        lines: dict[object, int] = {}
        for key_node, _value in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in lines:
                    raise _DuplicateKey(key, lines[key], line)
                lines[key] = line
            except TypeError:  # an unhashable key: PyYAML's own error follows
                continue
        return super().construct_mapping(node, deep=deep)


def read(path: str | os.PathLike[str]) -> Any:
    """The document at ``path``; :class:`FileNotFoundError` when there is none (whether
    that is an error is the caller's to say), else a :class:`ConfigError` for a file that
    cannot be read or is not YAML as the bot takes it."""
    file = Path(path)
    try:
        text = file.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise  # an OSError too, but not one to report here
    except UnicodeDecodeError as exc:
        raise ConfigError([f"not UTF-8 text (byte {exc.start})"], str(file)) from None
    except OSError as exc:
        raise ConfigError([f"cannot read the file: {exc.strerror}"], str(file)) from exc
    try:
        raw = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: safe
    except _DuplicateKey as exc:
        raise ConfigError([str(exc)], str(file)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError([f"not valid YAML{line}"], str(file)) from exc
    except RecursionError:
        raise ConfigError([f"nested deeper than {MAX_FILE_DEPTH} levels"], str(file)) from None
    if _depth(raw) > MAX_FILE_DEPTH:
        raise ConfigError([f"nested deeper than {MAX_FILE_DEPTH} levels"], str(file))
    return raw


def _depth(value: Any, level: int = 0) -> int:
    """How deep ``value`` nests, counted no further than one past the limit."""
    if level > MAX_FILE_DEPTH or not isinstance(value, dict | list):
        return level
    children = value.values() if isinstance(value, dict) else value
    return max((_depth(child, level + 1) for child in children), default=level + 1)
