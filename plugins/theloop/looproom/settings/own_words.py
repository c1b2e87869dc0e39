"""The operator's own command words (the-loop's ``routing.control.commands``), read strictly.

the-loop lets a deployment declare new command words that arm a work item onto a loop of
its choosing: ``routing.control.commands: {ship: {graph: …, keyword: "loop ship"}}``.
A comment opening with that keyword is read by the-loop as ``start`` onto the bound loop
(its ``ControlConfig.custom_commands``). The room relays each such word in the keyword
the-loop will read — ``keyword`` when given, else ``the-loop <word>`` — and refuses, as
the-loop does, a word that is not a command name, that shadows one of the room's own verbs,
or whose keyword another command already uses: two commands on one keyword would make
every comment carrying it ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: the-loop's grammar for a command word: lowercase letters, digits, hyphens; a letter first.
_WORD = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


def parse(
    raw: Any, where: str, taken: Mapping[str, str], reserved: Iterable[str]
) -> tuple[dict[str, str], list[str]]:
    """``(word → keyword, errors)`` for a ``commands`` mapping.

    ``taken`` is every built-in command's keyword (a clash is refused); ``reserved`` the
    words that already mean something here (a built-in command or one of the room's verbs),
    which a new word may not shadow. A re-pointed built-in command (``start: {graph: …}``)
    is the-loop's business alone: it keeps its keyword, so nothing changes here.
    """
    if raw is None:
        return {}, []
    if not isinstance(raw, Mapping):
        return {}, [f"{where}: expected a mapping of command word → {{graph, keyword}}"]
    words: dict[str, str] = {}
    errors: list[str] = []
    used = {keyword.lower(): command for command, keyword in taken.items() if keyword}
    shadowed = frozenset(reserved)
    for word, value in raw.items():
        key = f"{where}.{word}"
        if word in taken:
            continue  # a built-in command re-pointed onto another loop: same keyword
        if not isinstance(word, str) or not _WORD.match(word):
            errors.append(f"{key}: a command word is lowercase letters, digits and hyphens")
            continue
        if word in shadowed:
            errors.append(f"{key}: `{word}` is already a verb of this room; choose another word")
            continue
        keyword = value.get("keyword") if isinstance(value, Mapping) else value
        if keyword is None:
            keyword = f"the-loop {word}"
        if not isinstance(keyword, str) or not keyword.strip() or "\n" in keyword or "`" in keyword:
            errors.append(f"{key}.keyword: expected one line of words, got {keyword!r}")
            continue
        keyword = " ".join(keyword.split())
        clash = used.get(keyword.lower())
        if clash is not None:
            errors.append(f"{key}: its keyword `{keyword}` is already `{clash}`'s")
            continue
        used[keyword.lower()] = word
        words[word] = keyword
    return words, errors


def word_for(typed: str, custom: Mapping[str, str]) -> str:
    """The operator's word ``typed`` names — the word itself, or the last word of its
    keyword (``ship`` for ``loop ship``) — ``""`` for none or for two."""
    typed = typed.lower()
    found = [w for w, keyword in custom.items() if typed in (w, keyword.split()[-1].lower())]
    return found[0] if len(found) == 1 else ""
