"""Bounded records in the plugin's storage: the least recently touched key goes first.

The room's bindings, memory, delivery policy, thread cursors and the claims that make a
request run once each keep a mapping in Errbot's storage that must not grow without end.
Python's dicts keep insertion order, so setting a key anew makes it the newest, and the
oldest is the first key.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any


def touched(mapping: Mapping[str, Any], key: str, value: Any, cap: int) -> dict[str, Any]:
    """A copy of ``mapping`` with ``key`` set to ``value`` as its newest entry, cut to the
    ``cap`` most recently touched keys."""
    kept = dict(mapping)
    kept.pop(key, None)
    kept[key] = value
    while len(kept) > cap:
        del kept[next(iter(kept))]
    return kept


def claimed_once(
    store: MutableMapping[str, Any], name: str, key: str, value: Any, cap: int
) -> bool:
    """Record ``key`` under ``store[name]`` (bounded by ``cap``); False when it was already
    there, so a redelivered request is done once. The caller holds the store's lock."""
    claims = store.get(name) or {}
    if key in claims:
        return False
    store[name] = touched(claims, key, value, cap)
    return True
