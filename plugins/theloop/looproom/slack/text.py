"""What Slack needs of any text we draw: escaped, links safe, mentions inert.

The one place for it, so the digest, the room's messages and the controls agree. The
escaping and link rules are the digest's own (``looproom.digest.escape``), exposed here so
no other module reaches into the digest's private parts; what the digest does not need —
mentions made readable but inert, a URL a button may carry — is kept here beside them.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from looproom.digest import escape

__all__ = ["URL_LIMIT", "button_url", "defang", "escape", "neutralise"]

URL_LIMIT = 3000  # a button's url

_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|([^>]*))?>")
_SPECIAL_MENTION = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>")
_GROUP_MENTION = re.compile(r"<!subteam\^([A-Z0-9]+)(?:\|([^>]*))?>")
_BARE_BROADCAST = re.compile(r"(?<![\w@])@(here|channel|everyone)\b")


def neutralise(text: str) -> str:
    """Mentions and broadcasts made inert, still readable: ``<@U…|alice>`` → ``@alice``,
    ``<!here>`` and a bare ``@here`` → ``@here`` with a word joiner after the ``@``.

    Used on text before it is escaped (so the reader sees ``@here``, not entity soup) and on
    plain-text output, where the word joiner keeps any chat from pinging.
    """
    text = _USER_MENTION.sub(lambda m: "@" + (m.group(2) or m.group(1)), text)
    text = _SPECIAL_MENTION.sub(lambda m: "@" + m.group(1), text)
    text = _GROUP_MENTION.sub(lambda m: m.group(2) or "@" + m.group(1), text)
    return _BARE_BROADCAST.sub(lambda m: "@\u2060" + m.group(1), text)


def button_url(url: str) -> str:
    """``url`` when it is an http(s) URL a button may carry (and a ``<url|label>`` link may
    show as it is), else ``""``."""
    parts = urlsplit(url.strip())
    ok = parts.scheme in ("http", "https") and parts.netloc and len(url) <= URL_LIMIT
    return url.strip() if ok and not any(c in url for c in "<>| \n") else ""


def defang(text: str, limit: int = 200) -> str:
    """Producer or peer text as inert display text, one line, at most ``limit`` characters:
    no mention, link or code-span break-out (for ``!theloop status``, ``queue``, ``why``
    and ``records``). Errbot sends with ``link_names``, which makes a bare ``@channel`` or
    ``@alice`` a ping, so every ``@`` is followed by a word joiner: read the same, inert."""
    text = text.replace("<", "‹").replace(">", "›").replace("`", "'").replace("\n", " ")
    text = text.replace("@", "@\u2060")
    return text if len(text) <= limit else text[: limit - 1] + "…"
