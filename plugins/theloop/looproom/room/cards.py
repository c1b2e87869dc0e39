"""The parents' cards: each work item's card redrawn by a stage of its own, coalesced.

A work item's parent message (its card) shows the state after its latest event. Editing it
is ``chat.update``, which Slack budgets for the whole workspace (tier 3, about 50 a minute).
A delivery never waits for that budget: it posts its event, records the state the card is
to show in the binding book (durably, before the delivery is settled, so a crash loses no
card) and leaves, its slot free for the next room's post. :class:`Cards` then draws each
card owed, once, with the state it is to show *when it is drawn*, as soon as the edit
budget has a turn: a work item whose five events came while the budget was spent gets
one edit, showing the fifth. At start it draws the cards a crash or a stop left owed, and
every :data:`RESCAN_EVERY` those the book has owed, unchanged, since the last look: a
replica that died owing them (on a shared database), or cards left after their tries.

A card Slack says is gone is forgotten (the next event opens a new parent); a failed edit
is tried again a few times with backoff, then left to the work item's next event or the
next start. A 429, or the budget spent, only waits: it is the budget's turn, not a failure.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from looproom.durable.worker import backoff
from looproom.room.outlets import parent_key
from looproom.room.render import Rendering, render_parent
from looproom.room.routing import BindingBook, ThreadBinding
from looproom.slack.marks import metadata
from looproom.slack.responses import GONE, RATE_LIMITED
from looproom.slack.transport import SlackTransport

log = logging.getLogger(__name__)

EDIT = "chat.update"
#: Threads drawing cards, half the default slots: enough that twenty rooms' cards keep up
#: with their posts at Slack's round trip; under pressure the edit budget is the bound.
CARD_THREADS = 8
#: A failed edit (a 5xx, a refusal) is tried again this often before the next event's turn.
TRIES = 4
#: How long an idle drawer sleeps before it looks again (a card owed wakes it sooner).
IDLE_WAIT = 5.0
#: The longest a card leaves the edit budget's turns to the deliveries' own edits (a
#: message in a thread edited over): past it, the card takes the next turn.
YIELD_CAP = 60.0

#: How often the stage looks in the book for cards owed that no drawer is drawing: one owed
#: unchanged across two looks is drawn here (a drawer that holds a card draws it in seconds).
RESCAN_EVERY = 60.0

#: A card's place: (work item, channel).
Key = tuple[str, str]


def card(thread: ThreadBinding) -> Rendering:
    """The parent message showing ``thread``'s state."""
    return render_parent(thread.work_item, thread.state, thread.url)


