"""A kickoff issue's title and body, in the form of the-loop's ``channels.bodies.issue_body``.

The member's words (hidden HTML comments removed: a forged envelope or marker), a rule,
an attribution line, then the envelope ``<!-- the-loop:event {…"type":"work-item.create"} -->``
— and no self-authored marker, so the-loop's ingress arms the issue as a person's request
rather than dropping it as its own. After the envelope, a hidden marker names the request
(its Slack channel and message, or the command's trigger), so the issue is found again
rather than opened twice (:func:`marker`).
"""

from __future__ import annotations

from looproom.relay.forms import clean_words, envelope, who

EVENT = "work-item.create"
#: GitHub's limit on an issue title is 256 characters; a first line longer than this is cut.
TITLE_LIMIT = 120


def title_of(words: str) -> str:
    """The issue's title: the first non-empty line, cut at a word near the limit."""
    first = next((line.strip() for line in clean_words(words).splitlines() if line.strip()), "")
    if len(first) <= TITLE_LIMIT:
        return first
    cut = first[: TITLE_LIMIT - 1].rsplit(" ", 1)[0] or first[: TITLE_LIMIT - 1]
    return cut + "…"


def issue_body(words: str, member: str, login: str, at: str) -> str:
    """The issue's body: the words, the attribution, the envelope."""
    said = clean_words(words).rstrip()
    attribution = f"🗣️ _Opened from the **slack** channel by {who(member, login)} through the-loop._"
    return f"{said}\n\n---\n\n{attribution}\n\n{envelope(EVENT, member, login, at)}\n"


def marker(key: str) -> str:
    """The hidden line that names a kickoff request in its issue's body. ``key`` is our own
    (``message:<channel>:<ts>``, ``slash:<channel>:<trigger>``): ids, never a person's words."""
    safe = "".join(c for c in key if c.isalnum() or c in ":._-").replace("--", "-")
    return f"<!-- theloop:kickoff {safe} -->"


def marked(body: str, key: str) -> str:
    """``body`` with its request's marker after the envelope, where the-loop reads nothing."""
    return f"{body.rstrip()}\n{marker(key)}\n"
