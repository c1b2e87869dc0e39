"""Which the-loop control plane an instance or standing command from Slack is for.

With the one ``THELOOP_LOOP_API`` there is one plane and nothing to choose. With
``instances:`` there is one per instance, and a command names the instance as its last
word (``/the-loop restart team-b``); without one it goes to the only instance, or to the
instance that owns the work item (or the repository) the room is bound to; else the
member is asked to name one — a restart is never guessed onto the wrong instance.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Plane:
    """One control plane: its instance's name (``""`` for ``THELOOP_LOOP_API``'s),
    its address, and the bearer token a proxy in front of it may ask."""

    name: str
    api: str
    token: str = field(default="", repr=False)


#: ``owner_of(ref)`` → the name of the instance that owns a work item (or, for a bare
#: ``github:owner/repo``, the repository), ``""`` when none does.
OwnerOf = Callable[[str], str]


class Planes:
    """The control planes of one activation, and how a command picks one."""

    def __init__(self, planes: Sequence[Plane], owner_of: OwnerOf = lambda _ref: "") -> None:
        self.all = tuple(plane for plane in planes if plane.api)
        self._owner_of = owner_of

    @classmethod
    def single(cls, api: str) -> Planes:
        """``THELOOP_LOOP_API``'s one plane (none when it is unset)."""
        return cls([Plane("", api.rstrip("/"))] if api else [])

    @property
    def named(self) -> bool:
        """Whether the planes are ``instances:``, each with a name to say."""
        return any(plane.name for plane in self.all)

    def names(self) -> list[str]:
        return [plane.name for plane in self.all if plane.name]

    def split(self, words: Sequence[str]) -> tuple[list[str], str]:
        """``words`` without a last word that names an instance, and that name."""
        if words and words[-1] in self.names():
            return list(words[:-1]), words[-1]
        return list(words), ""

    def pick(self, name: str, context: Sequence[str] = ()) -> Plane | str:
        """The plane ``name`` names, else the only one, else the owner of the first of
        ``context`` (the room's work item, its repository) that has one; a sentence
        saying what to name when there is no telling."""
        if not self.all:
            return ""
        if name:
            found = next((plane for plane in self.all if plane.name == name), None)
            return found if found is not None else self._choose(f"`{name}` is not an instance")
        if len(self.all) == 1:
            return self.all[0]
        for ref in context:
            owner = self._owner_of(ref) if ref else ""
            found = next((plane for plane in self.all if owner and plane.name == owner), None)
            if found is not None:
                return found
        return self._choose("this room belongs to no one instance")

    def _choose(self, why: str) -> str:
        names = ", ".join(f"`{name}`" for name in self.names())
        return f"{why}: name the-loop instance as the last word — one of {names}."
