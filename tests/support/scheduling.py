"""How pytest-xdist hands the tests to its workers: one test at a time to whichever worker is
free, except the tests of a module sharing one costly setup (a module-scoped bot or
virtualenv), which all go to one worker — else each worker would build that setup again.

pytest-xdist's own way to say so (``xdist_group`` marks, ``--dist loadgroup``) renames the
tests to group them, which pytest 9 no longer lets a plugin do: the grouping is silently lost.
So the grouping is a scheduler of our own, on xdist's hook: its by-scope scheduler, with a
scope of one test except in the modules of :data:`TOGETHER`, larger scopes going first.
"""

from __future__ import annotations

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


class OneSetupOneWorker(LoadScopeScheduling):
    """xdist's ``load``, but a module of :data:`TOGETHER` goes whole to one worker."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        return module if module in TOGETHER else nodeid
