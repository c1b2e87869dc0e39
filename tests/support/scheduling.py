"""How pytest-xdist hands the tests to its workers: one test at a time to whichever worker is
free, except the tests of a module sharing one costly setup (a module-scoped bot or
virtualenv), which all go to one worker — else each worker would build that setup again.

pytest-xdist's own way to say so (``xdist_group`` marks, ``--dist loadgroup``) renames the
tests to group them, which pytest 9 no longer lets a plugin do: the grouping is silently lost.
So the grouping is a scheduler of our own, on xdist's hook: its by-scope scheduler, with a
scope of one test except in the modules of :data:`TOGETHER`, larger scopes going first.

The longest tests are handed out first (:data:`FIRST`, put at the head of the collection by
:func:`longest_first`): a worker that draws one last would run it alone while the others sit
idle — a run on two cores ended with the corpus' digest checks (150-176 s each) after every
end-to-end test had finished.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling

#: The test modules whose tests share a module-scoped setup (tests/unit/test_test_scheduling.py
#: checks that every such module is here, and that each one here exists).
TOGETHER = frozenset(
    {
        "tests/contract/test_loopside_package.py",  # a virtualenv with loopside installed
        "tests/e2e/test_sender_bot.py",  # one errbot process
        "tests/e2e/test_webhook_http.py",  # one errbot process
    }
)


#: Node id prefixes of the tests that take longest (make test's "slowest 25" lists them).
FIRST = (
    "tests/unit/digest/test_digest_properties.py::test_corpus_",
    "tests/unit/digest/test_digest_properties.py::test_long_documents_",
    "tests/unit/digest/test_digest_document.py::test_block_rules_",
    "tests/unit/digest/test_digest_abuse.py::test_a1_crafted_inputs_read_lazily_equal_read_whole",
    "tests/e2e/test_catchup_e2e.py::",
    "tests/e2e/test_room_e2e.py::",
)


def longest_first(items: list[Any]) -> None:
    """Reorder ``items`` in place: those of :data:`FIRST` ahead, in its order."""

    def rank(item: Any) -> int:
        found = [i for i, prefix in enumerate(FIRST) if item.nodeid.startswith(prefix)]
        return found[0] if found else len(FIRST)

    items.sort(key=rank)


class OneSetupOneWorker(LoadScopeScheduling):
    """xdist's ``load``, but a module of :data:`TOGETHER` goes whole to one worker."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return module if module in TOGETHER else nodeid
