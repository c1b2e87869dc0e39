"""Which instance owns a work item: the file's claims first, then the ones learned.

An instance owns the work items its ``workItems.repos`` or ``workItems.prefix`` match (the
first instance in the file that matches, when two do) — whatever a learned claim says. A
work item no instance matches becomes the instance's whose event first names it, when that
instance learns (``learn: true``, the default) — or, if asked first, the instance that
registered the person who caused it (:mod:`looproom.instances.actors`); the claim is kept
in the plugin's state — the SQLite file's storage, or the shared database where replicas
must agree — and written under the store's lock, so two instances racing for one work
item cannot both win.

A work item is looked up by its canonical spelling (:func:`looproom.workitem.canonical`):
another case or its page's address is the same work item, never a second claim. A claim is
refreshed when it is used (its owner's events, the relay's calls), and one used within
:data:`IN_USE_SECONDS` is never given up: when :data:`MOST_CLAIMS` are kept and none is
idle, a new claim is refused (:class:`ClaimsFull`, counted) rather than taking a live one
from its instance.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from looproom import workitem
from looproom.durable.state import lock_for, stored_mapping
from looproom.settings.instances import Instance

log = logging.getLogger(__name__)

#: The state key: learned claims, canonical work item → ``"<instance name> <last used>"``
#: (a text, not a pair: the book is read whole for each look-up, and 50 000 short texts
#: load several times faster than 50 000 lists).
KEY = "instances.learned"
#: Where claims were kept before they were canonical and timed: work item as written →
#: instance name. Whatever is found there is moved into :data:`KEY` when next read.
LEGACY_KEY = "instances.claims"
#: Learned claims kept at most; past it only an idle claim may make room for a new one.
MOST_CLAIMS = 50_000
#: A claim used within this long is in use: never evicted (ninety days).
IN_USE_SECONDS = 90 * 86_400.0
#: A claim's last use is written again at most this often (one write per event would
#: rewrite the whole book under a burst of one work item's events).
REFRESH_SECONDS = 3_600.0


class ClaimsFull(RuntimeError):
    """No room for a new learned claim: every kept one is in use."""

    def __init__(self, sender: str, work_item: str, kept: int) -> None:
        super().__init__(
            f"work item {work_item} cannot be instance {sender}'s: the bot keeps "
            f"{kept} learned claims (its cap) and every one was used within "
            f"{IN_USE_SECONDS / 86_400:.0f} days; name its repository or prefix under "
            f"instances.{sender}.workItems, or wait for an idle claim to lapse"
        )
        self.sender, self.work_item, self.kept = sender, work_item, kept


class Owners:
    """Who owns which work item, for the webhook, the stream and the relay."""

    def __init__(
        self,
        instances: Sequence[Instance],
        store: MutableMapping[str, Any],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._instances = {instance.name: instance for instance in instances}
        self._store, self._clock = store, clock
        self._lock = lock_for(store)
        #: New claims refused at the cap since the start, by the instance that asked.
        self.refused: Counter[str] = Counter()
        self._refused_lock = threading.Lock()

    def owner(self, work_item: str, *, used: bool = False) -> Instance | None:
        """The instance that owns ``work_item``; None while none does. ``used``: the
        work item is being acted on (a relay's call), so its learned claim is refreshed."""
        configured = self._configured(work_item)
        if configured is not None:
            return configured
        key = workitem.canonical(work_item)
        name, at = _entry(self._learned(), key)
        found = self._instances.get(name)
        if found is not None and used:
            self._refresh(key, name, at)
        return found

    def resolver(self) -> Callable[[str], Instance | None]:
        """:meth:`owner` for many work items at once, the learned claims read once."""
        learned = self._learned()

        def owner(work_item: str) -> Instance | None:
            configured = self._configured(work_item)
            if configured is not None:
                return configured
            return self._instances.get(_entry(learned, workitem.canonical(work_item))[0])

        return owner

    def claim(self, sender: Instance, work_item: str) -> Instance | None:
        """The owner of ``work_item`` once ``sender`` has sent an event about it: the one
        already known (its claim refreshed), else ``sender`` when it learns; None when
        nobody may own it. :class:`ClaimsFull` when it would be a new claim past the cap."""
        return self._take(sender, work_item, sender.claims.learn)

    def route(self, registrar: Instance, work_item: str) -> Instance:
        """The owner of ``work_item``, whose causer ``registrar`` registered (its
        ``actors``): the one already known, else ``registrar`` — kept like a learned claim,
        whether or not it learns. :class:`ClaimsFull` when that is past the cap."""
        owner = self._take(registrar, work_item, True)
        assert owner is not None  # taking is allowed: there is always an owner
        return owner

    def _take(self, sender: Instance, work_item: str, may_take: bool) -> Instance | None:
        configured = self._configured(work_item)
        if configured is not None:
            return configured
        key, now = workitem.canonical(work_item), self._clock()
        with self._lock:
            learned = dict(self._learned())
            name, at = _entry(learned, key)
            known = self._instances.get(name)
            if known is not None and now - at < REFRESH_SECONDS:
                return known  # known and fresh: nothing to write
            if known is None and not may_take:
                return None
            if known is None and not self._room_for(learned, now):
                self._count_refusal(sender.name, work_item)
                raise ClaimsFull(sender.name, work_item, len(learned))
            owner = known or sender
            learned[key] = _value(owner.name, now)
            self._store[KEY] = learned
            return owner

    def learned_count(self, name: str) -> int:
        """How many work items ``name`` owns by a learned claim."""
        return sum(1 for value in self._learned().values() if _name(value) == name)

    def learned_total(self) -> int:
        """How many learned claims are kept, every instance's."""
        return len(self._learned())

    def _configured(self, work_item: str) -> Instance | None:
        return next((i for i in self._instances.values() if i.claims.matches(work_item)), None)

    def _learned(self) -> Mapping[str, Any]:
        """The learned claims, those kept the old way moved in first."""
        if stored_mapping(self._store, LEGACY_KEY):
            self._migrate()
        return stored_mapping(self._store, KEY)

    def _migrate(self) -> None:
        """Move claims kept by the spelling they came in (a bot before canonical claims,
        or a replica not yet upgraded) under their canonical spelling, each as just used.
        Two spellings of one work item kept for two instances: the first kept wins."""
        with self._lock:
            legacy = stored_mapping(self._store, LEGACY_KEY)
            if not legacy:
                return
            learned, now = dict(stored_mapping(self._store, KEY)), self._clock()
            for spelled, value in legacy.items():
                learned.setdefault(workitem.canonical(spelled), _value(_name(value), now))
            self._store[KEY] = learned
            del self._store[LEGACY_KEY]
            log.info("instances: %d learned claims moved to their canonical spelling", len(legacy))

    def _room_for(self, learned: dict[str, Any], now: float) -> bool:
        """Whether a new claim fits: under the cap, or by dropping from ``learned`` the
        idlest claims that are not in use (idle past :data:`IN_USE_SECONDS`, or of an
        instance no longer configured)."""
        if len(learned) < MOST_CLAIMS:
            return True
        free = sorted(
            (_at(value, now), key)
            for key, value in learned.items()
            if now - _at(value, now) >= IN_USE_SECONDS or _name(value) not in self._instances
        )
        over = len(learned) - MOST_CLAIMS + 1
        if len(free) < over:
            return False
        for _, key in free[:over]:
            del learned[key]
        return True

    def _refresh(self, key: str, name: str, at: float) -> None:
        now = self._clock()
        if now - at < REFRESH_SECONDS:
            return
        with self._lock:
            learned = dict(self._learned())
            if _entry(learned, key)[0] != name:
                return  # given up or taken meanwhile: nothing of ours to refresh
            learned[key] = _value(name, now)
            self._store[KEY] = learned

    def _count_refusal(self, sender: str, work_item: str) -> None:
        with self._refused_lock:
            self.refused[sender] += 1
        log.error(
            "instances: a new claim of %s for %s refused: the %d learned claims kept are "
            "all in use",
            sender,
            work_item,
            MOST_CLAIMS,
        )


def _entry(learned: Mapping[str, Any], key: str) -> tuple[str, float]:
    """``(instance name, last used)`` of the claim on the canonical ``key``; ``("", 0)``."""
    value = learned.get(key)
    return ("", 0.0) if value is None else (_name(value), _at(value, 0.0))


def _value(name: str, at: float) -> str:
    return f"{name} {at:.0f}"


def _name(value: Any) -> str:
    """The instance of a kept claim (before claims were timed, the value was the name)."""
    return str(value or "").split(" ", 1)[0]


def _at(value: Any, default: float) -> float:
    """When a claim was last used; ``default`` when the value does not say."""
    _, _, at = str(value or "").partition(" ")
    try:
        return float(at)
    except ValueError:
        return default
