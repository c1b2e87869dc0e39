"""``<repo>: <title>`` — a kickoff that names its repository in its first words.

In a room that opens work items in several repositories, a first line that opens with one
of them and a colon — ``acme/web: Flaky teardown`` or just ``web: Flaky teardown`` when
one allowed repository has that name — opens the work item there in one step, with no
menu, as the-loop's own kickoff grammar reads it. A first line that opens with a word and
a colon naming none of them (``Bug: the teardown``) is an ordinary title; one that names a
repository the room does not open work items in is refused, so nothing is ever opened
where it was not configured.
"""

from __future__ import annotations

import re

from looproom import workitem

_PREFIX = re.compile(r"^\s*`?(?P<repo>[A-Za-z0-9][A-Za-z0-9._/-]*)`?\s*:\s+(?P<rest>\S.*)$", re.S)


def split(words: str, repos: tuple[str, ...]) -> tuple[str, str, str]:
    """``(repository, words without the prefix, refusal)`` — the repository ``""`` when
    the words name none; ``refusal`` set when they name one the room does not open in."""
    found = _PREFIX.match(words or "")
    if found is None:
        return "", words, ""
    named, rest = found["repo"], found["rest"]
    allowed = {repo.lower(): repo for repo in repos}
    if "/" in named:
        repo = allowed.get(named.lower(), "")
        if repo:
            return repo, rest, ""
        if workitem.is_repository(named):
            return (
                "",
                words,
                (
                    f"`{named}` is not a repository this room opens work items in "
                    f"({', '.join(f'`{r}`' for r in repos)}), so nothing was opened."
                ),
            )
        return "", words, ""
    by_name = [repo for repo in repos if repo.rsplit("/", 1)[-1].lower() == named.lower()]
    return (by_name[0], rest, "") if len(by_name) == 1 else ("", words, "")
