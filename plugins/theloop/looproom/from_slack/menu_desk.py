"""Shortcuts and forms: the same acts as typed words, reached from Slack's menus.

**Add as the-loop context** is ``record-context`` said in the message's thread. **Record a
decision** opens a form (kind, decision, rationale); its submission is ``record-decision``.
The gate's **Request changes** button opens a form asking the reason; its submission is
exactly ``changes <why>`` typed in the gate's thread. Each goes through the desk like the
typed words — the same order, the same grant asked, the same record — and acts once: a
shortcut is keyed by its trigger, a form by its view, so Slack delivering either twice
records it once. A context request is stored and Slack answered before its thread is read
(``looproom.from_slack.context_requests``). Each shortcut and form is kept once for
the-loop's event log (``channel.shortcut_received``, ``channel.view_submitted``), before
what it does is judged — as the-loop's own room writes them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any

from looproom import verb_names
from looproom.decide import grammar, kinds
from looproom.decide.authorization import AccessPolicy, may, refusal_text
from looproom.decide.desk import Desk, Taken
from looproom.decide.judging import Received, Where
from looproom.decide.presses import Press
from looproom.from_slack import modals, shortcuts
from looproom.from_slack.context_requests import ContextRequest, ContextRequests
from looproom.room.memory import Memory
from looproom.settings.grants import DECISION_RECORD
from looproom.slack.queued_speaker import quietly

log = logging.getLogger(__name__)

#: ``(trigger_id, view)`` → whether Slack opened the form (``views.open``).
OpenView = Callable[[str, Mapping[str, Any]], bool]


class WhyForm:
    """The desk's ``ask_why`` on Slack: a **Request changes** press without its reason
    opens the form that asks it. Built before the desk, which it is handed to."""

    def __init__(self, memory: Memory, open_view: OpenView) -> None:
        self._memory, self._open = memory, open_view

    def __call__(self, press: Press, payload: Mapping[str, Any]) -> bool:
        """A **Request changes** press that only lacks its reason: open the form asking it.
        False when no form could be opened (then the member is told to type it)."""
        trigger = str(payload.get("trigger_id") or "")
        work_item = self._memory.locate(press.channel, press.ts)
        gate = self._memory.get(work_item).gate if work_item else None
        if not trigger or gate is None:
            return False
        opened = modals.FormOrigin(press.channel, press.thread_ts or press.ts, press.ts)
        return self._open(trigger, modals.changes_view(opened, gate.node))


class MenuDesk:
    """Message shortcuts and form submissions, over Socket Mode or signed HTTP alike."""

    def __init__(
        self,
        desk: Desk,
        open_view: OpenView,
        policy: Callable[[], AccessPolicy],
        store: MutableMapping[str, Any] | None = None,
    ) -> None:
        """``store`` keeps the context requests between Slack's answer and their record."""
        self._desk, self._open, self._policy = desk, open_view, policy
        self._contexts = ContextRequests(store if store is not None else {})

    def interactive(self, payload: Mapping[str, Any], taken: Taken = lambda: None) -> bool:
        """Act on a shortcut or a submitted form; False when ``payload`` is neither.
        ``taken`` is told when Slack may hear it was received: once a context request is
        stored, before its thread is read; before a form is opened."""
        shortcut = shortcuts.read(payload)
        if shortcut is not None:
            item = self._desk.where(shortcut.channel, shortcut.thread).work_item or ""
            self._desk.records.shortcut_received(
                shortcut.trigger_id, item, shortcut.member, shortcut.callback_id
            )
            self._shortcut(shortcut, taken)
            return True
        submitted = modals.read_submission(payload)
        if submitted is not None:
            opened = submitted.opened
            item = self._desk.where(opened.channel, opened.thread).work_item or ""
            kind = (
                submitted.values.get(modals.KIND, "")
                if submitted.form == modals.DECISION_VIEW
                else kinds.CHANGES
            )
            self._desk.records.view_submitted(submitted.view_id, item, submitted.member, kind)
            self._submitted(submitted)
            return True
        return False

    def _shortcut(self, shortcut: shortcuts.Shortcut, taken: Taken) -> None:
        if shortcut.callback_id == shortcuts.RECORD_CONTEXT:
            where = self._desk.where(shortcut.channel, shortcut.thread)
            asked = ContextRequest(
                f"shortcut:{shortcut.trigger_id}",
                shortcut.member,
                shortcut.channel,
                shortcut.thread,
                work_item=where.work_item,
                thread_bound=where.thread_bound,
            )
            fresh = self._contexts.take(asked)
            taken()  # stored: Slack hears before the thread is read, which may wait on a 429
            if fresh:
                self._record_context(asked)
            return
        taken()  # nothing to store: Slack hears before the form's call, which may be slow
        refusal = self._refusal(shortcut)
        if refusal:
            quietly(
                self._desk.room.tell, shortcut.channel, shortcut.member, refusal, shortcut.thread
            )
            return
        opened = modals.FormOrigin(shortcut.channel, shortcut.thread, shortcut.ts)
        if not self._open(shortcut.trigger_id, modals.decision_view(opened, shortcut.text)):
            log.warning("the decision form could not be opened for %s", shortcut.member)

    def later(self, said: Received, where: Where) -> bool:
        """A ``record-context`` typed: stored, then its thread read and recorded on a thread
        of its own, so the message's event is answered first. Always True: a redelivery
        was taken already."""
        asked = ContextRequest(
            said.origin or f"{said.channel}:{said.ts}",
            said.member,
            said.channel,
            said.thread_ts,
            said.ts,
            said.text,
            said.addressed,
            where.work_item,
            where.repository,
            where.thread_bound,
        )
        if self._contexts.take(asked):
            threading.Thread(
                target=self._resumed, args=(asked,), name="theloop-context", daemon=True
            ).start()
        return True

    def resume(self) -> None:
        """Record the threads asked for before Slack was answered and not recorded since
        (the bot stopped between the two)."""
        for asked in self._contexts.waiting():
            self._resumed(asked)

    def _resumed(self, asked: ContextRequest) -> None:
        try:
            self._record_context(asked)
        except Exception:  # left waiting: recorded at the next start
            log.exception("a context request of %s could not be recorded", asked.member)

    def contexts_waiting(self) -> int:
        """How many "Add as the-loop context" requests are stored and not yet recorded."""
        return len(self._contexts.waiting())

    def _record_context(self, asked: ContextRequest) -> None:
        said = Received(
            asked.member,
            asked.text,
            asked.channel,
            asked.ts,
            asked.thread,
            addressed=asked.addressed,
            origin=asked.origin,
        )
        where = Where(asked.work_item, asked.repository, thread_bound=asked.thread_bound)
        self._desk.said(said, where, read_now=True)
        self._contexts.done(asked.origin)

    def _refusal(self, shortcut: shortcuts.Shortcut) -> str:
        """Why a decision may not be recorded from here — before a form is opened for it."""
        policy = self._policy()
        if not may(shortcut.member, DECISION_RECORD, policy):
            return refusal_text(shortcut.member, DECISION_RECORD, policy)
        if not self._desk.where(shortcut.channel, shortcut.thread).work_item:
            return "This message is not in a work item's thread, so there is nothing to record on."
        return ""

    def _submitted(self, submitted: modals.Submitted) -> None:
        values = submitted.values
        if submitted.form == modals.DECISION_VIEW:
            kind, what, why = (
                values.get(name, "") for name in (modals.KIND, modals.WHAT, modals.WHY)
            )
            reason = f" — why: {why}" if why.strip() else ""
            text = f"{verb_names.RECORD_DECISION} {kind + ': ' if kind else ''}{what}{reason}"
            parsed: grammar.Parsed = grammar.Command(
                verb_names.RECORD_DECISION, items=(kind, why), words=what
            )
        else:
            why = values.get(modals.WHY, "")
            text, parsed = f"{kinds.CHANGES} {why}", grammar.Command(kinds.CHANGES, words=why)
        opened = submitted.opened
        said = Received(
            submitted.member,
            text,
            opened.channel,
            "",
            opened.thread,
            addressed=True,
            origin=f"view:{submitted.view_id}",
            parsed=parsed,
        )
        self._desk.said(said, self._desk.where(opened.channel, opened.thread))
