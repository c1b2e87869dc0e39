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

#: One or two ``/``-separated segments, each opening alphanumeric, then ``:``, on the first
#: line — a grammar that cannot hold ``../`` or a scheme's ``//``.
_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_PREFIX = re.compile(rf"^[ \t]*(?P<repo>{_SEGMENT}(?:/{_SEGMENT})?)[ \t]*:[ \t]*(?P<rest>.*)$")


def split(words: str, repos: tuple[str, ...]) -> tuple[str, str, str]:
    """``(repository, words without the prefix, refusal)`` — the repository ``""`` when
    the words name none; ``refusal`` set when they name one the room does not open in,
    or nothing is left once the prefix is read."""
    lines = (words or "").strip().splitlines() or [""]
    found = _PREFIX.match(lines[0])
    if found is None:
        return "", words, ""
    named = found["repo"]
    if "/" in named:
        matches = [repo for repo in repos if repo.lower() == named.lower()]
    else:
        matches = [repo for repo in repos if repo.rsplit("/", 1)[-1].lower() == named.lower()]
    if len(matches) != 1:
        if "/" not in named:
            return "", words, ""  # "Bug: the teardown" — a title, not a repository
        return (
            "",
            words,
            (
                f"`{named}` is not a repository this room opens work items in "
                f"({', '.join(f'`{r}`' for r in repos)}), so nothing was opened."
            ),
        )
    rest = "\n".join([found["rest"].rstrip(), *lines[1:]]).strip()
    if not rest:
        return "", words, "Say what the new work item is after the repository's name."
    return matches[0], rest, ""
