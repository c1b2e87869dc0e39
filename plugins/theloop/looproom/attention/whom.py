"""Who an ask asks: the work item's owner where the room knows one and they may answer it,
else everyone who may (the room's deciders; for a question, its collaborators too).

The same authorization answers both: nobody is asked who could not answer, so a direct
message never offers a button its reader would be refused for.
"""

from __future__ import annotations

from collections.abc import Callable

from looproom.attention.owners import Owners
from looproom.control.item_status import members_asked
from looproom.decide.authorization import AccessPolicy
from looproom.settings.attention import DECIDERS, OWNER, AttentionSettings, RoomAttention


class Whom:
    """``(work item, room, act) → (members asked, on what basis)``."""

    def __init__(
        self,
        settings: AttentionSettings,
        policy: Callable[[], AccessPolicy],
        owners: Owners,
        id_of: Callable[[str], str] = str,
    ) -> None:
        """``id_of``: a room's id from its name as the settings write it (``#payments``)."""
        self._settings, self._policy, self.owners = settings, policy, owners
        self._id_of = id_of

    def room(self, channel: str) -> RoomAttention:
        return self._settings.of(channel, self._id_of)

    def __call__(self, work_item: str, channel: str, act: str) -> tuple[tuple[str, ...], str]:
        may = members_asked(act, self._policy().on(work_item))
        if self.room(channel).ask == OWNER:
            owner = self.owners.of(work_item)
            if owner and owner in may:
                return (owner,), OWNER
        return may, DECIDERS