def fingerprint(drawing: Rendering) -> str:
    """A short digest of a drawing: an edit to the same drawing is skipped."""
    raw = json.dumps([drawing.text, drawing.blocks], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _key(thread: ThreadBinding) -> Key:
    return thread.work_item, thread.channel


class Owed:
    """The cards owed an edit, each once, with when it is due (thread-safe).

    A card owed again before it is drawn keeps its place (that is the coalescing); one
    being drawn is handed to no other drawer, and if owed again meanwhile it is drawn
    again after.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._due: dict[Key, float] = {}
        self._busy: set[Key] = set()
        self._tries: dict[Key, int] = {}
        self._since: dict[Key, float] = {}  # when each card was first owed, until drawn
        self._closed = False

    def add(self, key: Key, at: float, *, fresh: bool = False) -> None:
        """Owe ``key`` an edit from ``at`` on (the earlier, if already owed); ``fresh``: a
        new state to show, so its failed tries start again."""
        with self._changed:
            self._due[key] = min(self._due.get(key, at), at)
            self._since.setdefault(key, at)
            if fresh:
                self._tries.pop(key, None)
            self._changed.notify()

    def add_unheld(self, key: Key, at: float) -> bool:
        """Owe ``key`` from ``at`` unless it is owed or being drawn here already (its own
        wait, a retry's backoff, stands); whether it was added."""
        with self._changed:
            if key in self._due or key in self._busy:
                return False
            self._due[key] = at
            self._since.setdefault(key, at)
            self._changed.notify()
            return True

    def failed(self, key: Key) -> int:
        """One more failed try for ``key``; how many so far."""
        with self._changed:
            self._tries[key] = self._tries.get(key, 0) + 1
            return self._tries[key]

    def settled(self, key: Key) -> None:
        """``key`` is drawn, or given up: its tries are forgotten."""
        with self._changed:
            self._tries.pop(key, None)
            self._since.pop(key, None)

    def waited(self, now: float) -> float:
        """How long the card owed the longest has been owed (0.0: none)."""
        with self._changed:
            return max(0.0, now - min(self._since.values(), default=now))

    def take(self, now: float) -> Key | None:
        """The longest owed card due by ``now`` that no drawer holds, now held; or None."""
        with self._changed:
            free = (k for k, at in self._due.items() if at <= now and k not in self._busy)
            key = next(free, None)
            if key is not None:
                del self._due[key]
                self._busy.add(key)
            return key

    def done(self, key: Key) -> None:
        with self._changed:
            self._busy.discard(key)
            self._changed.notify()

    def wait_due(self, now: Callable[[], float], most: float) -> bool:
        """Wait (at most ``most`` seconds) until a card is due; False if none, or closed."""
        deadline = time.monotonic() + most
        with self._changed:
            while not self._closed:
                free = (at for k, at in self._due.items() if k not in self._busy)
                soonest = min(free, default=None)
                at = now()
                if soonest is not None and soonest <= at:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left if soonest is None else min(left, soonest - at))
            return False

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def __len__(self) -> int:
        """Cards owed an edit, those being drawn included."""
        with self._changed:
            return len(self._due.keys() | self._busy)


class Cards:
    """Owes parents their latest state, and draws them on ``threads`` threads of its own."""

    def __init__(
        self,
        transport: SlackTransport,
        book: BindingBook,
        *,
        threads: int = CARD_THREADS,
        clock: Callable[[], float] = time.monotonic,
        name: str = "theloop-cards",
    ) -> None:
        self._slack, self._book, self._clock = transport, book, clock
        self._owed = Owed()
        self._stop = threading.Event()
        self._turn = threading.Lock()  # one drawer at a time waits for the budget's turn
        self._looked = threading.Lock()  # one drawer at a time looks in the book
        self._next_look = clock() + RESCAN_EVERY
        self._seen_owed: dict[Key, tuple[str, str]] = {}  # owed at the last look: state, url
        self._threads = [
            threading.Thread(target=self._run, name=f"{name}-{n + 1}", daemon=True)
            for n in range(threads)
        ]

    # -- the deliveries' side ------------------------------------------------------------

    def want(self, thread: ThreadBinding, state: str, url: str) -> None:
        """``thread``'s parent is to show ``state``: recorded in the book and owed, unless
        the parent shows that already. Returns at once: the drawing is the stage's."""
        wanted = replace(thread, state=state, url=url)
        if not thread.dirty and fingerprint(card(wanted)) == thread.drawn:
            return
        if self._book.want(thread, state, url):
            self._owed.add(_key(thread), self._clock(), fresh=True)

    @property
    def owed(self) -> int:
        """How many cards wait for their edit or are being drawn."""
        return len(self._owed)

    # -- the stage -----------------------------------------------------------------------

    def start(self) -> None:
        """Owe every card a crash or a stop left undrawn, then start drawing."""
        self.recover()
        for thread in self._threads:
            thread.start()

    def recover(self) -> int:
        """Owe each card the book says is not drawn yet; how many."""
        try:
            owed = [_key(t) for t in self._book.threads() if t.dirty]
        except Exception:  # storage away: those cards wait for their work items' next events
            log.exception("could not read which parents are owed a redraw")
            return 0
        for key in owed:
            self._owed.add(key, self._clock())
        return len(owed)

    def rescan(self) -> int:
        """Owe each card the book has owed, showing the same state, since the last look and
        that no drawer here holds: no one is drawing it. How many."""
        try:
            owed = {_key(t): (t.state, t.url) for t in self._book.threads() if t.dirty}
        except Exception:  # storage away: looked at again next time
            log.exception("could not read which parents are owed a redraw")
            return 0
        stuck = [key for key, shown in owed.items() if self._seen_owed.get(key) == shown]
        self._seen_owed = owed
        now = self._clock()
        return sum(self._owed.add_unheld(key, now) for key in stuck)

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop drawing; False if a drawer is still in a call. What is owed stays in the
        book and is drawn after the next start."""
        deadline = time.monotonic() + timeout
        self._stop.set()
        self._owed.close()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self._threads)

    def step(self) -> bool:
        """Draw one card owed and due, on the caller's thread, whatever the budget says
        (Slack's answer still counts); False when none was due."""
        key = self._owed.take(self._clock())
        if key is None:
            return False
        self._draw_held(key)
        return True

    def draw_due(self) -> int:
        """Draw every card owed and due, on the caller's thread; how many were drawn."""
        drawn = 0
        while self.step():
            drawn += 1
        return drawn

    def _run(self) -> None:
        while not self._stop.is_set():
            self._rescan_when_due()
            with self._turn:
                key = self._next()
            if key is not None:
                self._draw_held(key)

    def _rescan_when_due(self) -> None:
        if not self._looked.acquire(blocking=False):
            return  # another drawer is looking
        try:
            if self._clock() >= self._next_look:
                self._next_look = self._clock() + RESCAN_EVERY
                self.rescan()
        finally:
            self._looked.release()

    def _next(self) -> Key | None:
        """The next card due once the edit budget has a turn; None while idle or stopping."""
        if not self._owed.wait_due(self._clock, IDLE_WAIT) or self._stop.is_set():
            return None
        turn = self.turn()
        if turn > 0:  # (looked at again now and then: a clock may jump, a hold may end)
            self._stop.wait(min(turn, IDLE_WAIT))
            return None
        return self._owed.take(self._clock())

    def turn(self) -> float:
        """Seconds until the stage may take a turn of the edit budget (0.0: now). Turns a
        delivery was refused are left to it (its post waits behind that edit; a card does
        not), unless a card has waited :data:`YIELD_CAP` already."""
        limits = self._slack.limits
        turn = limits.wait(EDIT)
        if self._owed.waited(self._clock()) < YIELD_CAP:
            turn = max(turn, limits.wanted(EDIT))
        return turn

    def _draw_held(self, key: Key) -> None:
        try:
            while (pause := self._draw(key)) is not None:
                if self._stop.wait(min(pause, IDLE_WAIT)):
                    break  # stopping: the card stays owed in the book, for the next start
        except Exception:  # a bug or the storage away: the card stays owed, tried later
            log.exception("redrawing the parent of %s in %s failed", *key)
            self._failed(key, "an error")
        finally:
            self._owed.done(key)

    def _draw(self, key: Key) -> float | None:
        """Edit the parent to show the state the book says it is to show, read now; the
        seconds to wait before this thread tries it again, or None when done with it."""
        thread = self._book.binding(*key)
        if thread is None or not thread.dirty:
            self._owed.settled(key)
            return None
        drawing = card(thread)
        drawn = fingerprint(drawing)
        if drawn == thread.drawn:  # a later event brought the card back to what it shows
            self._book.drew(thread, drawn)
            self._owed.settled(key)
            return None
        meta = metadata("parent", parent_key(thread.work_item), thread.work_item)
        response = self._slack.update_message(
            thread.channel, thread.ts, text=drawing.text, blocks=drawing.blocks, metadata=meta
        )
        if response.ok:
            self._book.drew(thread, drawn)
            self._owed.settled(key)
        elif response.kind == RATE_LIMITED:  # the budget's turn, not a failure
            pause = max(0.05, response.retry_after or 1.0)
            if not self._slack.limits.others_finding_out(EDIT):
                # After Slack's 429 this thread's next call finds out whether Slack takes
                # more, every other caller waiting for it: this thread makes it, after the wait.
                return pause
            self._owed.add(key, self._clock() + pause)
        elif response.kind == GONE:
            log.warning(
                "the parent of %s is gone (%s): the next event opens a new one",
                thread.work_item,
                response.error,
            )
            self._book.forget(thread.work_item, thread.channel, thread.ts)
            self._owed.settled(key)
        else:
            self._failed(key, response.error)
        return None

    def _failed(self, key: Key, error: str) -> None:
        """Try ``key`` again after a backoff; after :data:`TRIES`, the next event's turn
        (never a new parent)."""
        tries = self._owed.failed(key)
        if tries < TRIES:
            log.info("could not update the parent of %s (%s): trying again", key[0], error)
            self._owed.add(key, self._clock() + backoff(tries))
            return
        log.warning("could not update the parent of %s (%s): the next event tries", key[0], error)
        self._owed.settled(key)
