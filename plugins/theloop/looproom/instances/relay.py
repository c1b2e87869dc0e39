"""The relay's calls to the-loop, each to the control plane of the instance that owns
the work item: a reply, a skip, a record delivered to the session, and the look-up of a
reply that may have landed (in that instance's event log, never another's).

A work item no instance owns yet is routed by who caused it, when an instance registered
them (``unowned``: :mod:`looproom.instances.actors`); else it waits (its calls are retried)
rather than being sent to a control plane that is not its own: an instance's first event
about it makes it owned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from looproom.attach.slack_files import FileStore
from looproom.durable.outcome import Outcome, RetryLater
from looproom.instances.owners import Owners
from looproom.relay.reply_lookup import ReplyBook
from looproom.relay.sinks import LoopSink
from looproom.relay.standing import PREFIX as STANDING_PREFIX
from looproom.relay.standing import SAY_PATH
from looproom.settings.instances import Instance

#: ``sink_for(instance, files, book)``: the control plane of one instance.
SinkFor = Callable[[Instance, "FileStore | None", "ReplyBook | None"], Any]


def _loop_sink(instance: Instance, files: FileStore | None, book: ReplyBook | None) -> LoopSink:
    return LoopSink(instance.api, files=files, token=instance.token, book=book)


def work_item_of(target: Mapping[str, Any]) -> str:
    """The work item a control-plane call is about (a reply's ``ref``, a skip's
    ``workItem``; words to a standing session: ``standing:<name>``, which its instance
    owns from its first event about it)."""
    request = target.get("json") or {}
    if target.get("path") == SAY_PATH and request.get("name"):
        return f"{STANDING_PREFIX}{request['name']}"
    return str(request.get("ref") or request.get("workItem") or "")


class RoutedLoop:
    """:class:`~looproom.relay.sinks.ControlPlane` over many instances."""

    def __init__(
        self,
        instances: Sequence[Instance],
        owners: Owners,
        files: FileStore | None = None,
        *,
        sink_for: SinkFor = _loop_sink,
        book: ReplyBook | None = None,
        unowned: Callable[[str], Instance | None] = lambda _work_item: None,
    ) -> None:
        """``unowned(work item)``: the instance a work item nobody owns goes to, if any."""
        self._owners, self._unowned = owners, unowned
        self._sinks = {instance.name: sink_for(instance, files, book) for instance in instances}

    def send(
        self, target: Mapping[str, Any], *, key: str, unsure: bool = False, first_try: float = 0.0
    ) -> Outcome:
        work_item = work_item_of(target)
        owner = self._owners.owner(work_item, used=True)
        if owner is None and work_item:
            owner = self._unowned(work_item)
        if owner is None:
            return RetryLater(
                f"no the-loop instance owns {work_item or 'this work item'} yet: waiting for "
                "one to send an event about it (or for instances: to name its repository, or "
                "the actors of one to name who caused it)"
            )
        return self._sinks[owner.name].send(target, key=key, unsure=unsure, first_try=first_try)
